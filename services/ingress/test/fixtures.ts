import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { INGRESS_IDEMPOTENCY_KEY_HEADER, type ActionRequest, type EventEnvelope, type PrincipalRole, type PrincipalType } from '@writ/contracts';
import { generateEd25519Key, sha256Hex, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { createLogger } from '@writ/telemetry';
import { createIngressApp, type IngressApp } from '../src/bootstrap.js';
import { ingressIds, type IngressIds } from '../src/application/ingress-ids.js';
import { loadIngressConfig, type IngressConfig } from '../src/config.js';

const MiB = 1024 ** 2;

export interface TestIngress {
  readonly root: string;
  readonly config: IngressConfig;
  readonly nc: NatsConnection;
  /** The test's own view of the log (same stream and prefix as the service). */
  readonly store: EventStore;
  readonly ingress: IngressApp;
  stop(): Promise<void>;
}

/** A real ingress, in process, on its own streams and subject root; `stop` deletes them. */
export async function startTestIngress(env: Record<string, string> = {}): Promise<TestIngress> {
  const root = uniqueName('t');
  const streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
  const config = loadIngressConfig({
    // The NATS the tests connect to (WRIT_NATS_URL), not the default port.
    WRIT_NATS_URL: NATS_URL,
    WRIT_SUBJECT_ROOT: root,
    WRIT_HTTP_HOST: '127.0.0.1',
    WRIT_HTTP_PORT: '0',
    WRIT_EVENTS_STREAM: streams.events,
    WRIT_INGRESS_STREAM: streams.ingress,
    WRIT_COMMANDS_STREAM: streams.commands,
    WRIT_DLQ_STREAM: streams.dlq,
    WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
    WRIT_BUS_MAX_BYTES: String(16 * MiB),
    ...env,
  });
  const nc = await connectTestNats('ingress-test');
  const ingress = await createIngressApp(config, { logger: createLogger('ingress-test', { level: 'warn' }) });
  const store = await EventStore.open(nc, { stream: streams.events, subjectPrefix: config.streams.eventsPrefix, maxBytes: 64 * MiB });
  return {
    root,
    config,
    nc,
    store,
    ingress,
    async stop() {
      await ingress.close();
      await deleteStreams(nc, ...Object.values(streams));
      await nc.close();
    },
  };
}

export interface TestAgent {
  readonly id: string;
  readonly key: Ed25519SigningKey;
}

/** Registers a principal with one key, as `writ principal add` would (`principal.registered`). */
export async function registerPrincipal(store: EventStore, options: { id?: string; type?: PrincipalType; key?: Ed25519SigningKey; roles?: PrincipalRole[] } = {}): Promise<TestAgent> {
  const id = options.id ?? uniqueName('agent');
  const key = options.key ?? (await generateEd25519Key({ kid: `${id}-k1` }));
  const at = new Date().toISOString();
  await store.appendToEntity(
    'principal',
    id,
    [
      {
        event_id: `${id}-registered`,
        schema_version: 1,
        event_type: 'principal.registered',
        entity_type: 'principal',
        entity_id: id,
        occurred_at: at,
        actor_type: 'user',
        actor_id: 'operator',
        payload: { principal_id: id, principal_type: options.type ?? 'agent', display_name: id, roles: options.roles ?? ['executor'], keys: [key.publicJwk], registered_by: 'operator', at },
        causation_id: null,
        correlation_id: id,
      },
    ],
    0,
  );
  return { id, key };
}

/** Appends `principal.key_revoked` for `kid`. */
export async function revokeKey(store: EventStore, principalId: string, kid: string): Promise<void> {
  const head = await store.headOfEntity('principal', principalId);
  const at = new Date().toISOString();
  await store.appendToEntity(
    'principal',
    principalId,
    [
      {
        event_id: `${principalId}-revoked-${kid.replace(/[^A-Za-z0-9_-]/g, '_')}`,
        schema_version: 1,
        event_type: 'principal.key_revoked',
        entity_type: 'principal',
        entity_id: principalId,
        occurred_at: at,
        actor_type: 'user',
        actor_id: 'operator',
        payload: { kid, reason: 'compromised', revoked_by: 'operator', at },
        causation_id: null,
        correlation_id: principalId,
      },
    ],
    head.taskSeq,
  );
}

/** A valid ActionRequest creating a new task, proposed now by `principalId`. */
export function actionRequest(principalId: string, overrides: Partial<ActionRequest> = {}): ActionRequest {
  return {
    action_request_id: uniqueName('ar'),
    task: { title: 'Say hello', goal: 'Write hello.txt', policy_profile: 'local_edit_allowed', files_owned: ['**'] },
    step: { kind: 'edit', title: 'write a file' },
    action_class: 'execute_command',
    target_resources: ['hello.txt'],
    params: { argv: ['sh', '-c', 'echo hello > hello.txt'] },
    expected_effects: ['hello.txt exists'],
    reversibility_hint: 'reversible',
    reason: 'test',
    proposed_by: principalId,
    proposed_at: new Date().toISOString(),
    ...overrides,
  };
}

/** The compact EdDSA JWS of `request` (header: alg, kid). */
export function sign(request: unknown, key: Ed25519SigningKey): Promise<string> {
  return signJws(JSON.stringify(request), key);
}

/**
 * Publishes a body to JetStream as an agent does: raw bytes, the idempotency key
 * in `Writ-Idempotency-Key` when given (`via: 'msg-id'`: in `Nats-Msg-Id`, as
 * older clients do, which JetStream's stream-wide dedupe also sees).
 */
export async function publishRaw(
  nc: NatsConnection,
  subject: string,
  body: string | Uint8Array,
  key?: string,
  via: 'header' | 'msg-id' = 'header',
): Promise<{ seq: number; duplicate: boolean }> {
  const headers = natsHeaders();
  if (key !== undefined && via === 'header') headers.set(INGRESS_IDEMPOTENCY_KEY_HEADER, key);
  return jetstream(nc).publish(subject, body, key !== undefined && via === 'msg-id' ? { msgID: key, headers } : { headers });
}

/** The ids ingress derives for `body` (as the consumer decodes it) under `principal` and `key`. */
export function idsOf(principal: string, key: string, body: string | Uint8Array): IngressIds {
  return ingressIds(principal, key, sha256Hex(typeof body === 'string' ? body : new TextDecoder().decode(body)));
}

/** Waits until the ingress stream holds its outcome (accepted or rejected) and returns every ingress event. */
export async function ingressOutcome(store: EventStore, ingressId: string): Promise<EventEnvelope[]> {
  return waitFor(
    async () => {
      if ((await store.headOfEntity('ingress', ingressId)).taskSeq < 2) return undefined;
      return (await store.readEntity('ingress', ingressId)).map((e) => e.event);
    },
    { what: `the outcome of ${ingressId}` },
  );
}

/** How many task subjects the log holds (a rejection must not add one). */
export async function taskSubjectCount(nc: NatsConnection, config: IngressConfig): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(config.streams.events, { subjects_filter: `${config.streams.eventsPrefix}.task.>` });
  return Object.keys(info.state.subjects ?? {}).length;
}
