import { z } from 'zod';
import { Id, Ref, Sha256Hex, Timestamp } from '../ids.js';
import { LIMITS } from '../limits.js';
import { FilePath, LongText, Text, UnitInterval } from '../text.js';
import { HandoffChannel, KeyFingerprint, SeedMode, SeedSignature, SeedToken } from './seed-signature.js';

export const LAST_WILL_VERSION = 'seed.retire.v1';

/**
 * How a delta is known (seed 002). `forensic_insight` is what a read-only
 * forensic participant writes about a crashed one, and only it.
 */
export const EpistemicType = z.enum(['retrieved', 'inferred', 'hypothesis', 'unknown', 'forensic_insight']);
export type EpistemicType = z.infer<typeof EpistemicType>;

export const LastWillDelta = z.strictObject({
  epistemic_type: EpistemicType,
  confidence: UnitInterval,
  content: LongText,
  provenance: Text,
  support: z.array(z.string().min(1).max(LIMITS.ref)).max(LIMITS.shortListItems),
});
export type LastWillDelta = z.infer<typeof LastWillDelta>;

export const LastWillArtifact = z.strictObject({
  path: FilePath,
  sha256: Sha256Hex,
  encrypted_to: KeyFingerprint,
  channel: HandoffChannel,
});
export type LastWillArtifact = z.infer<typeof LastWillArtifact>;

/**
 * Last Will `seed.retire.v1` (seed 002): what a participant hands back when
 * it ends, signed by its own key (`signature.signer` =
 * `lineage.child_key_fingerprint`). Verified against the spawn manifest
 * (`manifest_hash`, TTL, lineage) and its artifacts' hashes before any delta
 * is applied.
 */
export const LastWill = z
  .strictObject({
    manifest_version: z.literal(LAST_WILL_VERSION),
    seed_id: Id,
    parent_seed_id: Id,
    anchor_id: Ref,
    mode: SeedMode,
    manifest_hash: Sha256Hex.describe('payload_hash of the spawn manifest this participant runs under.'),
    status: z.enum(['retired', 'expired', 'failed']),
    retired_at: Timestamp,
    summary: LongText,
    deltas: z.array(LastWillDelta).max(LIMITS.listItems),
    open_questions: z.array(Text).max(LIMITS.listItems),
    governance: z.strictObject({ violations: z.array(Text).max(LIMITS.listItems), unknowns_disclosed: z.boolean(), oep_compliant: z.boolean() }),
    artifacts: z.array(LastWillArtifact).max(LIMITS.targetResources),
    heartbeat_last: Timestamp,
    lineage: z.strictObject({ install_id: Id, genesis_fingerprint: SeedToken, child_key_fingerprint: KeyFingerprint }),
    reconstitution: z.strictObject({ reconstituted_from_seed_id: Id.nullable() }),
    signature: SeedSignature,
  })
  .meta({ title: 'LastWill', description: 'seed.retire.v1: the signed Last Will a participant hands back when it ends (seed 002).' });
export type LastWill = z.infer<typeof LastWill>;
