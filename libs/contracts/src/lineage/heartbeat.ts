import { z } from 'zod';
import { Id, Sha256Hex, Timestamp } from '../ids.js';
import { Text } from '../text.js';
import { SeedSignature } from './seed-signature.js';

export const HEARTBEAT_VERSION = 'seed.heartbeat.v1';
export const CRASH_REPORT_VERSION = 'seed.crash.v1';

/**
 * A participant's heartbeat: the seed 002 fields (`seed_id`,
 * `parent_seed_id`, `heartbeat_seq`, `last_event_seq`, the constraint hashes,
 * `ttl.expires_at`) plus `sent_at`, signed by the participant's own key like
 * a Last Will. Writ requires the signature (the seed leaves heartbeats
 * unsigned): a heartbeat pauses or fails its participant, so an unsigned one
 * would let anyone do that.
 */
export const Heartbeat = z
  .strictObject({
    heartbeat_version: z.literal(HEARTBEAT_VERSION),
    seed_id: Id,
    parent_seed_id: Id,
    heartbeat_seq: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
    last_event_seq: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
    constraints: z.strictObject({ anchor_hash: Sha256Hex, parent_hash: Sha256Hex, policy_hash: Sha256Hex }),
    ttl: z.strictObject({ expires_at: Timestamp }),
    sent_at: Timestamp,
    signature: SeedSignature,
  })
  .meta({ title: 'Heartbeat', description: 'seed.heartbeat.v1: a participant heartbeat carrying its sequence, constraint hashes and TTL, signed by the participant.' });
export type Heartbeat = z.infer<typeof Heartbeat>;

/**
 * A crash report `seed.crash.v1`: the parent (its key named in the manifest's
 * `lineage.parent_key_fingerprint`) reports that the participant ended
 * without a Last Will. The participant becomes `failed`; nothing of it is applied.
 */
export const CrashReport = z
  .strictObject({
    report_version: z.literal(CRASH_REPORT_VERSION),
    seed_id: Id,
    parent_seed_id: Id,
    reason: Text,
    observed_at: Timestamp,
    signature: SeedSignature,
  })
  .meta({ title: 'CrashReport', description: 'seed.crash.v1: the parent reports that a participant ended without a Last Will.' });
export type CrashReport = z.infer<typeof CrashReport>;
