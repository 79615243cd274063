import type { CrashReport, EventEnvelope, Heartbeat, LastWill, SpawnManifest } from '@writ/contracts';
import { ed25519Fingerprint, generateEd25519Key, sha256Hex, signDocument, type Ed25519SigningKey } from '@writ/crypto';
import type { EventStore } from '@writ/eventstore';
import { deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { startTestIngress, type TestIngress } from './fixtures.js';

type Unsigned<T> = Omit<T, 'signature'>;

export const INSTALL_ID = 'install-it';
export const GENESIS = 'genesis:it';
export const HASH = { anchor: sha256Hex('anchor'), parent: sha256Hex('parent'), policy: sha256Hex('policy'), drift: sha256Hex('drift') };

/** Ceilings of the test ingress: read anywhere, write under out/, two hosts, three programs, one provider, 2 h. */
export const CEILINGS = {
  fs: ['read:**', 'write:out/**'],
  net: ['api.example.com'],
  shell: ['ls', 'cat', 'grep'],
  providers: ['anthropic'],
  max_ttl_seconds: 7_200,
  resource_limits: { max_tokens: 100_000, max_calls: 100, max_wallclock_seconds: 7_200 },
};

export interface SeedIngress extends TestIngress {
  readonly artifactsBucket: string;
}

/** A real ingress on its own streams, subject root and artifact bucket, with this install's identity and ceilings. */
export async function startSeedIngress(): Promise<SeedIngress> {
  const artifactsBucket = uniqueName('ART');
  const t = await startTestIngress({
    WRIT_INSTALL_ID: INSTALL_ID,
    WRIT_GENESIS_FINGERPRINT: GENESIS,
    WRIT_PARTICIPANT_CEILINGS: JSON.stringify(CEILINGS),
    WRIT_ARTIFACTS_BUCKET: artifactsBucket,
    WRIT_ARTIFACTS_MAX_BYTES: String(16 * 1024 ** 2),
  });
  return {
    ...t,
    artifactsBucket,
    async stop() {
      await deleteStreams(t.nc, `OBJ_${artifactsBucket}`);
      await t.stop();
    },
  };
}

/** A test key with its fingerprint. */
export interface SeedKey {
  readonly key: Ed25519SigningKey;
  readonly x: string;
  readonly fingerprint: string;
}

export async function seedKey(): Promise<SeedKey> {
  const key = await generateEd25519Key();
  return { key, x: key.publicJwk.x, fingerprint: ed25519Fingerprint(key.publicJwk.x) };
}

export const sign = <T extends { signature: unknown }>(body: Unsigned<T> | T, key: SeedKey): Promise<T> => signDocument(body, key.key) as unknown as Promise<T>;

const iso = (ms: number) => new Date(ms).toISOString();

export interface ManifestParts {
  readonly seedId: string;
  readonly parentId: string;
  readonly parent: SeedKey;
  readonly child: SeedKey;
  readonly ttlMs?: number;
}

/** An unsigned manifest created now, valid `ttlMs` (default 1 h). */
export function manifestBody(parts: ManifestParts, overrides: Partial<Unsigned<SpawnManifest>> = {}): Unsigned<SpawnManifest> {
  const now = Date.now();
  return {
    manifest_version: 'seed.spawn.v1',
    seed_id: parts.seedId,
    parent_seed_id: parts.parentId,
    anchor_id: 'anchor:docs',
    mode: 'ephemeral',
    role: 'docs.indexer',
    info_budget: { scope: 'on-topic', notes: 'index docs/ only' },
    constraints: { anchor_hash: HASH.anchor, parent_hash: HASH.parent, policy_hash: HASH.policy, extra: [] },
    capabilities: { fs: ['read:docs/**', 'write:out/**'], net: ['api.example.com'], shell: ['ls', 'cat'], providers: ['anthropic'] },
    handoff_channel: 'trace',
    ttl: { created_at: iso(now - 1_000), expires_at: iso(now + (parts.ttlMs ?? 3_600_000)) },
    lineage: { install_id: INSTALL_ID, genesis_fingerprint: GENESIS, parent_key_fingerprint: parts.parent.fingerprint },
    key_binding: { child_key_fingerprint: parts.child.fingerprint, key_role: 'seed_ephemeral' },
    oep: { version: '1', policy_profile: 'strict' },
    mission_id: 'mission-it',
    actor_id: parts.parentId,
    policy: { confidentiality: 'internal', redact: [] },
    resource_limits: { max_tokens: 10_000, max_calls: 20, max_wallclock_seconds: 3_600 },
    runtime_context: { host_id: 'host-it', namespace: 'default' },
    ...overrides,
  };
}

export function heartbeatBody(manifest: SpawnManifest, seq: number, overrides: Partial<Unsigned<Heartbeat>> = {}): Unsigned<Heartbeat> {
  return {
    heartbeat_version: 'seed.heartbeat.v1',
    seed_id: manifest.seed_id,
    parent_seed_id: manifest.parent_seed_id,
    heartbeat_seq: seq,
    last_event_seq: seq * 3,
    constraints: { anchor_hash: manifest.constraints.anchor_hash, parent_hash: manifest.constraints.parent_hash, policy_hash: manifest.constraints.policy_hash },
    ttl: { expires_at: manifest.ttl.expires_at },
    sent_at: new Date().toISOString(),
    ...overrides,
  };
}

export function lastWillBody(manifest: SpawnManifest, manifestHash: string, overrides: Partial<Unsigned<LastWill>> = {}): Unsigned<LastWill> {
  const now = Date.now();
  return {
    manifest_version: 'seed.retire.v1',
    seed_id: manifest.seed_id,
    parent_seed_id: manifest.parent_seed_id,
    anchor_id: manifest.anchor_id,
    mode: manifest.mode,
    manifest_hash: manifestHash,
    status: 'retired',
    retired_at: iso(now),
    summary: 'indexed the docs',
    deltas: [{ epistemic_type: 'retrieved', confidence: 0.9, content: 'docs/a.md defines the API', provenance: 'docs/a.md', support: ['docs/a.md'] }],
    open_questions: ['is docs/b.md current?'],
    governance: { violations: [], unknowns_disclosed: true, oep_compliant: true },
    artifacts: [],
    heartbeat_last: iso(now - 500),
    lineage: { install_id: manifest.lineage.install_id, genesis_fingerprint: manifest.lineage.genesis_fingerprint, child_key_fingerprint: manifest.key_binding.child_key_fingerprint },
    reconstitution: { reconstituted_from_seed_id: null },
    ...overrides,
  };
}

export function crashBody(manifest: SpawnManifest, reason = 'the worker exited with status 137'): Unsigned<CrashReport> {
  return { report_version: 'seed.crash.v1', seed_id: manifest.seed_id, parent_seed_id: manifest.parent_seed_id, reason, observed_at: new Date().toISOString() };
}

/** The participant stream's events, in order. */
export async function participantEvents(store: EventStore, seedId: string): Promise<EventEnvelope[]> {
  if ((await store.headOfEntity('participant', seedId)).taskSeq === 0) return [];
  return (await store.readEntity('participant', seedId)).map((stored) => stored.event);
}

/** Waits until the participant stream holds an event of `type`. */
export function waitForParticipantEvent(store: EventStore, seedId: string, type: string, timeoutMs = 20_000): Promise<EventEnvelope[]> {
  return waitFor(
    async () => {
      const events = await participantEvents(store, seedId);
      return events.some((event) => event.event_type === type) ? events : undefined;
    },
    { what: `${type} on participant ${seedId}`, timeoutMs, intervalMs: 100 },
  );
}
