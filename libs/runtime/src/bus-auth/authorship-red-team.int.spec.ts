import { randomUUID } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import type { EventDraft, EventEnvelope, QuarantineRecord } from '@writ/contracts';
import { generateEd25519Key, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore, eventSealer, sealEvent, type EventSealer } from '@writ/eventstore';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrincipalRegistry, registerServicePrincipal } from '../principal-registry.js';
import { busLayout, servicePermissions, userInbox, type BusLayout, type WritService } from './bus-permissions.js';
import { NatsAuthority } from './nats-authority.js';

/**
 * The red team on authorship: every task subject is shared by the services,
 * so the bus lets a stolen service credential append any event type there.
 * Each service here is a real connection with its production permissions
 * (`servicePermissions`), its own sealing key registered on its own principal
 * subject, and an event store that checks authorship as every service's does.
 * Forgeries are properly hash-chained onto the task; each is quarantined
 * `QUARANTINE_AUTHOR_UNPROVEN`, no reader hands it on, and the task goes on.
 */
const home = process.env['WRIT_HOME'];
const root = uniqueName('auth');
const stream = `${root.toUpperCase()}_EVENTS`;
const layout: BusLayout = busLayout({ root, eventsPrefix: `${root}.evt`, streams: { events: stream, ingress: `${root.toUpperCase()}_INGRESS`, commands: `${root.toUpperCase()}_COMMANDS`, dlq: `${root.toUpperCase()}_DLQ` } });
const storeConfig = { stream, subjectPrefix: layout.eventsPrefix, maxBytes: 8 * 1024 * 1024 };
const SERVICES: readonly WritService[] = ['ingress', 'orchestrator', 'policy', 'approval', 'executor', 'receipt'];

type Party = { readonly nc: NatsConnection; readonly store: EventStore; readonly key: Ed25519SigningKey; readonly sealer: EventSealer; readonly principalId: string };

let authority: NatsAuthority;
let operator: NatsConnection;
/** What a reader (here the projection's credential, which reads everything) makes of the log. */
let reader: EventStore;
let readerNc: NatsConnection;
const parties = new Map<WritService, Party>();
const opened: NatsConnection[] = [];
const quarantined: QuarantineRecord[] = [];

async function serviceConnection(service: WritService): Promise<NatsConnection> {
  const creds = await authority.writUserCreds(`svc-${service}`, servicePermissions(service, layout));
  const nc = await connect({ servers: NATS_URL, name: `svc-${service}`, authenticator: credsAuthenticator(new TextEncoder().encode(creds)), inboxPrefix: userInbox(`svc-${service}`), reconnect: false });
  opened.push(nc);
  return nc;
}

/** A service as it starts: its credential, its store checking authorship, its key registered on its own subject and sealing what it appends. */
async function startService(service: WritService): Promise<Party> {
  const nc = await serviceConnection(service);
  const store = await EventStore.open(nc, storeConfig, { authorship: { servicePrincipals: layout.servicePrincipals } });
  const principalId = layout.servicePrincipals[service];
  const key = await generateEd25519Key({ kid: `${principalId}-${randomUUID().slice(0, 8)}` });
  const sealer = eventSealer(principalId, key);
  store.sealWith(sealer);
  await registerServicePrincipal(store, { principalId, displayName: principalId, key });
  return { nc, store, key, sealer, principalId };
}

const party = (service: WritService): Party => parties.get(service)!;

function draft(taskId: string, eventType: string, actorId: string): EventDraft {
  return {
    event_id: `evt-${randomUUID()}`,
    schema_version: 1,
    event_type: eventType,
    entity_type: 'task',
    entity_id: taskId,
    occurred_at: new Date().toISOString(),
    actor_type: 'service',
    actor_id: actorId,
    payload: { forged_or_not: eventType },
    causation_id: null,
    correlation_id: taskId,
  };
}

/** `service` appends `eventType` to the task through its own store (sealed with its own key), at the head its store reads. */
async function append(service: WritService, taskId: string, eventType: string): Promise<void> {
  const { store, principalId } = party(service);
  const head = await store.head(taskId);
  await store.append(taskId, [draft(taskId, eventType, principalId)], head.taskSeq);
}

/**
 * With `thief`'s credential, a raw publish of `eventType` chained onto the
 * task's true head, sealed as `seal` says: not at all, with the thief's own
 * key, or claiming another service's principal and kid over the thief's
 * signature. Returns the stream sequence the server stored it at.
 */
