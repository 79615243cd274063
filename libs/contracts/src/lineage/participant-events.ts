import { z } from 'zod';
import { Id, Sha256Hex, Timestamp } from '../ids.js';
import { FilePath, Text } from '../text.js';
import { LastWill } from './last-will.js';
import { Ed25519PublicKeyX, KeyFingerprint } from './seed-signature.js';
import { SpawnManifest } from './spawn-manifest.js';

/** The states of a participant (a spawned seed). `active` is spawned and verified; the last three are terminal. */
export const ParticipantStatus = z.enum(['active', 'paused', 'retired', 'expired', 'failed']);
export type ParticipantStatus = z.infer<typeof ParticipantStatus>;

export const PARTICIPANT_TERMINAL_STATES: readonly ParticipantStatus[] = Object.freeze(['retired', 'expired', 'failed'] as const);

/** What kind of seed a participant is: a worker, a read-only forensic seed on a crashed one, or a reconstitution of a retired one. */
export const ParticipantKind = z.enum(['worker', 'forensic', 'reconstituted']);
export type ParticipantKind = z.infer<typeof ParticipantKind>;

/** Why a spawn manifest was refused (`participant.spawn_refused`). */
export const SpawnRefusalCode = z.enum([
  /** Not a `seed.spawn.v1` manifest (every offending path in the message), or the child key was not presented. */
  'SPAWN_MANIFEST_INVALID',
  /** `lineage.install_id` is not this installation's. */
  'SPAWN_INSTALL_MISMATCH',
  /** `lineage.genesis_fingerprint` is not this installation's. */
  'SPAWN_GENESIS_MISMATCH',
  /** The manifest body does not hash to `signature.payload_hash`: it was changed after signing. */
  'SPAWN_PAYLOAD_HASH_MISMATCH',
  /** `parent_seed_id` names neither a registered principal nor a live participant. */
  'SPAWN_PARENT_UNKNOWN',
  /** The signer is not `lineage.parent_key_fingerprint`, or that fingerprint is not an active key of the parent. */
  'SPAWN_SIGNER_NOT_PARENT',
  /** The signature does not verify under the parent key. */
  'SPAWN_SIGNATURE_INVALID',
  /** A manifest already verified for this seed_id is presented again with another TTL and without a valid new signature. */
  'SPAWN_TTL_EDITED',
  /** The presented child key does not match `key_binding.child_key_fingerprint`, or is the parent's key. */
  'SPAWN_CHILD_KEY_INVALID',
  /** `expires_at` not after `created_at`, already past, `created_at` in the future, or longer than the local ceiling. */
  'SPAWN_TTL_INVALID',
  /** The manifest's `mode` is not allowed by the local ceilings. */
  'SPAWN_MODE_NOT_ALLOWED',
  /** A capability entry cannot be read (a glob reaching outside the cell home, a malformed host pattern). */
  'SPAWN_CAPABILITY_INVALID',
  /** A capability lies outside the local policy ceilings. */
  'SPAWN_CAPABILITY_EXCEEDS_CEILING',
  /** A resource limit is above the local ceiling. */
  'SPAWN_RESOURCE_LIMITS_EXCEED_CEILING',
  /**
   * The seed_id is taken: by a participant whose manifest this one cannot renew (ended, or other
   * identity fields), or by a registered principal (a participant acts under its seed_id as principal id).
   */
  'SPAWN_SEED_ID_REUSED',
  /** Lineage entries of `constraints.extra` are malformed or contradict each other, or the seed is its own parent. */
  'SPAWN_LINEAGE_INVALID',
  /** A forensic seed names a participant that did not crash (failed without a Last Will) or another manifest hash. */
  'SPAWN_FORENSIC_TARGET_INVALID',
  /** A forensic seed asks for more than read-only file access (write globs, shell or network). */
  'SPAWN_FORENSIC_NOT_READ_ONLY',
  /** A reconstitution names a prior seed without a verified manifest and Last Will, or other hashes. */
  'SPAWN_RECONSTITUTION_PRIOR_INVALID',
  /** A reconstitution reuses the prior seed's child key (no hidden state sharing). */
  'SPAWN_RECONSTITUTION_KEY_REUSED',
]);
export type SpawnRefusalCode = z.infer<typeof SpawnRefusalCode>;

/** Why a heartbeat was refused (`participant.heartbeat_refused`); nothing about the participant changes. */
export const HeartbeatRefusalCode = z.enum([
  'HEARTBEAT_INVALID',
  'HEARTBEAT_PARTICIPANT_UNKNOWN',
  'HEARTBEAT_PARTICIPANT_TERMINAL',
  /** `parent_seed_id` is not the manifest's. */
  'HEARTBEAT_MANIFEST_MISMATCH',
  'HEARTBEAT_PAYLOAD_HASH_MISMATCH',
  'HEARTBEAT_SIGNER_NOT_CHILD',
  'HEARTBEAT_SIGNATURE_INVALID',
]);
export type HeartbeatRefusalCode = z.infer<typeof HeartbeatRefusalCode>;

