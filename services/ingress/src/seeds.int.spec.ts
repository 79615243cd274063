import { BusClient } from '@writ/bus';
import { ParticipantSpawnVerified, httpAudience, type ActionRequest, type CheckParticipantActionReply, type SeedVerdict, type SpawnManifest } from '@writ/contracts';
import { documentPayloadHash, sha256Hex, type Ed25519SigningKey } from '@writ/crypto';
import { NatsArtifactStore, mintHttpToken } from '@writ/runtime';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPrincipal, revokeKey } from '../test/fixtures.js';
import {
  HASH,
  crashBody,
  heartbeatBody,
  lastWillBody,
  manifestBody,
  participantEvents,
  seedKey,
  sign,
  startSeedIngress,
  waitForParticipantEvent,
  type ManifestParts,
  type SeedIngress,
  type SeedKey,
} from '../test/seed-fixtures.js';

// Seed 002's test plan against a real ingress (real NATS, its own subject root, streams and artifact bucket):
// every verification outcome must be an event on <events>.participant.<seed_id>.

let t: SeedIngress;
let bus: BusClient;
let parentId: string;
let parent: SeedKey;
/** Who reads GET /v1/seeds/<id>: an observer (a dashboard) with its own key; and an agent, which may not. */
let reader: { id: string; key: Ed25519SigningKey };
let agent: { id: string; key: Ed25519SigningKey };

beforeAll(async () => {
  t = await startSeedIngress();
  bus = new BusClient(t.nc);
  parent = await seedKey();
  parentId = (await registerPrincipal(t.store, { id: uniqueName('director'), type: 'user', key: parent.key })).id;
  reader = await registerPrincipal(t.store, { id: uniqueName('dashboard'), type: 'system', roles: ['observer'] });
  agent = await registerPrincipal(t.store, { id: uniqueName('agent'), type: 'agent' });
});

/** `Bearer <token>` for this ingress's API, signed by `who` (default the observer). */
const bearer = async (who = reader) => `Bearer ${await mintHttpToken({ principalId: who.id, key: who.key, audience: httpAudience(t.config.subjectRoot), now: new Date() })}`;

afterAll(async () => {
  await bus?.close();
  await t?.stop();
});