async function forge(thief: WritService, taskId: string, eventType: string, seal: 'none' | 'own' | { claim: WritService }): Promise<number> {
  const head = await reader.head(taskId);
  const event: EventEnvelope = sealEvent(draft(taskId, eventType, layout.servicePrincipals[seal === 'none' || seal === 'own' ? thief : seal.claim]), taskId, head);
  if (seal !== 'none') {
    const signed = await party(thief).sealer.seal(event.hash);
    event.seal = seal === 'own' ? signed : { ...signed, principal_id: party(seal.claim).principalId, kid: party(seal.claim).key.kid };
  }
  const ack = await jetstream(party(thief).nc).publish(`${layout.eventsPrefix}.task.${taskId}`, JSON.stringify(event), { msgID: randomUUID() });
  return ack.seq;
}

const typesOf = async (store: EventStore, taskId: string) => (await store.read(taskId)).map(({ event }) => event.event_type);

beforeAll(async () => {
  if (home === undefined) throw new Error('WRIT_HOME is not set: run through npm test (writ init made var/writ)');
  authority = await NatsAuthority.load(home);
  operator = await connectTestNats('authorship-red-team-operator');
  // The operator creates the log (services may not reconfigure it); each service then opens it as it is.
  await EventStore.open(operator, storeConfig);
  for (const service of SERVICES) parties.set(service, await startService(service));
  readerNc = await serviceConnection('projection');
  reader = await EventStore.open(readerNc, storeConfig, { authorship: { servicePrincipals: layout.servicePrincipals } });
  reader.onQuarantine((record) => quarantined.push(record));
});

afterAll(async () => {
  for (const nc of opened) await nc.close().catch(() => undefined);
  await deleteStreams(operator, stream);
  await operator.close();
});

