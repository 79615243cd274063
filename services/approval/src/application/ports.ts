import type { CapabilityGrantClaims, EventDraft, EventEnvelope, ExpireApproval, PrincipalRole, PublicEd25519Jwk } from '@writ/contracts';
import type { KeySet } from '@writ/crypto';
import type { PrincipalHistory, ResolutionRefusal, ServiceKeyRotator } from '@writ/runtime';

/** A task's events as read, and the `task_seq` to append after. */
export interface TaskHistory {
  /**
   * The task's events, less the director decisions that failed their authority check
   * (`refused`): a resolution nobody may have made resolves nothing here.
   */
  readonly events: readonly EventEnvelope[];
  readonly seq: number;
  /** The director decisions in the log that were refused (forged, or signed without authority), by event id. */
  readonly refused?: ReadonlyMap<string, ResolutionRefusal>;
}

/** The task streams of the event log (`<prefix>.task.<task_id>`). */
export interface TaskLog {
  read(taskId: string): Promise<TaskHistory>;
  /**
   * Appends after `expectedSeq`; throws EVENTSTORE_CONFLICT when another writer
   * got there first. `duplicate` is true when the log already held every draft
   * (same idempotency keys, inside the dedupe window).
   */
  append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly duplicate: boolean }>;
}

/** Principals and their keys as the log describes them. */
export interface PrincipalDirectory {
  lookup(principalId: string): Promise<{ readonly principal_id: string; readonly roles: readonly PrincipalRole[]; readonly principal_type?: string } | undefined>;
  verificationKeys(principalId: string): Promise<KeySet>;
  /** Its whole history (every key with its window): what a recorded resolution is checked against. */
  history(principalId: string): Promise<PrincipalHistory | undefined>;
}

/** Which director decisions among a task's events fail their authority check (`@writ/runtime`'s ResolutionAuthority). */
export interface ResolutionRefusals {
  refusals(events: readonly EventEnvelope[]): Promise<ReadonlyMap<string, ResolutionRefusal>>;
}

/** Signs grant claims as a compact JWS (`typ: writ-grant+jwt`) with the service's active key (a rotation switches it). */
export interface GrantSigner {
  /** The kid that signs now. */
  readonly kid: string;
  sign(claims: CapabilityGrantClaims): Promise<string>;
}

/** The service's rotating signing key (`@writ/runtime` RotatingServiceKey behind it); the shape rotation requests need, defined once in @writ/runtime. */
export type KeyRotator = ServiceKeyRotator;

/** The adapter edge's clock; the kernel gets its reading in command metadata. */
export type Clock = () => Date;

/** Where a command came from: its id becomes the events' causation id. */
export interface CommandOrigin {
  /** `Nats-Msg-Id` of the command, or another stable id of the message. */
  readonly commandId: string;
}

/** Resource → fingerprint, as the executor observed a task's workspace at `observed_at`. */
export interface WorkspaceObservation {
  readonly fingerprints: Readonly<Record<string, string>>;
  readonly observed_at: string;
}

/**
 * The executor's read-only observation of a task's workspace (`<root>.qry.executor.observe`).
 * Throws APPROVAL_WITNESS_UNAVAILABLE when it cannot be had now (retry later).
 */
export interface WorkspaceWitness {
  /**
   * `wait`: keep asking an executor that does not answer (one restarting) for the configured while, for a
   * command held in progress on the bus; without it (a director waiting on a reply) one attempt only.
   */
  observe(taskId: string, resources: readonly string[], options?: { readonly wait?: boolean }): Promise<WorkspaceObservation>;
}

/** A content-addressed object as stored: its SHA-256 and where it lives. */
export interface StoredArtifact {
  readonly sha256: string;
  /** `nats-obj://<bucket>/sha256-<hex>`. */
  readonly uri: string;
  readonly byte_size: number;
}

/**
 * The artifact bucket (the executor's, `WRIT_ARTIFACTS_BUCKET`): content stored once under its
 * hash. Throws APPROVAL_ARTIFACT_UNAVAILABLE when it cannot be written or read now.
 */
export interface ArtifactStore {
  put(bytes: Uint8Array): Promise<StoredArtifact>;
  /** The content stored under `sha256`, or null if there is none. */
  get(sha256: string): Promise<Uint8Array | null>;
}

/**
 * The policy profiles as the policy service stores them (read-only). `currentVersion` is the
 * profile's current `version`, or null when the profile is not stored (absent or deleted).
 * Throws APPROVAL_POLICY_UNAVAILABLE when the bucket is missing or unreadable.
 */
export interface PolicyProfiles {
  currentVersion(profileId: string): Promise<string | null>;
}

/** Schedules the durable expiry timer of an approval (`<root>.cmd.approval.expire`). */
export interface ExpiryScheduler {
  /** `msgId` defaults to `<approval_id>:expire`, so a repeated schedule inside the dedupe window is one timer. */
  schedule(command: ExpireApproval, msgId?: string): Promise<void>;
}

/** The service's public keys that are not retired, as the log says now: what `/.well-known/jwks.json` serves. */
export interface JwksSource {
  jwks(): Promise<{ readonly keys: readonly PublicEd25519Jwk[] }>;
}
