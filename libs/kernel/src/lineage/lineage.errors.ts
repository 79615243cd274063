import { KernelError } from '../shared/kernel-error.js';

/**
 * Closed set of reasons a participant command is invalid (a caller bug, not
 * an outcome: every verification outcome, refusals included, is an event).
 */
export type LineageErrorCode =
  /** The command names another seed than the stream's, or the adapter passed malformed trust material. */
  | 'PARTICIPANT_COMMAND_MISMATCH'
  /** `expire` for a seed that was never spawned. */
  | 'PARTICIPANT_UNKNOWN'
  /** `expire` before the participant's `expires_at`. */
  | 'PARTICIPANT_TTL_NOT_ELAPSED'
  /** `record-call` for a participant that is not active (paused, ended, or past its TTL): its scope admits nothing. */
  | 'PARTICIPANT_NOT_ACTIVE'
  /** `record-call` beyond the manifest's `resource_limits.max_calls`. */
  | 'PARTICIPANT_CALLS_EXHAUSTED';

export class LineageError extends KernelError<LineageErrorCode> {}