async function http<T>(method: 'GET' | 'POST', path: string, body?: unknown, authorization?: string | null): Promise<{ status: number; body: T }> {
  // A GET reads as the observer unless told otherwise (null: no credential); a POST carries its own signed document.
  const auth = authorization === null ? undefined : (authorization ?? (method === 'GET' ? await bearer() : undefined));
  const response = await fetch(`${t.ingress.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(auth === undefined ? {} : { authorization: auth }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

const spawnHttp = (manifest: unknown, child: SeedKey) => http<SeedVerdict>('POST', '/v1/seeds/spawn/verify', { manifest, child_public_key: child.x });
const spawnBus = (manifest: unknown, child: SeedKey) => bus.request<SeedVerdict>(t.config.seeds.subjects.spawnVerify, { manifest, child_public_key: child.x });
const beatBus = (heartbeat: unknown) => bus.request<SeedVerdict>(t.config.seeds.subjects.heartbeatVerify, { heartbeat });
const retireHttp = (last_will: unknown, artifacts?: { path: string; content_base64: string }[]) =>
  http<SeedVerdict>('POST', '/v1/seeds/retire/ingest', { last_will, ...(artifacts === undefined ? {} : { artifacts }) });
const crashBus = (crash_report: unknown) => bus.request<SeedVerdict>(t.config.seeds.subjects.crashReport, { crash_report });
const checkBus = (seed_id: string, action_request: ActionRequest) => bus.request<CheckParticipantActionReply>(t.config.seeds.subjects.participantCheck, { seed_id, action_request });

const types = async (seedId: string) => (await participantEvents(t.store, seedId)).map((event) => event.event_type);

/** A new seed id, a new child key, and a manifest signed by the registered parent (overrides before signing). */
async function world(overrides: Partial<SpawnManifest> = {}, extra: Partial<ManifestParts> = {}) {
  const child = await seedKey();
  const parts: ManifestParts = { seedId: uniqueName('seed'), parentId, parent, child, ...extra };
  const manifest = await sign<SpawnManifest>(manifestBody(parts, overrides), parts.parent);
  return { seedId: parts.seedId, child, manifest, manifestHash: documentPayloadHash(manifest) };
}

function request(seedId: string, overrides: Pick<ActionRequest, 'action_class' | 'target_resources' | 'params'>): ActionRequest {
  return {
    action_request_id: uniqueName('ar'),
    task: { title: 'seed action', goal: 'act within the manifest', policy_profile: 'local_edit_allowed', files_owned: ['**'] },
    expected_effects: [],
    reversibility_hint: 'reversible',
    reason: 'seed 002 scope test',
    proposed_by: seedId,
    proposed_at: new Date().toISOString(),
    ...overrides,
  };
}

describe('seed 002 over a running ingress', () => {
  it('happy path: valid manifest → spawn → heartbeats → valid Last Will → deltas applied and artifact stored', async () => {
    // given a manifest signed by the parent principal
    const { seedId, child, manifest, manifestHash } = await world();
    // when it is verified over HTTP
    const spawned = await spawnHttp(manifest, child);
    // then it is accepted and the participant is active
    expect(spawned.status).toBe(200);
    expect(spawned.body).toMatchObject({ seed_id: seedId, outcome: 'accepted', status: 'active', manifest_hash: manifestHash, events: ['participant.spawn_verified'] });
    const verified = ParticipantSpawnVerified.parse((await participantEvents(t.store, seedId))[0]!.payload);
    expect(verified).toMatchObject({ kind: 'worker', parent: { id: parentId, kind: 'principal', key_fingerprint: parent.fingerprint }, child_key: { fingerprint: child.fingerprint, x: child.x } });

    // when two heartbeats arrive over the bus
    expect(await beatBus(await sign(heartbeatBody(manifest, 1), child))).toMatchObject({ outcome: 'accepted', status: 'active', events: ['participant.heartbeat_recorded'] });
    expect(await beatBus(await sign(heartbeatBody(manifest, 2), child))).toMatchObject({ outcome: 'accepted', status: 'active' });

    // and the Last Will with its artifact bytes
    const bytes = Buffer.from('{"indexed":12}');
    const will = await sign(lastWillBody(manifest, manifestHash, { artifacts: [{ path: 'out/index.json', sha256: sha256Hex(bytes), encrypted_to: parent.fingerprint, channel: 'trace' }] }), child);
    const retired = await retireHttp(will, [{ path: 'out/index.json', content_base64: bytes.toString('base64') }]);

    // then it is retired with its deltas applied, after the heartbeats, and the artifact is in the bucket
    expect(retired.status).toBe(200);
    expect(retired.body).toMatchObject({ outcome: 'accepted', status: 'retired', last_will_hash: documentPayloadHash(will) });
    expect(await types(seedId)).toEqual(['participant.spawn_verified', 'participant.heartbeat_recorded', 'participant.heartbeat_recorded', 'participant.retired']);
    const retiredEvent = (await participantEvents(t.store, seedId)).at(-1)!;
    expect(retiredEvent.payload).toMatchObject({ deltas_applied: 1, manifest_hash: manifestHash, artifacts: [{ path: 'out/index.json', verified_by: 'presented' }] });
    const bucket = await NatsArtifactStore.open(t.nc, { bucket: t.artifactsBucket, maxBytes: 16 * 1024 ** 2, replicas: 1, failure: (message) => new Error(message) });
    expect(Buffer.from((await bucket.get(sha256Hex(bytes)))!).toString()).toBe('{"indexed":12}');

    // and the same Last Will again is a duplicate: nothing more is appended
    expect((await retireHttp(will, [{ path: 'out/index.json', content_base64: bytes.toString('base64') }])).body).toMatchObject({ outcome: 'duplicate', status: 'retired' });
    expect(await types(seedId)).toHaveLength(4);
    const shown = await http<Record<string, unknown>>('GET', `/v1/seeds/${seedId}`);
    expect(shown).toMatchObject({ status: 200, body: { status: 'retired', heartbeat: { last_seq: 2 }, last_will: { deltas_applied: 1 } } });

    // and reading it needs a credential (401 without), which an agent's does not cover (404, as for an unknown seed)
    expect(await http<{ code: string }>('GET', `/v1/seeds/${seedId}`, undefined, null)).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_MISSING' } });
    expect(await http<{ code: string }>('GET', `/v1/seeds/${seedId}`, undefined, await bearer(agent))).toMatchObject({ status: 404, body: { code: 'INGRESS_PARTICIPANT_UNKNOWN' } });
  });

  it('TTL expiry: with no heartbeat at all the watchdog marks the participant expired once; a Last Will after it is refused', async () => {
    // given a participant whose TTL ends in 2 s
    const { seedId, child, manifest, manifestHash } = await world({}, { ttlMs: 2_000 });
    expect((await spawnBus(manifest, child)).outcome).toBe('accepted');
    // when nothing else happens, then the timer (held on the NATS server) expires it
    const events = await waitForParticipantEvent(t.store, seedId, 'participant.expired');
    expect(events.map((event) => event.event_type)).toEqual(['participant.spawn_verified', 'participant.expired']);
    // and a Last Will arriving afterwards is refused and recorded, the expiry not repeated
    const late = await retireHttp(await sign(lastWillBody(manifest, manifestHash, { retired_at: new Date(Date.parse(manifest.ttl.expires_at) - 100).toISOString() }), child));
    expect(late.status).toBe(422);
    expect(late.body).toMatchObject({ outcome: 'refused', code: 'RETIRE_AFTER_EXPIRY', status: 'expired' });
    expect(await types(seedId)).toEqual(['participant.spawn_verified', 'participant.expired', 'participant.retire_refused']);
    // and a heartbeat too
    expect(await beatBus(await sign(heartbeatBody(manifest, 1), child))).toMatchObject({ outcome: 'refused', code: 'HEARTBEAT_PARTICIPANT_TERMINAL' });
  });

  it('TTL expiry before the watchdog: a Last Will after expires_at expires the participant and is refused as RETIRE_AFTER_EXPIRY', async () => {
    const { seedId, child, manifest, manifestHash } = await world({}, { ttlMs: 1_500 });
    expect((await spawnBus(manifest, child)).outcome).toBe('accepted');
    const will = await sign(lastWillBody(manifest, manifestHash, { retired_at: new Date(Date.parse(manifest.ttl.expires_at) - 100).toISOString() }), child);
    // when the Last Will arrives after expires_at (the timer may or may not have fired yet)
    await waitForParticipantEvent(t.store, seedId, 'participant.spawn_verified');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(manifest.ttl.expires_at) - Date.now() + 50)));
    const late = await retireHttp(will);
    // then it is refused either way, and participant.expired is in the log exactly once
    expect(late.body).toMatchObject({ outcome: 'refused', code: 'RETIRE_AFTER_EXPIRY', status: 'expired' });
    const all = await types(seedId);
    expect(all.filter((type) => type === 'participant.expired')).toHaveLength(1);
    expect(all).not.toContain('participant.retired');
  });

  it('capability enforcement: beyond the ceilings is refused; out-of-allowlist actions are denied; capabilities change only with a new signed manifest', async () => {
    // given a manifest asking for a program beyond the local ceilings
    const greedy = await world({ capabilities: { fs: ['read:docs/**'], net: [], shell: ['rm'], providers: [] } });
    const refused = await spawnHttp(greedy.manifest, greedy.child);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ outcome: 'refused', status: 'none', code: 'SPAWN_CAPABILITY_EXCEEDS_CEILING' });
    expect(await types(greedy.seedId)).toEqual(['participant.spawn_refused']);

    // given a participant within them
    const { seedId, child, manifest } = await world();
    expect((await spawnBus(manifest, child)).outcome).toBe('accepted');
    // then actions inside its manifest are allowed, anything else denied
    expect(await checkBus(seedId, request(seedId, { action_class: 'read_local', target_resources: ['docs/a.md'], params: { path: 'docs/a.md' } }))).toEqual({ seed_id: seedId, allowed: true });
    const denied = [
      [request(seedId, { action_class: 'write_local', target_resources: ['docs/a.md'], params: { path: 'docs/a.md', content: 'x' } }), 'PARTICIPANT_PATH_DENIED'],
      [request(seedId, { action_class: 'network_read', target_resources: ['https://evil.example.net/'], params: { url: 'https://evil.example.net/', method: 'GET' } }), 'PARTICIPANT_HOST_DENIED'],
      [request(seedId, { action_class: 'execute_command', target_resources: ['docs/'], params: { argv: ['grep', '-r', 'x', 'docs'] } }), 'PARTICIPANT_COMMAND_DENIED'],
      [request(seedId, { action_class: 'payment', target_resources: ['https://api.example.com/pay'], params: { url: 'https://api.example.com/pay' } }), 'PARTICIPANT_ACTION_CLASS_DENIED'],
    ] as const;
    for (const [action, code] of denied) expect(await checkBus(seedId, action)).toMatchObject({ allowed: false, code });

    // when the capabilities are widened in place (not re-signed)
    const widened = { ...manifest, capabilities: { ...manifest.capabilities, shell: ['ls', 'cat', 'grep'] } };
    expect(await spawnBus(widened, child)).toMatchObject({ outcome: 'refused', code: 'SPAWN_PAYLOAD_HASH_MISMATCH', status: 'active' });
    // then the scope is unchanged
    expect(await checkBus(seedId, denied[2][0])).toMatchObject({ allowed: false, code: 'PARTICIPANT_COMMAND_DENIED' });
    // when the parent signs a new manifest with the wider capabilities, then it is renewed and the scope follows
    const renewed = await sign<SpawnManifest>(widened, parent);
    expect(await spawnBus(renewed, child)).toMatchObject({ outcome: 'accepted', events: ['participant.manifest_renewed'] });
    expect(await checkBus(seedId, denied[2][0])).toEqual({ seed_id: seedId, allowed: true });
    expect(await types(seedId)).toEqual(['participant.spawn_verified', 'participant.spawn_refused', 'participant.manifest_renewed']);
  });

  it('tampered manifest: a field changed without re-signing, another genesis or another install are refused and recorded', async () => {
    const tampered = await world();
    const edited = { ...tampered.manifest, role: 'docs.writer' };
    expect((await spawnHttp(edited, tampered.child)).body).toMatchObject({ outcome: 'refused', code: 'SPAWN_PAYLOAD_HASH_MISMATCH', status: 'none' });
    const genesis = await world({ lineage: { install_id: 'install-it', genesis_fingerprint: 'genesis:elsewhere', parent_key_fingerprint: parent.fingerprint } });
    expect((await spawnHttp(genesis.manifest, genesis.child)).body).toMatchObject({ outcome: 'refused', code: 'SPAWN_GENESIS_MISMATCH' });
    const install = await world({ lineage: { install_id: 'install-other', genesis_fingerprint: 'genesis:it', parent_key_fingerprint: parent.fingerprint } });
    expect((await spawnHttp(install.manifest, install.child)).body).toMatchObject({ outcome: 'refused', code: 'SPAWN_INSTALL_MISMATCH' });
    for (const seedId of [tampered.seedId, genesis.seedId, install.seedId]) expect(await types(seedId)).toEqual(['participant.spawn_refused']);
    // and a TTL edited in place on a live participant is SPAWN_TTL_EDITED
    expect((await spawnHttp(tampered.manifest, tampered.child)).body).toMatchObject({ outcome: 'accepted' });
    const extended = { ...tampered.manifest, ttl: { ...tampered.manifest.ttl, expires_at: new Date(Date.parse(tampered.manifest.ttl.expires_at) + 3_600_000).toISOString() } };
    expect((await spawnHttp(extended, tampered.child)).body).toMatchObject({ outcome: 'refused', code: 'SPAWN_TTL_EDITED', status: 'active' });
    expect((await http<Record<string, unknown>>('GET', `/v1/seeds/${tampered.seedId}`)).body).toMatchObject({ expires_at: tampered.manifest.ttl.expires_at });
  });

  it('tampered Last Will: changed content, another manifest_hash or wrong artifact bytes are refused; the intact one then retires', async () => {
    const { seedId, child, manifest, manifestHash } = await world();
    await spawnBus(manifest, child);
    const will = await sign(lastWillBody(manifest, manifestHash), child);
    expect((await retireHttp({ ...will, summary: 'rewritten later' })).body).toMatchObject({ outcome: 'refused', code: 'RETIRE_PAYLOAD_HASH_MISMATCH', status: 'active' });
    expect((await retireHttp({ ...will, manifest_hash: HASH.drift })).body).toMatchObject({ code: 'RETIRE_PAYLOAD_HASH_MISMATCH' });
    expect((await retireHttp(await sign(lastWillBody(manifest, HASH.drift), child))).body).toMatchObject({ code: 'RETIRE_MANIFEST_HASH_MISMATCH' });
    const declared = await sign(lastWillBody(manifest, manifestHash, { artifacts: [{ path: 'out/a.txt', sha256: sha256Hex('real'), encrypted_to: parent.fingerprint, channel: 'trace' }] }), child);
    expect((await retireHttp(declared, [{ path: 'out/a.txt', content_base64: Buffer.from('forged').toString('base64') }])).body).toMatchObject({ code: 'RETIRE_ARTIFACT_HASH_MISMATCH' });
    expect((await retireHttp(declared)).body).toMatchObject({ code: 'RETIRE_ARTIFACT_MISSING' });
    expect((await retireHttp(will)).body).toMatchObject({ outcome: 'accepted', status: 'retired' });
    expect(await types(seedId)).toEqual([
      'participant.spawn_verified',
      'participant.retire_refused',
      'participant.retire_refused',
      'participant.retire_refused',
      'participant.retire_refused',
      'participant.retire_refused',
      'participant.retired',
    ]);
  });

  it('hash drift: anchor or policy drift pauses (actions denied), matching hashes resume, a parent hash change fails at once', async () => {
    const { seedId, child, manifest } = await world();
    await spawnBus(manifest, child);
    const drifted = await beatBus(await sign(heartbeatBody(manifest, 1, { constraints: { anchor_hash: HASH.drift, parent_hash: HASH.parent, policy_hash: HASH.policy } }), child));
    expect(drifted).toMatchObject({ outcome: 'accepted', status: 'paused', events: ['participant.heartbeat_recorded', 'participant.paused'] });
    expect(await checkBus(seedId, request(seedId, { action_class: 'read_local', target_resources: ['docs/a.md'], params: { path: 'docs/a.md' } }))).toMatchObject({ allowed: false, code: 'PARTICIPANT_NOT_ACTIVE' });
    expect(await beatBus(await sign(heartbeatBody(manifest, 2), child))).toMatchObject({ status: 'active', events: ['participant.heartbeat_recorded', 'participant.resumed'] });
    const policyDrift = await beatBus(await sign(heartbeatBody(manifest, 3, { constraints: { anchor_hash: HASH.anchor, parent_hash: HASH.parent, policy_hash: HASH.drift } }), child));
    expect(policyDrift).toMatchObject({ status: 'paused' });
    // a gap and a late heartbeat are logged
    expect(await beatBus(await sign(heartbeatBody(manifest, 5), child))).toMatchObject({ anomalies: ['HEARTBEAT_GAP'], status: 'active' });
    expect(await beatBus(await sign(heartbeatBody(manifest, 4), child))).toMatchObject({ anomalies: ['HEARTBEAT_OUT_OF_ORDER'], events: ['participant.heartbeat_anomaly'] });
    const parentChanged = await beatBus(await sign(heartbeatBody(manifest, 6, { constraints: { anchor_hash: HASH.anchor, parent_hash: HASH.drift, policy_hash: HASH.policy } }), child));
    expect(parentChanged).toMatchObject({ outcome: 'accepted', status: 'failed', code: 'HEARTBEAT_PARENT_HASH_CHANGED' });
    expect(await types(seedId)).toEqual([
      'participant.spawn_verified',
      'participant.heartbeat_recorded',
      'participant.paused',
      'participant.heartbeat_recorded',
      'participant.resumed',
      'participant.heartbeat_recorded',
      'participant.paused',
      'participant.heartbeat_anomaly',
      'participant.heartbeat_recorded',
      'participant.resumed',
      'participant.heartbeat_anomaly',
      'participant.heartbeat_recorded',
      'participant.failed',
    ]);
  });

  it('wrong signer: a manifest signed by a non-parent, a Last Will or heartbeat signed by a non-child, and a revoked parent key are refused', async () => {
    const stranger = await seedKey();
    const forged = await world({}, { parent: stranger });
    expect((await spawnHttp(forged.manifest, forged.child)).body).toMatchObject({ outcome: 'refused', code: 'SPAWN_SIGNER_NOT_PARENT' });
    const { seedId, child, manifest, manifestHash } = await world();
    await spawnBus(manifest, child);
    expect((await retireHttp(await sign(lastWillBody(manifest, manifestHash), stranger))).body).toMatchObject({ code: 'RETIRE_SIGNER_NOT_CHILD' });
    expect((await retireHttp(await sign(lastWillBody(manifest, manifestHash), parent))).body).toMatchObject({ code: 'RETIRE_SIGNER_NOT_CHILD' });
    expect(await beatBus(await sign(heartbeatBody(manifest, 1), stranger))).toMatchObject({ outcome: 'refused', code: 'HEARTBEAT_SIGNER_NOT_CHILD' });
    expect(await types(seedId)).toEqual(['participant.spawn_verified', 'participant.retire_refused', 'participant.retire_refused', 'participant.heartbeat_refused']);

    // given a second parent whose key is then revoked
    const revokedKey = await seedKey();
    const revokedParent = (await registerPrincipal(t.store, { id: uniqueName('director'), type: 'user', key: revokedKey.key })).id;
    await revokeKey(t.store, revokedParent, revokedKey.key.kid);
    const orphan = await world({ parent_seed_id: revokedParent, actor_id: revokedParent }, { parent: revokedKey, parentId: revokedParent });
    expect((await spawnHttp(orphan.manifest, orphan.child)).body).toMatchObject({ code: 'SPAWN_SIGNER_NOT_PARENT' });
  });

  it('forensic flow: a crash leaves no state update; a read-only forensic seed on it is verified and its Last Will logged', async () => {
    // given a participant that crashes (its parent reports it)
    const crashed = await world();
    await spawnBus(crashed.manifest, crashed.child);
    expect(await crashBus(await sign(crashBody(crashed.manifest), parent))).toMatchObject({ outcome: 'accepted', status: 'failed', code: 'PARTICIPANT_CRASHED' });
    // then no Last Will can update it any more
    expect((await retireHttp(await sign(lastWillBody(crashed.manifest, crashed.manifestHash), crashed.child))).body).toMatchObject({ code: 'RETIRE_PARTICIPANT_TERMINAL', status: 'failed' });
    expect(await types(crashed.seedId)).toEqual(['participant.spawn_verified', 'participant.failed', 'participant.retire_refused']);

    // when a forensic seed asks to write, it is refused; read-only, it is verified
    const extra = [`forensic_of:${crashed.seedId}`, `forensic_manifest_hash:${crashed.manifestHash}`];
    const constraints = { anchor_hash: HASH.anchor, parent_hash: HASH.parent, policy_hash: HASH.policy, extra };
    const writer = await world({ constraints, capabilities: { fs: ['read:**', 'write:out/**'], net: [], shell: [], providers: [] } });
    expect((await spawnHttp(writer.manifest, writer.child)).body).toMatchObject({ code: 'SPAWN_FORENSIC_NOT_READ_ONLY' });
    const forensic = await world({ constraints, capabilities: { fs: ['read:**'], net: [], shell: [], providers: ['anthropic'] } });
    expect((await spawnHttp(forensic.manifest, forensic.child)).body).toMatchObject({ outcome: 'accepted', status: 'active' });
    expect((await participantEvents(t.store, forensic.seedId))[0]!.payload).toMatchObject({ kind: 'forensic', forensic_of: { seed_id: crashed.seedId, manifest_hash: crashed.manifestHash } });
    // and its scope is read-only
    expect(await checkBus(forensic.seedId, request(forensic.seedId, { action_class: 'write_local', target_resources: ['out/x'], params: { path: 'out/x', content: 'x' } }))).toMatchObject({
      allowed: false,
      code: 'PARTICIPANT_PATH_DENIED',
    });
    // and its Last Will of forensic insights is accepted
    const insight = await sign(
      lastWillBody(forensic.manifest, forensic.manifestHash, { deltas: [{ epistemic_type: 'forensic_insight', confidence: 0.7, content: 'killed by the OOM killer', provenance: 'cell logs', support: [] }] }),
      forensic.child,
    );
    expect((await retireHttp(insight)).body).toMatchObject({ outcome: 'accepted', status: 'retired' });
    // and the crashed participant is unchanged
    expect(await types(crashed.seedId)).toEqual(['participant.spawn_verified', 'participant.failed', 'participant.retire_refused']);
  });

  it('reconstitution flow: needs the prior verified manifest and Last Will, links lineage, and shares no state', async () => {
    // given a retired participant with three heartbeats
    const prior = await world();
    await spawnBus(prior.manifest, prior.child);
    for (const seq of [1, 2, 3]) await beatBus(await sign(heartbeatBody(prior.manifest, seq), prior.child));
    const priorWill = await sign(lastWillBody(prior.manifest, prior.manifestHash), prior.child);
    expect((await retireHttp(priorWill)).body).toMatchObject({ status: 'retired' });
    const willHash = documentPayloadHash(priorWill);
    const link = (manifestHash: string, lastWillHash: string) => ({
      anchor_hash: HASH.anchor,
      parent_hash: HASH.parent,
      policy_hash: HASH.policy,
      extra: [`reconstituted_from:${prior.seedId}`, `prior_manifest_hash:${manifestHash}`, `prior_last_will_hash:${lastWillHash}`],
    });

    // when a new seed names other hashes, it is refused
    const wrong = await world({ constraints: link(prior.manifestHash, HASH.drift) });
    expect((await spawnHttp(wrong.manifest, wrong.child)).body).toMatchObject({ code: 'SPAWN_RECONSTITUTION_PRIOR_INVALID' });
    // when it names the verified manifest and Last Will, it is verified with the link
    const next = await world({ constraints: link(prior.manifestHash, willHash) });
    expect((await spawnHttp(next.manifest, next.child)).body).toMatchObject({ outcome: 'accepted', status: 'active' });
    expect((await participantEvents(t.store, next.seedId))[0]!.payload).toMatchObject({
      kind: 'reconstituted',
      reconstituted_from: { seed_id: prior.seedId, manifest_hash: prior.manifestHash, last_will_hash: willHash },
    });
    // then nothing of the prior seed's state is reused: its heartbeats start again at 1, without a gap
    expect(await beatBus(await sign(heartbeatBody(next.manifest, 1), next.child))).toMatchObject({ outcome: 'accepted', events: ['participant.heartbeat_recorded'] });
    // and its Last Will must carry the lineage link
    const unlinked = await sign(lastWillBody(next.manifest, next.manifestHash), next.child);
    expect((await retireHttp(unlinked)).body).toMatchObject({ code: 'RETIRE_LINEAGE_MISMATCH' });
    const linked = await sign(lastWillBody(next.manifest, next.manifestHash, { reconstitution: { reconstituted_from_seed_id: prior.seedId } }), next.child);
    expect((await retireHttp(linked)).body).toMatchObject({ outcome: 'accepted', status: 'retired' });

    // and a crashed seed (no Last Will) cannot be reconstituted
    const crashed = await world();
    await spawnBus(crashed.manifest, crashed.child);
    await crashBus(await sign(crashBody(crashed.manifest), parent));
    const fromCrash = await world({
      constraints: { ...link(crashed.manifestHash, willHash), extra: [`reconstituted_from:${crashed.seedId}`, `prior_manifest_hash:${crashed.manifestHash}`, `prior_last_will_hash:${willHash}`] },
    });
    expect((await spawnHttp(fromCrash.manifest, fromCrash.child)).body).toMatchObject({ code: 'SPAWN_RECONSTITUTION_PRIOR_INVALID' });
  });

  it('malformed requests: a command that is not VerifySpawn is CONTRACT_INVALID and records nothing; an unknown seed is 404', async () => {
    const bad = await http<{ code: string }>('POST', '/v1/seeds/spawn/verify', { manifest: { seed_id: 'a.b' } });
    expect(bad).toMatchObject({ status: 400, body: { code: 'CONTRACT_INVALID' } });
    expect((await http<{ code: string }>('GET', `/v1/seeds/${uniqueName('nobody')}`)).status).toBe(404);
    await expect(bus.request(t.config.seeds.subjects.heartbeatVerify, { heartbeat: 'x' })).rejects.toMatchObject({ code: 'CONTRACT_INVALID' });
  });
});