describe('every event\'s author is provable', () => {
  it("given the policy service's stolen credential, when it appends a chained grant.issued, execution.completed and receipt.issued to a task (unsealed, sealed with policy's key, sealed claiming another service's kid), then the server stores them, every reader quarantines them AUTHOR_UNPROVEN, none is read as an event, and the task completes", async () => {
    const taskId = `task-${randomUUID()}`;
    await append('ingress', taskId, 'task.created');
    await append('orchestrator', taskId, 'attempt.awaiting_policy');
    await append('policy', taskId, 'policy.evaluated');

    const forged = [
      await forge('policy', taskId, 'grant.issued', 'none'),
      await forge('policy', taskId, 'grant.issued', 'own'),
      await forge('policy', taskId, 'grant.issued', { claim: 'approval' }),
      await forge('policy', taskId, 'execution.completed', 'own'),
      await forge('policy', taskId, 'execution.completed', { claim: 'executor' }),
      await forge('policy', taskId, 'receipt.issued', 'none'),
      await forge('policy', taskId, 'receipt.issued', { claim: 'receipt' }),
    ];
    // and its own event store refuses to write what the policy service may not author (nothing appended)
    await expect(append('policy', taskId, 'grant.issued')).rejects.toMatchObject({ code: 'EVENTSTORE_AUTHOR_NOT_ALLOWED' });

    // then the genuine services go on past the forgeries: their stores link onto the true head
    await append('approval', taskId, 'grant.issued');
    await append('executor', taskId, 'execution.completed');
    await append('receipt', taskId, 'receipt.issued');
    await append('orchestrator', taskId, 'task.completed');

    const genuine = ['task.created', 'attempt.awaiting_policy', 'policy.evaluated', 'grant.issued', 'execution.completed', 'receipt.issued', 'task.completed'];
    expect(await typesOf(reader, taskId)).toEqual(genuine);
    // every service reads the same chain (nothing forged is acted on)
    for (const service of SERVICES) expect(await typesOf(party(service).store, taskId), service).toEqual(genuine);
    const verification = await reader.verifyChain(taskId);
    expect(verification).toMatchObject({ ok: true, length: genuine.length });
    const unproven = verification.quarantined.filter((record) => record.reason === 'QUARANTINE_AUTHOR_UNPROVEN');
    expect(unproven).toHaveLength(forged.length);
    expect(unproven.map((record) => record.stream_seq)).toEqual(expect.arrayContaining(forged));
    expect(quarantined.filter((record) => forged.includes(record.stream_seq)).map((record) => record.reason)).toEqual(forged.map(() => 'QUARANTINE_AUTHOR_UNPROVEN'));
    // a replay from the start hands on the genuine events only
    const replayed: string[] = [];
    for await (const entry of reader.replayLog(1)) if (entry.kind === 'event' && entry.event.task_id === taskId) replayed.push(entry.event.event_type);
    expect(replayed).toEqual(genuine);
  });

  it("given the executor's stolen credential, when it appends a chained policy.evaluated (sealed with its key, or claiming policy's kid), then it is quarantined and the policy service's verdict is the one read", async () => {
    const taskId = `task-${randomUUID()}`;
    await append('ingress', taskId, 'task.created');
    const forged = [await forge('executor', taskId, 'policy.evaluated', 'own'), await forge('executor', taskId, 'policy.evaluated', { claim: 'policy' }), await forge('executor', taskId, 'policy.evaluated', 'none')];
    await append('policy', taskId, 'policy.evaluated');
    await append('orchestrator', taskId, 'task.completed');

    expect(await typesOf(reader, taskId)).toEqual(['task.created', 'policy.evaluated', 'task.completed']);
    const [, evaluated] = await reader.read(taskId);
    expect(evaluated!.event.seal?.principal_id).toBe(layout.servicePrincipals.policy);
    const entries = await Promise.all(forged.map((seq) => reader.entryAt(`${layout.eventsPrefix}.task.${taskId}`, seq)));
    expect(entries.map((entry) => (entry.kind === 'quarantined' ? entry.record.reason : entry.kind))).toEqual(forged.map(() => 'QUARANTINE_AUTHOR_UNPROVEN'));
  });

  it("given a stolen credential, when it chains a forged event far past the task's head, then the task is not bricked: the genuine next event is read", async () => {
    const taskId = `task-${randomUUID()}`;
    await append('ingress', taskId, 'task.created');
    const head = await reader.head(taskId);
    const far = sealEvent(draft(taskId, 'grant.issued', 'writ-approval'), taskId, { taskSeq: head.taskSeq + 5, hash: head.hash });
    await jetstream(party('policy').nc).publish(`${layout.eventsPrefix}.task.${taskId}`, JSON.stringify(far), { msgID: randomUUID() });
    await append('orchestrator', taskId, 'task.completed');
    expect(await typesOf(reader, taskId)).toEqual(['task.created', 'task.completed']);
  });

  it("given a store that does not check authorship, then the same forgery would be read as the task's event (what the seal check stops)", async () => {
    const taskId = `task-${randomUUID()}`;
    await append('ingress', taskId, 'task.created');
    await forge('policy', taskId, 'grant.issued', 'own');
    const unchecked = await EventStore.open(party('orchestrator').nc, storeConfig);
    expect(await typesOf(unchecked, taskId)).toEqual(['task.created', 'grant.issued']);
    expect(await typesOf(reader, taskId)).toEqual(['task.created']);
  });

  it("given an unsealed principal.registered of a director written with ingress's credential, then the principal registry never folds it, while ingress's sealed registration is", async () => {
    const forgedId = `dir-${randomUUID().slice(0, 8)}`;
    const genuineId = `dir-${randomUUID().slice(0, 8)}`;
    const directorKey = await generateEd25519Key({ kid: 'dir-k1' });
    const registration = (id: string): EventDraft => ({
      ...draft(id, 'principal.registered', 'operator'),
      entity_type: 'principal',
      entity_id: id,
      actor_type: 'user',
      payload: { principal_id: id, principal_type: 'user', display_name: id, roles: ['director'], keys: [directorKey.publicJwk], registered_by: 'operator', at: new Date().toISOString() },
    });
    const forged = sealEvent(registration(forgedId), forgedId, { taskSeq: 0, hash: null });
    await jetstream(party('ingress').nc).publish(`${layout.eventsPrefix}.principal.${forgedId}`, JSON.stringify(forged), { msgID: randomUUID() });
    await party('ingress').store.appendToEntity('principal', genuineId, [registration(genuineId)], 0);

    const registry = await PrincipalRegistry.start(readerNc, reader, { stream, subjectPrefix: layout.eventsPrefix });
    try {
      expect(await registry.lookup(forgedId)).toBeUndefined();
      expect(await registry.hasRole(forgedId, 'director')).toBe(false);
      expect(await registry.hasRole(genuineId, 'director')).toBe(true);
    } finally {
      await registry.close();
    }
  });
});
