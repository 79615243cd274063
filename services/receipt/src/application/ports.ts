import type { EventDraft, EventEnvelope } from '@writ/contracts';
import type { ResolutionRefusal, TaskHistory } from '@writ/runtime';

/** The task streams of the event log (`<prefix>.task.<task_id>`; outbound: `@writ/runtime`'s `EventStoreTaskLog`). */
export interface TaskLog {
  read(taskId: string): Promise<TaskHistory>;
  /**
   * Appends after `expectedSeq`; throws EVENTSTORE_CONFLICT when another writer
   * got there first. `duplicate` is true when the log already held every draft.
   */
  append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly duplicate: boolean }>;
}

/** Signs a receipt body (its RFC 8785 bytes) as a compact EdDSA JWS with one key of the service. */
export interface ReceiptSigner {
  readonly kid: string;
  sign(canonicalBody: string): Promise<string>;
}

/**
 * The service key that signs now. Asked once per receipt (its kid goes into
 * the body, then it signs that body), so a rotation switches keys between two
 * receipts, never inside one.
 */
export type CurrentSigner<S> = () => S;

/** The adapter edge's clock. */
export type Clock = () => Date;

/** Where a command came from: its id becomes the events' causation id. */
export interface CommandOrigin {
  /** `Nats-Msg-Id` of the command, or another stable id of the message. */
  readonly commandId: string;
}

/** Which director decisions among a task's events fail their authority check (`@writ/runtime`'s ResolutionAuthority). */
export interface ResolutionRefusals {
  refusals(events: readonly EventEnvelope[]): Promise<ReadonlyMap<string, ResolutionRefusal>>;
}
