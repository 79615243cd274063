import { z } from 'zod';
import { Id, Name, Ref, Sha256Hex, Timestamp } from '../ids.js';
import { LIMITS } from '../limits.js';
import { HandoffChannel, KeyFingerprint, SeedMode, SeedSignature, SeedToken } from './seed-signature.js';

export const SPAWN_MANIFEST_VERSION = 'seed.spawn.v1';

/**
 * A file-system capability: `read:<glob>` or `write:<glob>` (write implies
 * read), the glob relative to the participant's cell home (`**`, `*`, `?`;
 * never absolute, `~` or `..`: the kernel refuses those). Default deny
 * outside the listed globs.
 */
export const FsCapability = z
  .string()
  .min(6)
  .max(LIMITS.path)
  .regex(/^(?:read|write):[^\x00-\x1f\x7f]+$/, 'must be "read:<glob>" or "write:<glob>"');
export type FsCapability = z.infer<typeof FsCapability>;

/** A program a participant may run (`argv[0]` exactly as spelled, no path) or a provider name; `*` only where a ceiling allows anything. */
export const CapabilityName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^(?:\*|[A-Za-z0-9_+][A-Za-z0-9_.+-]*)$/, 'must be a program or provider name (A-Z, a-z, 0-9, "_", "+", ".", "-"; no "/") or "*"');
export type CapabilityName = z.infer<typeof CapabilityName>;

/** A network host pattern: `host`, `*.host`, either with `:port`, or `*` (checked by the kernel). */
export const NetCapability = z
  .string()
  .min(1)
  .max(259)
  .regex(/^[^\s\x00-\x1f\x7f/]+$/, 'must be a host pattern ("host", "*.host", with an optional ":port")');
export type NetCapability = z.infer<typeof NetCapability>;

/**
 * Structured entries of `constraints.extra` that Writ reads (all signed by the
 * parent with the rest of the manifest). A forensic participant names the
 * crashed seed and its manifest hash; a reconstituted one names its prior
 * seed, manifest hash and Last Will hash. Other entries are kept as written.
 */
export const LINEAGE_EXTRA = Object.freeze({
  forensicOf: 'forensic_of:',
  forensicManifestHash: 'forensic_manifest_hash:',
  reconstitutedFrom: 'reconstituted_from:',
  priorManifestHash: 'prior_manifest_hash:',
  priorLastWillHash: 'prior_last_will_hash:',
});

/**
 * Spawn manifest `seed.spawn.v1` (seed 002): every field of the seed,
 * signed by the parent's key (`signature.signer` = `lineage.parent_key_fingerprint`).
 * Structure only; the semantic rules (TTL order and bounds, signer, ceilings,
 * install) are verification rules with their own refusal codes (kernel
 * `verifySpawnManifest`), so a refusal says which rule failed.
 */
export const SpawnManifest = z
  .strictObject({
    manifest_version: z.literal(SPAWN_MANIFEST_VERSION),
    seed_id: Id.describe('Child seed id (a NATS subject token: writ.evt.participant.<seed_id>).'),
    parent_seed_id: Id.describe('The spawning seed: a Writ principal, or a live participant spawning a sub-seed.'),
    anchor_id: Ref.describe('Concept / mission anchor.'),
    mode: SeedMode,
    role: Name.describe('Narrow task or role, e.g. docs.indexer.'),
    info_budget: z.strictObject({ scope: z.enum(['on-topic', 'exploratory']), notes: z.string().max(LIMITS.text) }),
    constraints: z.strictObject({
      anchor_hash: Sha256Hex,
      parent_hash: Sha256Hex,
      policy_hash: Sha256Hex,
      extra: z.array(z.string().min(1).max(LIMITS.title)).max(LIMITS.shortListItems),
    }),
    capabilities: z
      .strictObject({
        fs: z.array(FsCapability).max(LIMITS.listItems),
        net: z.array(NetCapability).max(LIMITS.targetResources),
        shell: z.array(CapabilityName).max(LIMITS.listItems),
        providers: z.array(CapabilityName).max(LIMITS.shortListItems),
      })
      .describe('Default deny outside these lists.'),
    handoff_channel: HandoffChannel,
    ttl: z.strictObject({ created_at: Timestamp, expires_at: Timestamp.describe('Must be later than created_at; extensions need a new signed manifest.') }),
    lineage: z.strictObject({ install_id: Id, genesis_fingerprint: SeedToken, parent_key_fingerprint: KeyFingerprint }),
    key_binding: z.strictObject({ child_key_fingerprint: KeyFingerprint, key_role: Name.describe('e.g. seed_ephemeral') }),
    oep: z.strictObject({ version: SeedToken, policy_profile: SeedToken }),
    mission_id: Id,
    actor_id: Id.describe('Principal or tenant on whose behalf the seed acts.'),
    policy: z.strictObject({ confidentiality: Name, redact: z.array(z.string().min(1).max(LIMITS.title)).max(LIMITS.listItems) }),
    resource_limits: z.strictObject({
      max_tokens: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
      max_calls: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
      max_wallclock_seconds: z.int().min(1).max(31_536_000),
    }),
    runtime_context: z.strictObject({ host_id: SeedToken, namespace: SeedToken }),
    signature: SeedSignature,
  })
  .meta({ title: 'SpawnManifest', description: 'seed.spawn.v1: a child seed (participant) signed into existence by its parent (seed 002).' });
export type SpawnManifest = z.infer<typeof SpawnManifest>;
