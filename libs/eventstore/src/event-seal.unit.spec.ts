import { describe, expect, it } from 'vitest';
import type { EventDraft, EventEnvelope, PublicEd25519Jwk } from '@writ/contracts';
import { generateEd25519Key, type Ed25519SigningKey } from '@writ/crypto';
import { taskDraft } from '../test/support/drafts.js';
import { ChainScanner, GENESIS, computeEventHash, sealEvent, verifyEventChain, type ChainAggregate, type ChainLink, type MessageVerdict } from './event-chain.js';
import { Authorship, eventSealer, type EventSealer } from './event-seal.js';

const TASK = 'task-1';
const SERVICES = {
  ingress: 'ingress',
  orchestrator: 'writ-orchestrator',
  policy: 'writ-policy',
  approval: 'writ-approval',
  executor: 'writ-executor',
  receipt: 'writ-receipt',
  projection: 'writ-projection',
} as const;

/** A registration of `principalId` with `key`, as a service appends it on its own subject. */
function registration(principalId: string, key: Ed25519SigningKey): EventDraft {
  return {
    ...taskDraft(principalId),
    event_type: 'principal.registered',
    entity_type: 'principal',
    entity_id: principalId,
    actor_type: 'service',
    actor_id: principalId,
    payload: { principal_id: principalId, principal_type: 'service', display_name: principalId, roles: [], keys: [key.publicJwk as PublicEd25519Jwk], registered_by: principalId, at: '2026-11-25T12:00:00.000Z' },
  };
}

/** `drafts` chained on `aggregateId`, each sealed by its sealer (or left unsealed), as stored JSON reads back. */
async function chain(aggregateId: string, drafts: readonly (readonly [EventDraft, EventSealer | undefined])[], from: ChainLink = GENESIS): Promise<Record<string, unknown>[]> {
  let link = from;
  const out: Record<string, unknown>[] = [];
  for (const [draft, sealer] of drafts) {
    const event: EventEnvelope = sealEvent(draft, aggregateId, link);
    if (sealer !== undefined) event.seal = await sealer.seal(event.hash);
    link = { taskSeq: event.task_seq, hash: event.hash };
    out.push(JSON.parse(JSON.stringify(event)) as Record<string, unknown>);
  }
  return out;
}

const summary = (verdicts: readonly MessageVerdict[]) => verdicts.map((v) => (v.kind === 'event' ? 'event' : v.kind === 'quarantined' ? `quarantined:${v.reason}` : `broken:${v.reason}`));

function judge(aggregate: ChainAggregate, messages: readonly unknown[], authorship: Authorship): MessageVerdict[] {
  const scanner = new ChainScanner(aggregate, undefined, authorship);
  return messages.map((message, index) => scanner.classify(message, () => messages.slice(index + 1), index + 1));
}

/** Keys of every service, registered: the authorship a reader would have learned from the log. */
async function world() {
  const keys = Object.fromEntries(await Promise.all(Object.entries(SERVICES).map(async ([service, id]) => [service, await generateEd25519Key({ kid: `${id}-k1` })]))) as Record<keyof typeof SERVICES, Ed25519SigningKey>;
  const sealers = Object.fromEntries(Object.entries(SERVICES).map(([service, id]) => [service, eventSealer(id, keys[service as keyof typeof SERVICES])])) as Record<keyof typeof SERVICES, EventSealer>;
  const authorship = new Authorship({ servicePrincipals: SERVICES });
  for (const [service, id] of Object.entries(SERVICES)) {
    const [registered] = await chain(id, [[registration(id, keys[service as keyof typeof SERVICES]), sealers[service as keyof typeof SERVICES]]]);
    authorship.learn(id, [{ streamSeq: 1, event: registered as unknown as EventEnvelope }]);
  }
  return { keys, sealers, authorship };
}

const draft = (event_type: string) => taskDraft(TASK, { event_type, actor_type: 'service', actor_id: 'x' });

