import type { CapabilityGrantClaims, EventDraft, EventEnvelope, PrincipalRole } from '@writ/contracts';
import type { KeySet } from '@writ/crypto';

/** A task's events as read, and the `task_seq` to append after. */
export interface TaskHistory {
  readonly events: readonly EventEnvelope[];
  readonly seq: number;
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
  lookup(principalId: string): Promise<{ readonly principal_id: string; readonly roles: readonly PrincipalRole[] } | undefined>;
  verificationKeys(principalId: string): Promise<KeySet>;
}

/** Signs grant claims as a compact JWS (`typ: writ-grant+jwt`) with the service key. */
export interface GrantSigner {
  readonly kid: string;
  sign(claims: CapabilityGrantClaims): Promise<string>;
}

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
  observe(taskId: string, resources: readonly string[]): Promise<WorkspaceObservation>;
}