/** Sequence and TTL irregularities of a heartbeat, logged for audit (`participant.heartbeat_anomaly`). */
export const HeartbeatAnomalyCode = z.enum([
  /** `heartbeat_seq` skipped numbers; the heartbeat is still recorded. */
  'HEARTBEAT_GAP',
  /** `heartbeat_seq` not above the last recorded one (a replay or reordering); nothing else of it is applied. */
  'HEARTBEAT_OUT_OF_ORDER',
  /** `ttl.expires_at` differs from the manifest's (an in-place TTL edit); the manifest's stays in force. */
  'HEARTBEAT_TTL_MISMATCH',
  /** `last_event_seq` went backwards. */
  'HEARTBEAT_EVENT_SEQ_REGRESSED',
]);
export type HeartbeatAnomalyCode = z.infer<typeof HeartbeatAnomalyCode>;

/** Why a participant failed: its parent hash changed (at once), or its parent reported a crash (no Last Will). */
export const ParticipantFailureCode = z.enum(['HEARTBEAT_PARENT_HASH_CHANGED', 'PARTICIPANT_CRASHED']);
export type ParticipantFailureCode = z.infer<typeof ParticipantFailureCode>;

/** Why a Last Will was refused (`participant.retire_refused`); no delta is applied. */
export const RetireRefusalCode = z.enum([
  'RETIRE_LAST_WILL_INVALID',
  'RETIRE_PARTICIPANT_UNKNOWN',
  /** The participant already ended (retired, or failed: a crashed participant gets no state update). */
  'RETIRE_PARTICIPANT_TERMINAL',
  /** The participant's TTL ran out before the Last Will arrived. */
  'RETIRE_AFTER_EXPIRY',
  /** `seed_id`, `parent_seed_id`, `anchor_id` or `mode` differ from the manifest. */
  'RETIRE_MANIFEST_MISMATCH',
  /** `lineage` (install, genesis, child key) or `reconstitution` differ from the manifest and its verified lineage. */
  'RETIRE_LINEAGE_MISMATCH',
  'RETIRE_PAYLOAD_HASH_MISMATCH',
  'RETIRE_SIGNER_NOT_CHILD',
  'RETIRE_SIGNATURE_INVALID',
  /** `manifest_hash` is not the hash of the manifest the participant runs under. */
  'RETIRE_MANIFEST_HASH_MISMATCH',
  /** `retired_at` or `heartbeat_last` outside the manifest's TTL, or in the future. */
  'RETIRE_TTL_INVALID',
  /** An artifact was neither presented nor found in the artifact store. */
  'RETIRE_ARTIFACT_MISSING',
  'RETIRE_ARTIFACT_HASH_MISMATCH',
  /** `forensic_insight` deltas from a non-forensic participant, or other deltas from a forensic one. */
  'RETIRE_DELTA_TYPE_INVALID',
  /** A forensic participant writes only its own Last Will: no artifacts. */
  'RETIRE_FORENSIC_ARTIFACTS_FORBIDDEN',
]);
export type RetireRefusalCode = z.infer<typeof RetireRefusalCode>;

/** Why a crash report was refused (`participant.crash_refused`). */
export const CrashRefusalCode = z.enum([
  'CRASH_REPORT_INVALID',
  'CRASH_PARTICIPANT_UNKNOWN',
  'CRASH_PARTICIPANT_TERMINAL',
  'CRASH_PAYLOAD_HASH_MISMATCH',
  /** Not signed by the manifest's parent key, or that key is no longer an active key of the parent. */
  'CRASH_SIGNER_NOT_PARENT',
  'CRASH_SIGNATURE_INVALID',
]);
export type CrashRefusalCode = z.infer<typeof CrashRefusalCode>;

const seed_id = Id;
const at = Timestamp;

/** A crashed participant a forensic seed looks at. */
export const ForensicTarget = z.strictObject({ seed_id: Id, manifest_hash: Sha256Hex });
export type ForensicTarget = z.infer<typeof ForensicTarget>;

/** The retired participant a reconstituted one resumes from (its verified manifest and Last Will). */
export const ReconstitutionSource = z.strictObject({ seed_id: Id, manifest_hash: Sha256Hex, last_will_hash: Sha256Hex });
export type ReconstitutionSource = z.infer<typeof ReconstitutionSource>;

/**
 * `participant.spawn_verified` on `writ.evt.participant.<seed_id>`: the
 * manifest verified; the participant is `active`. `child_key` is the public
 * key presented beside the manifest (its fingerprint is the signed
 * `key_binding.child_key_fingerprint`): it verifies the heartbeats and the Last Will.
 */
