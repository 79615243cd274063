import type { Belief, ContextPack, EventDraft, EventEnvelope, LastWill, LastWillDelta, PolicyEvaluated, SpawnManifest } from '@writ/contracts';
import { eventSealer, sealEvent } from '@writ/eventstore';
import { canonicalJson, documentPayloadHash, ed25519Fingerprint, generateEd25519Key, sha256Hex, signDocument, type Ed25519SigningKey } from '@writ/crypto';
import { lastWillBeliefId } from '@writ/kernel';
import { uniqueName, waitFor } from '@writ/testing';
import { beforeAll, expect, it } from 'vitest';
import { startStack, type Principal, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * A participant (a seed spawned under seed 002) acting through the governed path, end to end
 * (docs/spawn-retire.md "Acting under the manifest"): ingress, orchestrator and policy as built
 * child processes on the real NATS. A director's key signs the manifest; the participant then
 * submits ActionRequests signed with its child key under its seed_id. Policy admits what its
 * manifest allows and denies the rest with the participant code; once retired, ingress refuses it.
 * Its Last Will's deltas land as beliefs (issue 17) on the task it acted in, and on the task of a
 * participant reconstituted from it, whose next attempt's context pack carries them.
 */

const STEP_MS = 60_000;

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ prefix: 'e2ep', services: ['ingress', 'orchestrator', 'policy', 'projection'] });
}, 180_000);

stopStackAfterAll(() => stack);

type Unsigned<T> = Omit<T, 'signature'>;

/** A director principal registered through `writ principal add` (operator-signed, appended and sealed by ingress). */
async function registerDirector(): Promise<{ id: string; key: Ed25519SigningKey }> {
  const director = await stack.registerPrincipal({ type: 'user', roles: ['director'] });
  return { id: director.id, key: director.key };
}

