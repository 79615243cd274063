import type { EventEnvelope, ParticipantStatus } from '@writ/contracts';
import type { Ed25519PublicKey, KeySet } from '@writ/crypto';
import type { PrincipalRecord } from '@writ/runtime';

/** An event as read back from the log, with its position in the stream. */
export interface LoggedEvent {
  readonly streamSeq: number;
  readonly event: EventEnvelope;
}

/**
 * The event log as ingress uses it. Appends are guarded by the aggregate's
 * last `task_seq` (`expectedSeq`) and throw `EVENTSTORE_CONFLICT` when
 * someone else appended first; drafts carry deterministic ids and keys.
 */
export interface IngressLog {
  /** `writ.evt.ingress.<id>`: ingress records and action-request claims. */
  headOfIngress(entityId: string): Promise<number>;
  readIngress(entityId: string): Promise<LoggedEvent[]>;
  /** `duplicate`: the log already held every draft (same idempotency keys), e.g. a racing instance stored them first. */
  appendIngress(entityId: string, drafts: readonly unknown[], expectedSeq: number): Promise<{ readonly duplicate: boolean }>;
  /** `writ.evt.task.<id>`. */
  headOfTask(taskId: string): Promise<number>;
  readTask(taskId: string): Promise<LoggedEvent[]>;
  appendTask(taskId: string, drafts: readonly unknown[], expectedSeq: number): Promise<void>;
}

/** Principals and their keys as the log says now (read-your-writes: a key revoked a moment ago no longer verifies). */
export interface PrincipalDirectory {
  lookup(principalId: string): Promise<PrincipalRecord | undefined>;
  /** The principal's active keys as trust material for JWS verification. */
  verificationKeys(record: PrincipalRecord): Promise<KeySet>;
}

/**
 * A participant (a spawned seed, docs/spawn-retire.md) as request
 * verification needs it: it signs ActionRequests with its child key under
 * its seed_id as principal id, while its stream says it is active.
 */
export interface ParticipantSigner {
  readonly seed_id: string;
  readonly status: ParticipantStatus;
  readonly expires_at: string;
  readonly manifest_hash: string;
  /** The key `participant.spawn_verified` recorded (`x` of the JWK and its `sha256:` fingerprint). */
  readonly child_key: { readonly fingerprint: string; readonly x: string };
}

/** Participants as `writ.evt.participant.<seed_id>` says now (read-your-writes: a participant retired a moment ago no longer acts). */
export interface ParticipantSigners {
  /** Undefined when no participant was ever spawned under this id (refused spawns alone make none). */
  lookup(seedId: string): Promise<ParticipantSigner | undefined>;
  /** The child key as trust material for a JWS whose header names `kid`. */
  verificationKey(signer: ParticipantSigner, kid: string): Promise<Ed25519PublicKey>;
}

export interface Clock {
  now(): Date;
}