describe('event seal: who appended an event is provable (docs/security.md, Authorship)', () => {
  it('given a sealed event, then its hash is the same as unsealed (the seal is outside the hashed content)', async () => {
    const { sealers } = await world();
    const [sealed] = await chain(TASK, [[draft('grant.issued'), sealers.approval]]);
    const { seal: _seal, ...unsealed } = sealed!;
    expect(computeEventHash(sealed!)).toBe(sealed!['hash']);
    expect(computeEventHash(unsealed)).toBe(sealed!['hash']);
  });

  it('given events sealed by their own services, then each is an event of the chain', async () => {
    const { sealers, authorship } = await world();
    const messages = await chain(TASK, [
      [draft('task.created'), sealers.ingress],
      [draft('policy.evaluated'), sealers.policy],
      [draft('grant.issued'), sealers.approval],
      [draft('execution.completed'), sealers.executor],
      [draft('receipt.issued'), sealers.receipt],
      [draft('task.completed'), sealers.orchestrator],
    ]);
    expect(summary(judge({ entityType: 'task', entityId: TASK }, messages, authorship))).toEqual(Array(6).fill('event'));
  });

  type Forgery = { note: string; forge: (w: Awaited<ReturnType<typeof world>>, link: ChainLink) => Promise<Record<string, unknown>> };
  const forgeries: Forgery[] = [
    { note: 'grant.issued with no seal', forge: async (_w, link) => (await chain(TASK, [[draft('grant.issued'), undefined]], link))[0]! },
    { note: "grant.issued sealed by policy's own key", forge: async (w, link) => (await chain(TASK, [[draft('grant.issued'), w.sealers.policy]], link))[0]! },
    { note: 'execution.completed sealed by policy', forge: async (w, link) => (await chain(TASK, [[draft('execution.completed'), w.sealers.policy]], link))[0]! },
    { note: 'receipt.issued sealed by policy', forge: async (w, link) => (await chain(TASK, [[draft('receipt.issued'), w.sealers.policy]], link))[0]! },
    { note: 'policy.evaluated sealed by the executor', forge: async (w, link) => (await chain(TASK, [[draft('policy.evaluated'), w.sealers.executor]], link))[0]! },
    {
      note: "grant.issued claiming approval's principal and kid, signed by policy's key",
      forge: async (w, link) => {
        const [event] = await chain(TASK, [[draft('grant.issued'), w.sealers.policy]], link);
        return { ...event!, seal: { ...(event!['seal'] as object), principal_id: SERVICES.approval, kid: w.keys.approval.kid } };
      },
    },
    {
      note: "grant.issued with approval's genuine seal of another event (a replayed seal)",
      forge: async (w, link) => {
        const [genuine] = await chain(TASK, [[draft('grant.issued'), w.sealers.approval]], link);
        const [forged] = await chain(TASK, [[draft('grant.issued'), undefined]], link);
        return { ...forged!, seal: genuine!['seal'] };
      },
    },
    { note: 'an event type no service appends, sealed by approval', forge: async (w, link) => (await chain(TASK, [[draft('grant.minted'), w.sealers.approval]], link))[0]! },
    {
      note: 'sealed by a principal that is no Writ service',
      forge: async (w, link) => {
        const [event] = await chain(TASK, [[draft('grant.issued'), eventSealer('agent-1', w.keys.approval)]], link);
        return event!;
      },
    },
  ];

  it.each(forgeries)('given a properly chained $note, then it is quarantined AUTHOR_UNPROVEN, and the genuine next event still chains', async ({ forge }) => {
    const w = await world();
    const [first] = await chain(TASK, [[draft('task.created'), w.sealers.ingress]]);
    const head = { taskSeq: 1, hash: first!['hash'] as string };
    const forged = await forge(w, head);
    const [genuine] = await chain(TASK, [[draft('policy.evaluated'), w.sealers.policy]], head);
    expect(summary(judge({ entityType: 'task', entityId: TASK }, [first, forged, genuine], w.authorship))).toEqual(['event', 'quarantined:QUARANTINE_AUTHOR_UNPROVEN', 'event']);
  });

  it('given a forged intact event beyond the next task_seq, then it is quarantined, not a break (an outsider cannot brick a task)', async () => {
    const w = await world();
    const [first] = await chain(TASK, [[draft('task.created'), w.sealers.ingress]]);
    const far = (await chain(TASK, [[draft('grant.issued'), undefined]], { taskSeq: 7, hash: first!['hash'] as string }))[0];
    const [genuine] = await chain(TASK, [[draft('attempt.awaiting_policy'), w.sealers.orchestrator]], { taskSeq: 1, hash: first!['hash'] as string });
    expect(summary(judge({ entityType: 'task', entityId: TASK }, [first, far, genuine], w.authorship))).toEqual(['event', 'quarantined:QUARANTINE_AUTHOR_UNPROVEN', 'event']);
  });

  it('given a genuine sealed event whose bytes changed, then it is still a break (tampering is not junk)', async () => {
    const w = await world();
    const [a, b, c] = await chain(TASK, [
      [draft('task.created'), w.sealers.ingress],
      [draft('policy.evaluated'), w.sealers.policy],
      [draft('grant.issued'), w.sealers.approval],
    ]);
    expect(summary(judge({ entityType: 'task', entityId: TASK }, [a, { ...b, payload: { changed: true } }, c], w.authorship)).slice(0, 2)).toEqual(['event', 'broken:modified']);
  });

  it('given a key revoked at a stream position, then what it sealed before still verifies and what it sealed after does not', async () => {
    const w = await world();
    const revocation = { event_type: 'principal.key_revoked', payload: { kid: w.keys.approval.kid, reason: 'retired', revoked_by: SERVICES.approval, at: '2026-11-25T12:00:00.000Z' } };
    const [registered] = await chain(SERVICES.approval, [[registration(SERVICES.approval, w.keys.approval), w.sealers.approval]]);
    w.authorship.learn(SERVICES.approval, [
      { streamSeq: 1, event: registered as unknown as EventEnvelope },
      { streamSeq: 10, event: revocation as unknown as EventEnvelope },
    ]);
    const [grant] = await chain(TASK, [[draft('grant.issued'), w.sealers.approval]]);
    const scannerAt = (streamSeq: number) => new ChainScanner({ entityType: 'task', entityId: TASK }, undefined, w.authorship).classify(grant, undefined, streamSeq).kind;
    expect(scannerAt(9)).toBe('event');
    expect(scannerAt(11)).toBe('quarantined');
  });

  describe("a service principal's own subject", () => {
    const aggregate = { entityType: 'principal', entityId: SERVICES.policy };

    it('given its registration sealed by the key it registers, and a key added sealed by that key, then both are events', async () => {
      const w = await world();
      const next = await generateEd25519Key({ kid: 'writ-policy-k2' });
      const added = { ...draft('principal.key_added'), entity_type: 'principal' as const, entity_id: SERVICES.policy, payload: { key: next.publicJwk, added_by: SERVICES.policy, at: '2026-11-25T12:00:00.000Z' } };
      const messages = await chain(SERVICES.policy, [
        [registration(SERVICES.policy, w.keys.policy), w.sealers.policy],
        [added, w.sealers.policy],
      ]);
      expect(summary(judge(aggregate, messages, new Authorship({ servicePrincipals: SERVICES })))).toEqual(['event', 'event']);
    });

    it('given a key added sealed by the key it adds (not one registered before), then it is quarantined', async () => {
      const w = await world();
      const rogue = await generateEd25519Key({ kid: 'rogue' });
      const added = { ...draft('principal.key_added'), entity_type: 'principal' as const, entity_id: SERVICES.policy, payload: { key: rogue.publicJwk, added_by: SERVICES.policy, at: '2026-11-25T12:00:00.000Z' } };
      const messages = await chain(SERVICES.policy, [
        [registration(SERVICES.policy, w.keys.policy), w.sealers.policy],
        [added, eventSealer(SERVICES.policy, rogue)],
      ]);
      expect(summary(judge(aggregate, messages, new Authorship({ servicePrincipals: SERVICES })))).toEqual(['event', 'quarantined:QUARANTINE_AUTHOR_UNPROVEN']);
    });

    it("given a registration sealed by ingress's key, then it is quarantined (only the service registers itself)", async () => {
      const w = await world();
      const messages = await chain(SERVICES.policy, [[registration(SERVICES.policy, w.keys.policy), eventSealer(SERVICES.ingress, w.keys.ingress)]]);
      expect(summary(judge(aggregate, messages, new Authorship({ servicePrincipals: SERVICES })))).toEqual(['quarantined:QUARANTINE_AUTHOR_UNPROVEN']);
    });
  });

  it('given a bundle with a forged event, when strictly verified with the authorship, then it fails author_unproven', async () => {
    const w = await world();
    const events = await chain(TASK, [
      [draft('task.created'), w.sealers.ingress],
      [draft('grant.issued'), w.sealers.policy],
    ]);
    expect(verifyEventChain(events, { taskId: TASK, authorship: w.authorship })).toMatchObject({ ok: false, index: 1, reason: 'author_unproven' });
    expect(verifyEventChain(events, { taskId: TASK })).toMatchObject({ ok: true });
  });
});
