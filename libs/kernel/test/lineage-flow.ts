import { createHash, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { ActionRequest, CrashReport, Heartbeat, LastWill, SpawnManifest } from '@writ/contracts';
import { at } from './decider-spec.js';
import type { ArtifactObservation, LineageCrypto, LocalInstall, ParentKeys, ParticipantCommand, ParticipantState } from '../src/index.js';
import { ParticipantCeilings } from '../src/index.js';

/**
 * An implementation of the kernel's LineageCrypto port written here from
 * node:crypto and `canonicalize` (not @writ/crypto's), so the kernel's tests
 * exercise the port's contract and not one implementation of it.
 */
const sha256 = (text: string | Uint8Array): string => createHash('sha256').update(text).digest('hex');

export const testCrypto: LineageCrypto = {
  payloadHash(document) {
    const { signature: _signature, ...body } = document as Record<string, unknown>;
    return sha256(canonicalize(body) as string);
  },
  fingerprint(x) {
    if (!/^[A-Za-z0-9_-]{43}$/.test(x)) throw new Error('not a key');
    return `sha256:${sha256(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`)}`;
  },
  verify(x, payloadHash, sig) {
    try {
      const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
      return verify(null, Buffer.from(payloadHash, 'hex'), key, Buffer.from(sig, 'base64'));
    } catch {
      return false;
    }
  },
};

export interface TestKey {
  readonly x: string;
  readonly fingerprint: string;
  readonly privateKey: KeyObject;
}

export function testKey(): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x as string;
  return { x, fingerprint: testCrypto.fingerprint(x), privateKey };
}

type Unsigned<T> = Omit<T, 'signature'>;

/** The document with a signature block by `key` (payload hash over the rest). */
export function signed<T extends { signature: unknown }>(body: Unsigned<T> | T, key: TestKey, overrides: Partial<{ signer: string; payload_hash: string }> = {}): T {
  const { signature: _old, ...rest } = body as T;
  const payload_hash = testCrypto.payloadHash(rest);
  const sig = sign(null, Buffer.from(overrides.payload_hash ?? payload_hash, 'hex'), key.privateKey).toString('base64');
  return { ...rest, signature: { signer: overrides.signer ?? key.fingerprint, algo: 'ed25519', payload_hash: overrides.payload_hash ?? payload_hash, sig } } as unknown as T;
}

export const HASH = { anchor: 'a'.repeat(64), parent: 'b'.repeat(64), policy: 'c'.repeat(64), other: 'e'.repeat(64) };

export const INSTALL: LocalInstall = {
  install_id: 'install-1',
  genesis_fingerprint: 'genesis:1',
  ceilings: ParticipantCeilings.parse({
    fs: ['read:**', 'write:out/**'],
    net: ['api.example.com', '*.docs.example.com'],
    shell: ['ls', 'cat', 'git'],
    providers: ['anthropic'],
    max_ttl_seconds: 7_200,
    resource_limits: { max_tokens: 100_000, max_calls: 100, max_wallclock_seconds: 7_200 },
  }),
  clock_skew_seconds: 300,
};

/** The keys of one test world: a director principal (the parent), the child, and strangers. */
export const KEYS = { parent: testKey(), child: testKey(), child2: testKey(), stranger: testKey() };

export const PARENT: ParentKeys = { id: 'director-1', kind: 'principal', keys: [KEYS.parent.x] };

/** An unsigned manifest of seed `seed-1`, parent director-1, TTL T0 .. T0+1h. */
export function manifestBody(overrides: Partial<Unsigned<SpawnManifest>> = {}): Unsigned<SpawnManifest> {
  return {
    manifest_version: 'seed.spawn.v1',
    seed_id: 'seed-1',
    parent_seed_id: 'director-1',
    anchor_id: 'anchor:docs',
    mode: 'ephemeral',
    role: 'docs.indexer',
    info_budget: { scope: 'on-topic', notes: 'docs only' },
    constraints: { anchor_hash: HASH.anchor, parent_hash: HASH.parent, policy_hash: HASH.policy, extra: [] },
    capabilities: { fs: ['read:docs/**', 'write:out/**'], net: ['api.example.com'], shell: ['ls', 'cat'], providers: ['anthropic'] },
    handoff_channel: 'trace',
    ttl: { created_at: at(0), expires_at: at(3_600) },
    lineage: { install_id: INSTALL.install_id, genesis_fingerprint: INSTALL.genesis_fingerprint, parent_key_fingerprint: KEYS.parent.fingerprint },
    key_binding: { child_key_fingerprint: KEYS.child.fingerprint, key_role: 'seed_ephemeral' },
    oep: { version: '1', policy_profile: 'strict' },
    mission_id: 'mission-1',
    actor_id: 'director-1',
    policy: { confidentiality: 'internal', redact: [] },
    resource_limits: { max_tokens: 10_000, max_calls: 20, max_wallclock_seconds: 3_600 },
    runtime_context: { host_id: 'host-1', namespace: 'default' },
    ...overrides,
  };
}

export const manifest = (overrides: Partial<Unsigned<SpawnManifest>> = {}, key: TestKey = KEYS.parent): SpawnManifest => signed<SpawnManifest>(manifestBody(overrides), key);

export function heartbeatBody(seq: number, overrides: Partial<Unsigned<Heartbeat>> = {}): Unsigned<Heartbeat> {
  return {
    heartbeat_version: 'seed.heartbeat.v1',
    seed_id: 'seed-1',
    parent_seed_id: 'director-1',
    heartbeat_seq: seq,
    last_event_seq: seq * 10,
    constraints: { anchor_hash: HASH.anchor, parent_hash: HASH.parent, policy_hash: HASH.policy },
    ttl: { expires_at: at(3_600) },
    sent_at: at(seq),
    ...overrides,
  };
}

export const heartbeat = (seq: number, overrides: Partial<Unsigned<Heartbeat>> = {}, key: TestKey = KEYS.child): Heartbeat => signed<Heartbeat>(heartbeatBody(seq, overrides), key);

export function lastWillBody(manifestHash: string, overrides: Partial<Unsigned<LastWill>> = {}): Unsigned<LastWill> {
  return {
    manifest_version: 'seed.retire.v1',
    seed_id: 'seed-1',
    parent_seed_id: 'director-1',
    anchor_id: 'anchor:docs',
    mode: 'ephemeral',
    manifest_hash: manifestHash,
    status: 'retired',
    retired_at: at(600),
    summary: 'indexed the docs',
    deltas: [{ epistemic_type: 'retrieved', confidence: 0.9, content: 'docs/a.md defines the API', provenance: 'docs/a.md', support: ['docs/a.md'] }],
    open_questions: [],
    governance: { violations: [], unknowns_disclosed: true, oep_compliant: true },
    artifacts: [{ path: 'out/index.json', sha256: HASH.other, encrypted_to: KEYS.parent.fingerprint, channel: 'trace' }],
    heartbeat_last: at(590),
    lineage: { install_id: INSTALL.install_id, genesis_fingerprint: INSTALL.genesis_fingerprint, child_key_fingerprint: KEYS.child.fingerprint },
    reconstitution: { reconstituted_from_seed_id: null },
    ...overrides,
  };
}

export const lastWill = (manifestHash: string, overrides: Partial<Unsigned<LastWill>> = {}, key: TestKey = KEYS.child): LastWill =>
  signed<LastWill>(lastWillBody(manifestHash, overrides), key);

export const crashReport = (overrides: Partial<Unsigned<CrashReport>> = {}, key: TestKey = KEYS.parent): CrashReport =>
  signed<CrashReport>({ report_version: 'seed.crash.v1', seed_id: 'seed-1', parent_seed_id: 'director-1', reason: 'exit status 137', observed_at: at(100), ...overrides }, key);

/** The artifact of `lastWillBody`, presented with the declared hash. */
export const PRESENTED: readonly ArtifactObservation[] = [{ path: 'out/index.json', sha256: HASH.other, source: 'presented' }];

const meta = (s: number) => ({ now: at(s) });

/** Participant commands at `s` seconds after T0. */
export const P = {
  spawn: (s: number, m: unknown, extra: { child?: string; parent?: ParentKeys | null; install?: LocalInstall; seed_id?: string } = {}): ParticipantCommand => ({
    type: 'verify-spawn',
    data: {
      seed_id: extra.seed_id ?? ((m as { seed_id?: string }).seed_id as string),
      manifest: m,
      child_public_key: extra.child ?? KEYS.child.x,
      parent: extra.parent === undefined ? PARENT : extra.parent,
      install: extra.install ?? INSTALL,
    },
    metadata: meta(s),
  }),
  forensic: (s: number, m: SpawnManifest, target: ParticipantState, child = KEYS.child2.x): ParticipantCommand => ({
    type: 'spawn-forensic',
    data: { seed_id: m.seed_id, manifest: m, child_public_key: child, parent: PARENT, install: INSTALL, target },
    metadata: meta(s),
  }),
  reconstitute: (s: number, m: SpawnManifest, prior: ParticipantState, child = KEYS.child2.x): ParticipantCommand => ({
    type: 'reconstitute',
    data: { seed_id: m.seed_id, manifest: m, child_public_key: child, parent: PARENT, install: INSTALL, prior },
    metadata: meta(s),
  }),
  beat: (s: number, hb: unknown, seed_id = 'seed-1'): ParticipantCommand => ({ type: 'record-heartbeat', data: { seed_id, heartbeat: hb }, metadata: meta(s) }),
  retire: (s: number, will: unknown, artifacts: readonly ArtifactObservation[] = PRESENTED, seed_id = 'seed-1'): ParticipantCommand => ({
    type: 'ingest-retire',
    data: { seed_id, last_will: will, artifacts, clock_skew_seconds: 300 },
    metadata: meta(s),
  }),
  crash: (s: number, report: unknown, parent: ParentKeys | null = PARENT, seed_id = 'seed-1'): ParticipantCommand => ({
    type: 'report-crash',
    data: { seed_id, crash_report: report, parent },
    metadata: meta(s),
  }),
  expire: (s: number, seed_id = 'seed-1'): ParticipantCommand => ({ type: 'expire', data: { seed_id }, metadata: meta(s) }),
  /** The policy service admitting action `n` of the seed (attempt `att-<n>`, first policy entry). */
  call: (s: number, n: number, seed_id = 'seed-1'): ParticipantCommand => ({
    type: 'record-call',
    data: { seed_id, task_id: `tsk-${n}`, attempt_id: `att-${n}`, policy_entry: 1, action_request_id: `ar-${n}` },
    metadata: meta(s),
  }),
};

/** An ActionRequest of `action_class` for the scope tests (a new task, so it parses). */
export function participantRequest(overrides: Partial<ActionRequest> & Pick<ActionRequest, 'action_class' | 'target_resources' | 'params'>): ActionRequest {
  return {
    action_request_id: 'ar-1',
    task: { title: 't', goal: 'g', policy_profile: 'local_edit_allowed', files_owned: ['**'] },
    expected_effects: [],
    reversibility_hint: 'reversible',
    reason: 'test',
    proposed_by: 'seed-1',
    proposed_at: at(10),
    ...overrides,
  } as ActionRequest;
}
