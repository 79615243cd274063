import { z } from 'zod';
import { ActionRequest } from '../action-request.js';
import { Id, Sha256Hex, Timestamp } from '../ids.js';
import { LIMITS } from '../limits.js';
import { FilePath, Text } from '../text.js';
import {
  CrashRefusalCode,
  HeartbeatAnomalyCode,
  HeartbeatRefusalCode,
  ParticipantFailureCode,
  ParticipantStatus,
  RetireRefusalCode,
  SpawnRefusalCode,
} from './participant-events.js';
import { Ed25519PublicKeyX } from './seed-signature.js';

/**
 * A signed seed document as it arrives: any JSON object whose `seed_id` names
 * the participant stream the outcome is recorded on. The rest is checked by
 * verification, so a malformed document is a recorded refusal with its code,
 * not a bare CONTRACT_INVALID.
 */
const SeedDocument = z.looseObject({ seed_id: Id });

/** `writ.qry.ingress.spawn-verify` / `POST /v1/seeds/spawn/verify`. */
export const VerifySpawn = z.strictObject({
  manifest: SeedDocument,
  /** The child's public key (`x` of its Ed25519 JWK); its fingerprint must be the manifest's `key_binding.child_key_fingerprint`. */
  child_public_key: Ed25519PublicKeyX,
});
export type VerifySpawn = z.infer<typeof VerifySpawn>;

/** `writ.qry.ingress.heartbeat-verify` / `POST /v1/seeds/heartbeat/verify`. */
export const VerifyHeartbeat = z.strictObject({ heartbeat: SeedDocument });
export type VerifyHeartbeat = z.infer<typeof VerifyHeartbeat>;

/** Artifact bytes handed in with a Last Will (standard base64); an artifact not presented must be in the artifact store. */
export const PresentedArtifact = z.strictObject({
  path: FilePath,
  content_base64: z
    .string()
    .max(1_048_576)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be standard base64'),
});
export type PresentedArtifact = z.infer<typeof PresentedArtifact>;

/** `writ.qry.ingress.retire-ingest` / `POST /v1/seeds/retire/ingest`. */
export const IngestRetire = z.strictObject({
  last_will: SeedDocument,
  artifacts: z.array(PresentedArtifact).max(LIMITS.targetResources).optional(),
});
export type IngestRetire = z.infer<typeof IngestRetire>;

/** `writ.qry.ingress.crash-report` / `POST /v1/seeds/crash/report`. */
export const ReportCrash = z.strictObject({ crash_report: SeedDocument });
export type ReportCrash = z.infer<typeof ReportCrash>;

/** Every code a seed verification can answer with. */
export const SeedVerdictCode = z.union([SpawnRefusalCode, HeartbeatRefusalCode, RetireRefusalCode, CrashRefusalCode, ParticipantFailureCode]);
export type SeedVerdictCode = z.infer<typeof SeedVerdictCode>;

/**
 * The answer to every seed verification. `accepted`: the document verified
 * (a heartbeat may still have paused or failed the participant: see `status`
 * and `events`); `refused`: `code` says which rule failed; `duplicate`: the
 * log already holds this very document's outcome, nothing was appended.
 * `events` lists the event types this call appended to `writ.evt.participant.<seed_id>`.
 */
export const SeedVerdict = z.strictObject({
  seed_id: Id,
  outcome: z.enum(['accepted', 'refused', 'duplicate']),
  /** The participant's status afterwards (`none`: never spawned). */
  status: z.union([ParticipantStatus, z.literal('none')]),
  code: SeedVerdictCode.optional(),
  message: Text.optional(),
  anomalies: z.array(HeartbeatAnomalyCode).max(4).optional(),
  manifest_hash: Sha256Hex.optional(),
  last_will_hash: Sha256Hex.optional(),
  events: z.array(z.string().max(64)).max(8),
});
export type SeedVerdict = z.infer<typeof SeedVerdict>;

/** Why an action of a participant is denied by its manifest's scope (default deny). */
export const ParticipantActionDenialCode = z.enum([
  'PARTICIPANT_UNKNOWN',
  /** Paused (hash drift) or ended: no action at all. */
  'PARTICIPANT_NOT_ACTIVE',
  /** The action class has no capability in the manifest (payments, publication, memory writes...). */
  'PARTICIPANT_ACTION_CLASS_DENIED',
  /** A path outside the `fs` globs (writes need a `write:` glob). */
  'PARTICIPANT_PATH_DENIED',
  /** A host outside `net`. */
  'PARTICIPANT_HOST_DENIED',
  /** A program outside `shell`. */
  'PARTICIPANT_COMMAND_DENIED',
  /** A provider outside `providers`. */
  'PARTICIPANT_PROVIDER_DENIED',
  /** Calls, tokens or wall clock beyond `resource_limits`. */
  'PARTICIPANT_LIMIT_EXCEEDED',
]);
export type ParticipantActionDenialCode = z.infer<typeof ParticipantActionDenialCode>;

/** What a participant has used so far (the caller counts; the kernel compares with `resource_limits`). */
export const ParticipantUsage = z.strictObject({
  calls: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
  tokens: z.int().min(0).max(Number.MAX_SAFE_INTEGER),
});
export type ParticipantUsage = z.infer<typeof ParticipantUsage>;

/** `writ.qry.ingress.participant-check`: would the participant's scope allow this action now? Read-only. */
export const CheckParticipantAction = z.strictObject({ seed_id: Id, action_request: ActionRequest, usage: ParticipantUsage.optional() });
export type CheckParticipantAction = z.infer<typeof CheckParticipantAction>;

export const CheckParticipantActionReply = z.strictObject({
  seed_id: Id,
  allowed: z.boolean(),
  code: ParticipantActionDenialCode.optional(),
  message: Text.optional(),
});
export type CheckParticipantActionReply = z.infer<typeof CheckParticipantActionReply>;

/**
 * `writ.cmd.ingress.participant-expire`: ingress's own durable TTL timer, published when a
 * manifest is verified or renewed and held on the server until `expires_at`. `expires_at`
 * only schedules: the log's is authoritative.
 */
export const ExpireParticipant = z.strictObject({ seed_id: Id, expires_at: Timestamp });
export type ExpireParticipant = z.infer<typeof ExpireParticipant>;