async function post(route: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${stack.services.ingress.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The record ingress keeps of `body` under `<principal>:<key>` (docs/governed-path.md step 1). */
function ingressId(principalId: string, key: string, body: string): string {
  return `ing-${sha256Hex(`${sha256Hex(body)}:${principalId}:${key}`).slice(0, 32)}`;
}

/** The outcome of `request` as `stack.submit` publishes it (Ed25519 signs deterministically: signing again gives the same bytes). */
async function outcome(principal: Parameters<typeof stack.sign>[0], request: { action_request_id: string }): Promise<EventEnvelope> {
  const id = ingressId(principal.id, request.action_request_id, await stack.sign(principal, request));
  return waitFor(
    async () => {
      if ((await stack.store.headOfEntity('ingress', id)).taskSeq < 2) return undefined;
      return (await stack.entityEvents('ingress', id)).find((event) => event.event_type === 'ingress.accepted' || event.event_type === 'ingress.rejected');
    },
    { what: `the outcome of ingress ${id}`, timeoutMs: STEP_MS, intervalMs: 50 },
  );
}

/** A seed.spawn.v1 body the director signs: read docs/**, write out/** (the default ceilings); `extra` carries a reconstitution's lineage. */
function manifestBody(director: { id: string; key: Ed25519SigningKey }, child: Ed25519SigningKey, seedId: string, extra: string[] = []): Unsigned<SpawnManifest> {
  const now = Date.now();
  return {
    manifest_version: 'seed.spawn.v1',
    seed_id: seedId,
    parent_seed_id: director.id,
    anchor_id: 'anchor:docs',
    mode: 'ephemeral',
    role: 'docs.indexer',
    info_budget: { scope: 'on-topic', notes: 'docs only' },
    constraints: { anchor_hash: sha256Hex('anchor'), parent_hash: sha256Hex('parent'), policy_hash: sha256Hex('policy'), extra },
    capabilities: { fs: ['read:docs/**', 'write:out/**'], net: [], shell: [], providers: [] },
    handoff_channel: 'trace',
    ttl: { created_at: new Date(now - 1_000).toISOString(), expires_at: new Date(now + 3_600_000).toISOString() },
    lineage: { install_id: 'writ-local', genesis_fingerprint: 'genesis:writ-local', parent_key_fingerprint: ed25519Fingerprint(director.key.publicJwk.x) },
    key_binding: { child_key_fingerprint: ed25519Fingerprint(child.publicJwk.x), key_role: 'seed_ephemeral' },
    oep: { version: '1', policy_profile: 'strict' },
    mission_id: 'mission-e2e',
    actor_id: director.id,
    policy: { confidentiality: 'internal', redact: [] },
    resource_limits: { max_tokens: 1_000, max_calls: 10, max_wallclock_seconds: 3_600 },
    runtime_context: { host_id: 'e2e', namespace: 'default' },
  };
}

/** A seed.retire.v1 body the participant signs with its child key. */
function lastWillBody(manifest: SpawnManifest, child: Ed25519SigningKey, deltas: LastWillDelta[], reconstitutedFrom: string | null = null): Unsigned<LastWill> {
  return {
    manifest_version: 'seed.retire.v1',
    seed_id: manifest.seed_id,
    parent_seed_id: manifest.parent_seed_id,
    anchor_id: manifest.anchor_id,
    mode: manifest.mode,
    manifest_hash: documentPayloadHash(manifest),
    status: 'retired',
    retired_at: new Date().toISOString(),
    summary: 'read the docs',
    deltas,
    open_questions: [],
    governance: { violations: [], unknowns_disclosed: true, oep_compliant: true },
    artifacts: [],
    heartbeat_last: new Date(Date.now() - 500).toISOString(),
    lineage: { install_id: 'writ-local', genesis_fingerprint: 'genesis:writ-local', child_key_fingerprint: ed25519Fingerprint(child.publicJwk.x) },
    reconstitution: { reconstituted_from_seed_id: reconstitutedFrom },
  };
}

/** Spawns a participant of `director` (verified by ingress) and returns it as a principal that signs with its child key. */
async function spawnParticipant(director: { id: string; key: Ed25519SigningKey }, extra: string[] = []): Promise<{ seed: Principal; manifest: SpawnManifest; child: Ed25519SigningKey }> {
  const child = await generateEd25519Key();
  const seedId = uniqueName('seed').replaceAll('_', '-');
  const manifest = (await signDocument(manifestBody(director, child, seedId, extra), director.key)) as unknown as SpawnManifest;
  expect(await post('/v1/seeds/spawn/verify', { manifest, child_public_key: child.publicJwk.x })).toMatchObject({ status: 200, body: { outcome: 'accepted', status: 'active' } });
  return { seed: { id: seedId, kid: child.kid, key: child, publicJwk: child.publicJwk }, manifest, child };
}

/** Reads inside the manifest (docs/a.md), in `taskId` or a new task, and waits until policy counted the call; returns the request's task and attempt. */
async function readDocs(seed: Principal, taskId?: string): Promise<{ taskId: string; attemptId: string }> {
  const request = stack.actionRequest(seed, { action_class: 'read_local', target_resources: ['docs/a.md'], params: { path: 'docs/a.md' }, expected_effects: [], ...(taskId === undefined ? {} : { task_id: taskId }) });
  await stack.submit(seed, request);
  const accepted = await outcome(seed, request);
  expect(accepted.event_type).toBe('ingress.accepted');
  const task = accepted.payload['task_id'] as string;
  const submitted = await stack.waitForTaskEvent(
    task,
    (event) => event.event_type === 'attempt.awaiting_policy' && (event.payload['action_request'] as { action_request_id?: string } | undefined)?.action_request_id === request.action_request_id,
    { timeoutMs: STEP_MS },
  );
  await waitFor(
    async () => (await stack.entityEvents('participant', seed.id)).find((event) => event.event_type === 'participant.call_recorded' && event.payload['attempt_id'] === submitted.attempt_id),
    { what: `the call of attempt ${String(submitted.attempt_id)}`, timeoutMs: STEP_MS, intervalMs: 50 },
  );
  return { taskId: task, attemptId: String(submitted.attempt_id) };
}

/** The task's beliefs as the projection serves them (`GET /v1/tasks/<id>/beliefs`), once `count` are there. */
async function beliefsView(taskId: string, count: number): Promise<Belief[]> {
  const answer = await stack.waitForRoute(`/v1/tasks/${taskId}/beliefs`, (status, body) => status === 200 && Array.isArray(body['beliefs']) && body['beliefs'].length >= count, { timeoutMs: STEP_MS });
  return answer.body['beliefs'] as Belief[];
}

it(
  'a participant reads inside its manifest (allowed, scope named), is denied a write outside it, and is refused at ingress once retired',
  async () => {
    // given a director and a participant it spawned: read docs/**, write out/** (the default ceilings)
    const director = await registerDirector();
    const child = await generateEd25519Key();
    const seedId = uniqueName('seed').replaceAll('_', '-');
    const body = manifestBody(director, child, seedId);
    const manifest = (await signDocument(body, director.key)) as unknown as SpawnManifest;
    const spawned = await post('/v1/seeds/spawn/verify', { manifest, child_public_key: child.publicJwk.x });
    expect(spawned).toMatchObject({ status: 200, body: { outcome: 'accepted', status: 'active' } });
    const seed: Principal = { id: seedId, kid: child.kid, key: child, publicJwk: child.publicJwk };
    const scopeRef = `participant:${seedId}@${documentPayloadHash(manifest)}`;

    // when it reads inside its manifest, then ingress accepts and policy allows, naming the scope
    const inside = stack.actionRequest(seed, { action_class: 'read_local', target_resources: ['docs/a.md'], params: { path: 'docs/a.md' }, expected_effects: [] });
    await stack.submit(seed, inside);
    const accepted = await outcome(seed, inside);
    expect(accepted.event_type).toBe('ingress.accepted');
    const allowed = await stack.waitForTaskEvent(accepted.payload['task_id'] as string, (event) => event.event_type === 'policy.evaluated', { timeoutMs: STEP_MS });
    expect((allowed.payload as unknown as PolicyEvaluated).policy_result).toMatchObject({ outcome: 'allow', participant_scope_ref: scopeRef });
    await stack.waitForTaskEvent(accepted.payload['task_id'] as string, (event) => event.event_type === 'attempt.authorized', { timeoutMs: STEP_MS });

    // when it writes where its manifest grants only reading, then policy denies with the participant code
    const outside = stack.actionRequest(seed, { action_class: 'write_local', target_resources: ['docs/a.md'], params: { path: 'docs/a.md', content: 'x' }, expected_effects: [] });
    await stack.submit(seed, outside);
    const second = await outcome(seed, outside);
    expect(second.event_type).toBe('ingress.accepted');
    const denied = await stack.waitForTaskEvent(second.payload['task_id'] as string, (event) => event.event_type === 'policy.evaluated', { timeoutMs: STEP_MS });
    expect((denied.payload as unknown as PolicyEvaluated).policy_result).toMatchObject({ outcome: 'deny', matched_rules: ['participant_path_denied'], participant_scope_ref: scopeRef });
    await stack.waitForTaskEvent(second.payload['task_id'] as string, (event) => event.event_type === 'attempt.policy_denied', { timeoutMs: STEP_MS });
    const calls = (await stack.entityEvents('participant', seedId)).filter((event) => event.event_type === 'participant.call_recorded');
    expect(calls.map((event) => event.payload['call'])).toEqual([1]);

    // when it hands in its Last Will, then its next request is refused at ingress and recorded
    const will = lastWillBody(manifest, child, []);
    expect(await post('/v1/seeds/retire/ingest', { last_will: await signDocument(will, child) })).toMatchObject({ status: 200, body: { status: 'retired' } });
    const late = stack.actionRequest(seed, { action_class: 'read_local', target_resources: ['docs/a.md'], params: { path: 'docs/a.md' }, expected_effects: [] });
    await stack.submit(seed, late);
    const refused = await outcome(seed, late);
    expect(refused).toMatchObject({ event_type: 'ingress.rejected', payload: { reason_code: 'INGRESS_PARTICIPANT_INACTIVE' } });
  },
  STEP_MS * 3,
);

it(
  'a Last Will lands as beliefs on the task its participant acted in, and a participant reconstituted from it gets them in its next attempt context pack',
  async () => {
    // given a participant that read inside its manifest, in its task
    const director = await registerDirector();
    const prior = await spawnParticipant(director);
    const first = await readDocs(prior.seed);
    // when a retirement is forged onto its stream (chained on its head, a will signed with its very key, sealed with the orchestrator's seal key, not ingress's)
    const subject = stack.subject(`evt.participant.${prior.seed.id}`);
    const head = (await stack.entityEvents('participant', prior.seed.id)).at(-1) as EventEnvelope;
    const forgedWill = (await signDocument(lastWillBody(prior.manifest, prior.child, [{ epistemic_type: 'retrieved', confidence: 1, content: 'forged knowledge', provenance: 'nowhere', support: [] }]), prior.child)) as unknown as LastWill;
    const forgedAt = new Date().toISOString();
    const forgery: EventDraft = {
      event_id: uniqueName('evt-forged').replaceAll('_', '-'),
      schema_version: 1,
      event_type: 'participant.retired',
      entity_type: 'participant',
      entity_id: prior.seed.id,
      occurred_at: forgedAt,
      actor_type: 'service',
      actor_id: 'ingress',
      payload: { seed_id: prior.seed.id, last_will: forgedWill, last_will_hash: documentPayloadHash(forgedWill), manifest_hash: documentPayloadHash(prior.manifest), will_status: 'retired', deltas_applied: 1, artifacts: [], at: forgedAt },
      causation_id: null,
      correlation_id: prior.seed.id,
    };
    const sealed = sealEvent(forgery, head.task_id, { taskSeq: head.task_seq, hash: head.hash });
    sealed.seal = await eventSealer('writ-orchestrator', await stack.sealKey('writ-orchestrator')).seal(sealed.hash);
    const forgedAck = await stack.js.publish(subject, JSON.stringify(sealed));
    // then it is no event of the participant for any reader, and no belief lands on its task
    expect(await stack.store.entryAt(subject, forgedAck.seq)).toMatchObject({ kind: 'quarantined', record: { reason: 'QUARANTINE_AUTHOR_UNPROVEN' } });
    await stack.waitConsumerSettled(stack.streams.events, 'orchestrator-participants', forgedAck.seq, { timeoutMs: STEP_MS });
    expect((await stack.taskEvents(first.taskId)).filter((event) => event.event_type.startsWith('belief.'))).toEqual([]);

    // when it hands in its Last Will: a retrieved fact and a hypothesis
    const deltas: LastWillDelta[] = [
      { epistemic_type: 'retrieved', confidence: 0.9, content: 'docs/a.md defines the public API', provenance: 'docs/a.md', support: ['docs/a.md'] },
      { epistemic_type: 'hypothesis', confidence: 0.4, content: 'the API may be renamed soon', provenance: 'reading', support: [] },
    ];
    const will = (await signDocument(lastWillBody(prior.manifest, prior.child, deltas), prior.child)) as unknown as LastWill;
    const willHash = documentPayloadHash(will);
    expect(await post('/v1/seeds/retire/ingest', { last_will: will })).toMatchObject({ status: 200, body: { status: 'retired' } });
    // then its deltas are the task's beliefs in the projection, tiered by epistemic type, citing the stored Last Will
    const ids = [lastWillBeliefId(willHash, 0), lastWillBeliefId(willHash, 1)];
    const landed = await beliefsView(first.taskId, 2);
    expect(landed.map((b) => [b.belief_id, b.trust_tier, b.epistemic_type, b.asserted_by])).toEqual([
      [ids[0], 'observed', 'retrieved', prior.seed.id],
      [ids[1], 'untrusted', 'hypothesis', prior.seed.id],
    ]);
    expect(landed[0]?.evidence_refs[0]).toMatchObject({ kind: 'artifact', id: `sha256-${sha256Hex(canonicalJson(will))}` });

    // given a participant reconstituted from it (its verified manifest and Last Will named by hash), acting in its own task
    const next = await spawnParticipant(director, [`reconstituted_from:${prior.seed.id}`, `prior_manifest_hash:${documentPayloadHash(prior.manifest)}`, `prior_last_will_hash:${willHash}`]);
    const own = await readDocs(next.seed);
    // then the prior Last Will lands on its task too
    expect((await beliefsView(own.taskId, 2)).map((b) => b.belief_id)).toEqual(ids);
    // when it acts again in that task, then that attempt's context pack carries the retrieved fact, and lists the hypothesis as barred from planning
    const again = await readDocs(next.seed, own.taskId);
    await stack.waitForRoute(`/v1/attempts/${again.attemptId}`, (status, body) => status === 200 && typeof body['context_pack_sha256'] === 'string', { timeoutMs: STEP_MS });
    const pack = (await stack.http(`/v1/attempts/${again.attemptId}/context`)).body as ContextPack;
    expect(pack.items.filter((item) => item.section === 'beliefs').map((item) => item.source.id)).toEqual([ids[0]]);
    expect(pack.omitted).toContainEqual({ section: 'beliefs', source: { kind: 'belief', id: ids[1] }, reason: 'TRUST_TIER_BARRED_FROM_PLANNING' });
  },
  STEP_MS * 4,
);
