import { KernelError } from '../shared/kernel-error.js';

/** Closed set of reasons a Cell command is refused. */
export type CellErrorCode =
  /** The command is not valid in the cell's state (Lazarus 4.1); details: `command`, `from`, `to`. */
  | 'CELL_TRANSITION_INVALID'
  /** `cellLayout` / `writablePaths` got an id that is not one path segment (the decider reports bad ids in commands as KERNEL_COMMAND_INVALID). */
  | 'CELL_ID_INVALID'
  /** The command names another cell than the stream's. */
  | 'CELL_ID_MISMATCH'
  /** The cell policy is invalid, or a policy is passed to a cell that already has one (it is fixed at creation). */
  | 'CELL_POLICY_INVALID'
  /** The acting participant is not an accepted director of the cell. */
  | 'CELL_NOT_DIRECTOR'
  /** The participant id is already taken in this cell: a seat's role never changes. */
  | 'CELL_PARTICIPANT_EXISTS'
  /** No participant with this id in the cell. */
  | 'CELL_PARTICIPANT_UNKNOWN'
  /** `substitute` through `invite-participant`: substitutes join through `invite-substitute`, for a DOWNED participant. */
  | 'CELL_ROLE_INVALID'
  /** `guest` or `substitute` while the cell policy does not enable it (Lazarus 3.1). */
  | 'CELL_ROLE_NOT_ENABLED'
  /** A guest in a cell whose backend cannot give strict isolation. */
  | 'CELL_ISOLATION_INSUFFICIENT'
  /** Accept or expire of an invitation that is not pending. */
  | 'CELL_INVITATION_NOT_PENDING'
  /** Accept after the invitation's expiry. */
  | 'CELL_INVITATION_EXPIRED'
  /** Expire before the invitation's expiry. */
  | 'CELL_INVITATION_NOT_EXPIRED'
  /** Prepare without an accepted participant that runs (executor, guest or substitute). */
  | 'CELL_NO_RUNNING_PARTICIPANT'
  /** A heartbeat or mark-downed for a participant that is not running in the cell. */
  | 'CELL_PARTICIPANT_NOT_RUNNING'
  /** mark-downed before the participant's heartbeat deadline. */
  | 'CELL_HEARTBEAT_NOT_MISSED'
  /** revive-cell by neither the downed participant nor an accepted substitute for it. */
  | 'CELL_REVIVER_INVALID'
  /** A checkpoint id already used in this cell. */
  | 'CELL_CHECKPOINT_EXISTS'
  /** complete-checkpoint for another checkpoint than the one in progress. */
  | 'CELL_CHECKPOINT_MISMATCH'
  /** The close reason does not fit the state (e.g. `abandoned` outside DOWNED). */
  | 'CELL_CLOSE_REASON_INVALID'
  /** close-cell `ttl_expired` before the TTL elapsed. */
  | 'CELL_TTL_NOT_ELAPSED'
  /** Renew or revive after the active TTL elapsed: the cell must close. */
  | 'CELL_ACTIVE_TTL_EXPIRED'
  /** A renewal would make the activation window longer than `active_ttl_max_ms` (at most 24 h). */
  | 'CELL_TTL_CAP_EXCEEDED'
  /** resurrect-cell after the closed grace period: the filesystem is (being) scrubbed. */
  | 'CELL_GRACE_EXPIRED'
  /** archive-cell before the closed grace period is over. */
  | 'CELL_GRACE_NOT_OVER'
  /** purge-archive before `retention_ends_at`: the archive stays in the warm tier until then. */
  | 'CELL_RETENTION_NOT_OVER'
  /** purge-archive of a cell whose archive was purged already. */
  | 'CELL_ARCHIVE_PURGED'
  /** purge-archive whose deleted / kept lists are not exactly the cell's archived objects, each once. */
  | 'CELL_PURGE_OBJECTS_MISMATCH';

export class CellError extends KernelError<CellErrorCode> {}
