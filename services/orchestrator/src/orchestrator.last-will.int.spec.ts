import { jetstream } from '@nats-io/jetstream';
import type { ActionRequest, Belief, EventEnvelope, LastWill, LastWillDelta, SpawnManifest } from '@writ/contracts';
import { canonicalJson, documentPayloadHash, ed25519Fingerprint, generateEd25519Key, sha256Hex, signDocument, type Ed25519SigningKey } from '@writ/crypto';
import { lastWillBeliefId } from '@writ/kernel';
import { serviceDraft, type NatsArtifactStore } from '@writ/runtime';
import { waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldBeliefs } from './application/knowledge-request.handler.js';
import { LastWillBeliefsHandler } from './application/last-will-beliefs.handler.js';
import { EventStoreParticipantStreams } from './outbound/event-store.participant-streams.js';
import { EventStoreTaskLog } from './outbound/event-store.task-log.js';
import { append, createRig, disposeRig, events, rigBucket, startApp, waitForEvents, waitForIdle, type Rig } from '../test/rig.js';
import { commandRequest, followUpRequest, ingressDrafts, taskIds, type TaskIds } from '../test/task-fixtures.js';

/**
 * Last Wills landing as beliefs against the running orchestrator and the real NATS (issue 17,
 * seed 002): the orchestrator follows the participants' streams; a retired participant's
 * verified Last Will lands on the tasks it acted in, a reconstituted participant's tasks get
 * its prior's, each belief tiered by its epistemic type and citing the stored Last Will, once.
 */

const DURABLE = 'orchestrator-participants';
let rig: Rig;
let bucket: NatsArtifactStore;
let director: Ed25519SigningKey;
const name = (suffix: string) => `${suffix}-${Math.random().toString(16).slice(2, 8)}`;
const now = () => new Date().toISOString();

beforeAll(async () => {
  rig = await createRig('last-will');
  director = await generateEd25519Key();
  bucket = await rigBucket(rig);
  await startApp(rig);
});

afterAll(async () => {
  await disposeRig(rig);
});

type Unsigned<T> = Omit<T, 'signature'>;

interface Seed {
  readonly id: string;
  readonly key: Ed25519SigningKey;
  readonly manifest: SpawnManifest;
  readonly manifestHash: string;
}

/** What ingress appends to `writ.evt.participant.<seed_id>` (the test plays ingress and policy). */
async function appendParticipant(seedId: string, type: string, payload: object, key: string): Promise<void> {
  const draft = serviceDraft({ key: `participant:${seedId}:${key}`, eventType: type, entityType: 'participant', entityId: seedId, occurredAt: now(), actorId: 'ingress', payload, causationId: null, correlationId: seedId });
  const head = await rig.store.headOfEntity('participant', seedId);
  await rig.store.appendToEntity('participant', seedId, [draft], head.taskSeq);
}

async function spawn(reconstitutedFrom?: { seed: Seed; willHash: string }): Promise<Seed> {
  const id = name('seed');
  const key = await generateEd25519Key();
  const at = Date.now();
  const body: Unsigned<SpawnManifest> = {
    manifest_version: 'seed.spawn.v1',
    seed_id: id,
    parent_seed_id: 'director-1',
    anchor_id: 'anchor:docs',
    mode: 'ephemeral',
    role: 'docs.indexer',
    info_budget: { scope: 'on-topic', notes: 'docs only' },
    constraints: { anchor_hash: sha256Hex('anchor'), parent_hash: sha256Hex('parent'), policy_hash: sha256Hex('policy'), extra: [] },
    capabilities: { fs: ['read:docs/**'], net: [], shell: [], providers: [] },
    handoff_channel: 'trace',
    ttl: { created_at: new Date(at - 1_000).toISOString(), expires_at: new Date(at + 3_600_000).toISOString() },
    lineage: { install_id: 'writ-local', genesis_fingerprint: 'genesis:writ-local', parent_key_fingerprint: ed25519Fingerprint(director.publicJwk.x) },
    key_binding: { child_key_fingerprint: ed25519Fingerprint(key.publicJwk.x), key_role: 'seed_ephemeral' },
    oep: { version: '1', policy_profile: 'strict' },
    mission_id: 'mission-1',
    actor_id: 'director-1',
    policy: { confidentiality: 'internal', redact: [] },
    resource_limits: { max_tokens: 1_000, max_calls: 10, max_wallclock_seconds: 3_600 },
    runtime_context: { host_id: 'int', namespace: 'default' },
  };
  const manifest = (await signDocument(body, director)) as unknown as SpawnManifest;
  const manifestHash = documentPayloadHash(manifest);
  const prior = reconstitutedFrom === undefined ? null : { seed_id: reconstitutedFrom.seed.id, manifest_hash: reconstitutedFrom.seed.manifestHash, last_will_hash: reconstitutedFrom.willHash };
  await appendParticipant(
    id,
    'participant.spawn_verified',
    {
      seed_id: id,
      kind: prior === null ? 'worker' : 'reconstituted',
      manifest,
      manifest_hash: manifestHash,
      parent: { id: 'director-1', kind: 'principal', key_fingerprint: ed25519Fingerprint(director.publicJwk.x) },
      child_key: { fingerprint: ed25519Fingerprint(key.publicJwk.x), x: key.publicJwk.x },
      forensic_of: null,
      reconstituted_from: prior,
      expires_at: manifest.ttl.expires_at,
      at: now(),
    },
    'spawn',
  );
  return { id, key, manifest, manifestHash };
}

