import type { EventDraft, ExpireParticipant } from '@writ/contracts';
import type { ParentKeys } from '@writ/kernel';

/** A participant stream as the kernel folds it: `{ type, data }` per event, and the head to append after. */
export interface ParticipantHistory {
  readonly events: readonly { readonly type: string; readonly data: unknown }[];
  /** The stream's last sequence (0: empty): the expected sequence of the next append. */
  readonly seq: number;
}

/**
 * `writ.evt.participant.<seed_id>`: appends are guarded by the stream's last
 * sequence and throw EVENTSTORE_CONFLICT when someone appended first.
 */
export interface ParticipantLog {
  read(seedId: string): Promise<ParticipantHistory>;
  /** `duplicate`: the log already held every draft (same idempotency keys). */
  append(seedId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly duplicate: boolean }>;
}

/** Who `parent_seed_id` names now: a registered principal (its active keys) or an active participant (its child key and manifest). */
export interface ParentDirectory {
  resolve(parentSeedId: string): Promise<ParentKeys | null>;
  /** True when the log holds a registered principal of this id (a new seed may not take its name: it would act under it). */
  isPrincipal(id: string): Promise<boolean>;
}

/** The shared content-addressed artifact bucket, as Last Will verification uses it. */
export interface SeedArtifacts {
  /** True when the bucket holds content with this SHA-256 (the store checks the digest on read). */
  holds(sha256: string): Promise<boolean>;
  /** Stores verified bytes (content-addressed: storing twice is harmless). */
  store(bytes: Uint8Array): Promise<void>;
}

/** Publishes the durable TTL timer of a participant (held on the server until `expires_at`). */
export interface ParticipantExpiryScheduler {
  schedule(command: ExpireParticipant, msgId?: string): Promise<void>;
}