export const ParticipantSpawnVerified = z.strictObject({
  seed_id,
  kind: ParticipantKind,
  manifest: SpawnManifest,
  manifest_hash: Sha256Hex,
  parent: z.strictObject({ id: Id, kind: z.enum(['principal', 'participant']), key_fingerprint: KeyFingerprint }),
  child_key: z.strictObject({ fingerprint: KeyFingerprint, x: Ed25519PublicKeyX }),
  forensic_of: ForensicTarget.nullable(),
  reconstituted_from: ReconstitutionSource.nullable(),
  expires_at: Timestamp,
  at,
});
export type ParticipantSpawnVerified = z.infer<typeof ParticipantSpawnVerified>;

/** `participant.manifest_renewed`: a new manifest, signed by the parent, replaces the live one (TTL extension, capability change). */
export const ParticipantManifestRenewed = z.strictObject({
  seed_id,
  manifest: SpawnManifest,
  manifest_hash: Sha256Hex,
  previous_manifest_hash: Sha256Hex,
  expires_at: Timestamp,
  at,
});
export type ParticipantManifestRenewed = z.infer<typeof ParticipantManifestRenewed>;

/** `participant.spawn_refused`: nothing else changes. `manifest_hash` is the hash of the body as received, when it could be computed. */
export const ParticipantSpawnRefused = z.strictObject({
  seed_id,
  code: SpawnRefusalCode,
  message: Text,
  manifest_hash: Sha256Hex.nullable(),
  signer: KeyFingerprint.nullable(),
  at,
});
export type ParticipantSpawnRefused = z.infer<typeof ParticipantSpawnRefused>;

/** `participant.heartbeat_recorded`. `heartbeat_hash` is the heartbeat's payload hash. */
export const ParticipantHeartbeatRecorded = z.strictObject({
  seed_id,
  heartbeat_seq: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  last_event_seq: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  sent_at: Timestamp,
  heartbeat_hash: Sha256Hex,
  at,
});
export type ParticipantHeartbeatRecorded = z.infer<typeof ParticipantHeartbeatRecorded>;

/** `participant.heartbeat_anomaly`: logged for audit. `expected_seq` is the next sequence the participant owed. */
export const ParticipantHeartbeatAnomaly = z.strictObject({
  seed_id,
  code: HeartbeatAnomalyCode,
  heartbeat_seq: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  expected_seq: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  message: Text,
  at,
});
export type ParticipantHeartbeatAnomaly = z.infer<typeof ParticipantHeartbeatAnomaly>;

/** `participant.heartbeat_refused`. */
export const ParticipantHeartbeatRefused = z.strictObject({
  seed_id,
  code: HeartbeatRefusalCode,
  message: Text,
  heartbeat_seq: z.int().min(1).max(Number.MAX_SAFE_INTEGER).nullable(),
  at,
});
export type ParticipantHeartbeatRefused = z.infer<typeof ParticipantHeartbeatRefused>;

export const ConstraintDrift = z.strictObject({ constraint: z.enum(['anchor_hash', 'policy_hash']), expected: Sha256Hex, observed: Sha256Hex });
export type ConstraintDrift = z.infer<typeof ConstraintDrift>;

/** `participant.paused`: a heartbeat's anchor or policy hash drifted from the manifest; every action is denied until they match again. */
export const ParticipantPaused = z.strictObject({
  seed_id,
  code: z.literal('HEARTBEAT_HASH_DRIFT'),
  drift: z.array(ConstraintDrift).min(1).max(2),
  heartbeat_seq: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  at,
});
export type ParticipantPaused = z.infer<typeof ParticipantPaused>;

/** `participant.resumed`: a heartbeat carries the manifest's hashes again. */
export const ParticipantResumed = z.strictObject({ seed_id, heartbeat_seq: z.int().min(1).max(Number.MAX_SAFE_INTEGER), at });
export type ParticipantResumed = z.infer<typeof ParticipantResumed>;

/** `participant.failed`: terminal, without a Last Will; nothing of the participant is applied. */
export const ParticipantFailed = z.strictObject({
  seed_id,
  code: ParticipantFailureCode,
  message: Text,
  /** The heartbeat that showed the parent hash change. */
  heartbeat_seq: z.int().min(1).max(Number.MAX_SAFE_INTEGER).nullable(),
  /** The key that signed the crash report. */
  reported_by: KeyFingerprint.nullable(),
  at,
});
export type ParticipantFailed = z.infer<typeof ParticipantFailed>;

/** `participant.expired`: the TTL ran out (the watchdog, or the first command after `expires_at`); appended once. */
export const ParticipantExpired = z.strictObject({ seed_id, expires_at: Timestamp, at });
export type ParticipantExpired = z.infer<typeof ParticipantExpired>;