const calls = new Map<string, number>();
async function recordCall(seed: Seed, ids: TaskIds): Promise<void> {
  const call = (calls.get(seed.id) ?? 0) + 1;
  calls.set(seed.id, call);
  const payload = { seed_id: seed.id, call, manifest_hash: seed.manifestHash, task_id: ids.task_id, attempt_id: ids.attempt_id, policy_entry: 1, action_request_id: `ar-${ids.task_id}`, at: now() };
  await appendParticipant(seed.id, 'participant.call_recorded', payload, `call:${call}`);
}

async function retire(seed: Seed, deltas: LastWillDelta[]): Promise<{ will: LastWill; hash: string }> {
  const body: Unsigned<LastWill> = {
    manifest_version: 'seed.retire.v1',
    seed_id: seed.id,
    parent_seed_id: 'director-1',
    anchor_id: 'anchor:docs',
    mode: 'ephemeral',
    manifest_hash: seed.manifestHash,
    status: 'retired',
    retired_at: now(),
    summary: 'indexed the docs',
    deltas,
    open_questions: [],
    governance: { violations: [], unknowns_disclosed: true, oep_compliant: true },
    artifacts: [],
    heartbeat_last: now(),
    lineage: { install_id: 'writ-local', genesis_fingerprint: 'genesis:writ-local', child_key_fingerprint: ed25519Fingerprint(seed.key.publicJwk.x) },
    reconstitution: { reconstituted_from_seed_id: null },
  };
  const will = (await signDocument(body, seed.key)) as unknown as LastWill;
  const hash = documentPayloadHash(will);
  await appendParticipant(seed.id, 'participant.retired', { seed_id: seed.id, last_will: will, last_will_hash: hash, manifest_hash: seed.manifestHash, will_status: 'retired', deltas_applied: deltas.length, artifacts: [], at: now() }, 'retire');
  return { will, hash };
}

/** A task the participant owns (created by its first request). */
async function taskOf(owner: string): Promise<TaskIds> {
  const ids = taskIds(name('lw'));
  await append(rig, ids.task_id, ...ingressDrafts(ids, { ...commandRequest(ids, ['true']), proposed_by: owner } as ActionRequest));
  return ids;
}

/** A second handler on the same log, as another orchestrator instance would run it. */
const handlerOf = () =>
  new LastWillBeliefsHandler({
    log: new EventStoreTaskLog(rig.store),
    participants: new EventStoreParticipantStreams(rig.store),
    artifacts: { put: async (bytes) => bucket.put(bytes) },
    clock: () => new Date(),
    actorId: rig.config.env.WRIT_ORCHESTRATOR_PRINCIPAL_ID,
  });

const beliefsOf = async (taskId: string): Promise<readonly Belief[]> => foldBeliefs(await events(rig, taskId)).beliefs;
const delta = (epistemic_type: LastWillDelta['epistemic_type'], content: string): LastWillDelta => ({ epistemic_type, confidence: 0.8, content, provenance: 'docs/a.md', support: ['docs/a.md'] });

describe('Last Wills landing as beliefs through the running orchestrator', () => {
  it('given a participant that acted in its task, when its Last Will is recorded, then each delta lands once as a belief of its tier citing the stored Last Will, and a redelivery adds nothing', async () => {
    // given
    const seed = await spawn();
    const ids = await taskOf(seed.id);
    await recordCall(seed, ids);
    // when
    const { will, hash } = await retire(seed, [delta('retrieved', 'docs/a.md defines the API'), delta('hypothesis', 'the API may change soon')]);
    // then
    await waitForEvents(rig, ids.task_id, 'belief.asserted', 2);
    const beliefs = await beliefsOf(ids.task_id);
    const stored = canonicalJson(will);
    expect(beliefs.map((b) => [b.belief_id, b.trust_tier, b.epistemic_type, b.asserted_by, b.claim])).toEqual([
      [lastWillBeliefId(hash, 0), 'observed', 'retrieved', seed.id, 'docs/a.md defines the API'],
      [lastWillBeliefId(hash, 1), 'untrusted', 'hypothesis', seed.id, 'the API may change soon'],
    ]);
    expect(beliefs[0]?.evidence_refs).toEqual([{ kind: 'artifact', id: `sha256-${sha256Hex(stored)}`, selector: { kind: 'json_path', path: '$.deltas[0]' } }]);
    expect(new TextDecoder().decode((await bucket.get(sha256Hex(stored))) ?? new Uint8Array())).toBe(stored);
    const asserted = (await events(rig, ids.task_id)).filter((event) => event.event_type === 'belief.asserted');
    expect(asserted.every((event) => event.actor_id === rig.config.env.WRIT_ORCHESTRATOR_PRINCIPAL_ID)).toBe(true);
    // when the retirement is delivered again (to another instance's handler), then nothing is asserted twice
    const retired = (await rig.store.readEntity('participant', seed.id)).find((stored) => stored.event.event_type === 'participant.retired');
    const again = await handlerOf().handle({ subject: String(retired?.subject), streamSeq: Number(retired?.streamSeq) });
    expect(again.landed).toEqual([{ task_id: ids.task_id, beliefs: [] }]);
    expect((await events(rig, ids.task_id)).filter((event) => event.event_type === 'belief.asserted')).toHaveLength(2);
  });

  it('given a reconstituted participant acting in its own task, when its call is recorded, then its prior Last Will lands there; a task of another owner gets nothing', async () => {
    // given a retired participant and its reconstitution
    const prior = await spawn();
    const { hash } = await retire(prior, [delta('retrieved', 'the index lives in out/index.json')]);
    const next = await spawn({ seed: prior, willHash: hash });
    // and a participant whose call names a task it does not own (not of that task)
    const stranger = await spawn();
    const foreign = await taskOf('agent-1');
    await recordCall(stranger, foreign);
    await retire(stranger, [delta('retrieved', 'stranger knowledge')]);
    // when the reconstitution acts in its task
    const ids = await taskOf(next.id);
    await recordCall(next, ids);
    // then
    await waitForEvents(rig, ids.task_id, 'belief.asserted', 1);
    expect((await beliefsOf(ids.task_id)).map((b) => [b.belief_id, b.asserted_by, b.trust_tier])).toEqual([[lastWillBeliefId(hash, 0), prior.id, 'observed']]);
    // and its next attempt's pack carries it
    const second = { task_id: ids.task_id, step_id: `stp-${name('two')}`, attempt_id: `att-${name('two')}` };
    await append(rig, ids.task_id, ...ingressDrafts(second, followUpRequest(ids.task_id, { ...commandRequest(ids, ['true']), proposed_by: next.id } as ActionRequest, `ar-${second.attempt_id}`), { existingTask: true }));
    const pack = await waitFor(async () => (await events(rig, ids.task_id)).find((event) => event.event_type === 'context.pack_compiled' && event.attempt_id === second.attempt_id), {
      what: 'the second attempt pack',
      timeoutMs: 20_000,
      intervalMs: 25,
    });
    const bytes = new TextDecoder().decode((await bucket.get(String(pack.payload['sha256']))) ?? new Uint8Array());
    expect(JSON.parse(bytes).items.map((item: { source: { id: string } }) => item.source.id)).toContain(lastWillBeliefId(hash, 0));
    // and the foreign task holds no belief of the stranger
    await waitForIdle(rig, DURABLE);
    expect(await beliefsOf(foreign.task_id)).toEqual([]);
  });

  it('given a participant.retired published onto the subject outside the chain (forged), then it is skipped and lands nothing', async () => {
    // given a participant that acted in its task
    const seed = await spawn();
    const ids = await taskOf(seed.id);
    await recordCall(seed, ids);
    const [spawned] = (await rig.store.readEntity('participant', seed.id)).map((stored) => stored.event);
    // when a forged retirement is published raw (valid-looking, but not chained by the log's writer)
    const forged: EventEnvelope = {
      ...(spawned as EventEnvelope),
      event_id: 'evt-forged-retire',
      event_type: 'participant.retired',
      task_seq: 3,
      payload: { seed_id: seed.id, note: 'forged' },
    };
    const subject = `${rig.config.subjects.events}.participant.${seed.id}`;
    const ack = await jetstream(rig.nc).publish(subject, JSON.stringify(forged));
    await waitForIdle(rig, DURABLE);
    // and handed to another instance's handler as delivered
    expect(await handlerOf().handle({ subject, streamSeq: ack.seq })).toEqual({ seed_id: seed.id, trigger: 'quarantined', landed: [] });
    // then
    expect(await beliefsOf(ids.task_id)).toEqual([]);
  });
});