/** How an artifact of a Last Will was verified. */
export const VerifiedArtifact = z.strictObject({ path: FilePath, sha256: Sha256Hex, verified_by: z.enum(['presented', 'artifact_store']) });
export type VerifiedArtifact = z.infer<typeof VerifiedArtifact>;

/**
 * `participant.retired`: the Last Will verified; its deltas are applied (this
 * event is where they become part of the log). `last_will_hash` is its payload hash.
 */
export const ParticipantRetired = z.strictObject({
  seed_id,
  last_will: LastWill,
  last_will_hash: Sha256Hex,
  manifest_hash: Sha256Hex,
  will_status: LastWill.shape.status,
  deltas_applied: z.int().min(0),
  artifacts: z.array(VerifiedArtifact).max(64),
  at,
});
export type ParticipantRetired = z.infer<typeof ParticipantRetired>;

/** `participant.retire_refused`: no delta is applied. */
export const ParticipantRetireRefused = z.strictObject({ seed_id, code: RetireRefusalCode, message: Text, last_will_hash: Sha256Hex.nullable(), at });
export type ParticipantRetireRefused = z.infer<typeof ParticipantRetireRefused>;

/** `participant.crash_refused`. */
export const ParticipantCrashRefused = z.strictObject({ seed_id, code: CrashRefusalCode, message: Text, at });
export type ParticipantCrashRefused = z.infer<typeof ParticipantCrashRefused>;

/**
 * `participant.call_recorded`: the policy service admitted one action of the
 * participant (its manifest scope allowed it and the profile did not deny it);
 * `call` is the participant's running count, compared with
 * `resource_limits.max_calls`. Appended guarded by the stream's last sequence,
 * so two evaluations cannot both take the last call. One per policy entry of
 * an attempt (`attempt_id`, `policy_entry`).
 */
export const ParticipantCallRecorded = z.strictObject({
  seed_id,
  call: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  manifest_hash: Sha256Hex,
  task_id: Id,
  attempt_id: Id,
  policy_entry: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  action_request_id: Id,
  at,
});
export type ParticipantCallRecorded = z.infer<typeof ParticipantCallRecorded>;

/** Every participant event type and its payload. */
export const PARTICIPANT_EVENT_PAYLOADS = Object.freeze({
  'participant.spawn_verified': ParticipantSpawnVerified,
  'participant.manifest_renewed': ParticipantManifestRenewed,
  'participant.spawn_refused': ParticipantSpawnRefused,
  'participant.heartbeat_recorded': ParticipantHeartbeatRecorded,
  'participant.heartbeat_anomaly': ParticipantHeartbeatAnomaly,
  'participant.heartbeat_refused': ParticipantHeartbeatRefused,
  'participant.paused': ParticipantPaused,
  'participant.resumed': ParticipantResumed,
  'participant.failed': ParticipantFailed,
  'participant.expired': ParticipantExpired,
  'participant.retired': ParticipantRetired,
  'participant.retire_refused': ParticipantRetireRefused,
  'participant.crash_refused': ParticipantCrashRefused,
  'participant.call_recorded': ParticipantCallRecorded,
});
export type ParticipantEventType = keyof typeof PARTICIPANT_EVENT_PAYLOADS;

/** A participant event as the kernel's decider returns it and its `evolve` folds it: `{ type, data }`. */
export const ParticipantEvent = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('participant.spawn_verified'), data: ParticipantSpawnVerified }),
  z.strictObject({ type: z.literal('participant.manifest_renewed'), data: ParticipantManifestRenewed }),
  z.strictObject({ type: z.literal('participant.spawn_refused'), data: ParticipantSpawnRefused }),
  z.strictObject({ type: z.literal('participant.heartbeat_recorded'), data: ParticipantHeartbeatRecorded }),
  z.strictObject({ type: z.literal('participant.heartbeat_anomaly'), data: ParticipantHeartbeatAnomaly }),
  z.strictObject({ type: z.literal('participant.heartbeat_refused'), data: ParticipantHeartbeatRefused }),
  z.strictObject({ type: z.literal('participant.paused'), data: ParticipantPaused }),
  z.strictObject({ type: z.literal('participant.resumed'), data: ParticipantResumed }),
  z.strictObject({ type: z.literal('participant.failed'), data: ParticipantFailed }),
  z.strictObject({ type: z.literal('participant.expired'), data: ParticipantExpired }),
  z.strictObject({ type: z.literal('participant.retired'), data: ParticipantRetired }),
  z.strictObject({ type: z.literal('participant.retire_refused'), data: ParticipantRetireRefused }),
  z.strictObject({ type: z.literal('participant.crash_refused'), data: ParticipantCrashRefused }),
  z.strictObject({ type: z.literal('participant.call_recorded'), data: ParticipantCallRecorded }),
]);
export type ParticipantEvent = z.infer<typeof ParticipantEvent>;
