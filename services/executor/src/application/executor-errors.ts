import { WritError } from '@writ/contracts';

/**
 * Closed set of the executor's own error codes. Most are recorded, not thrown:
 * an action the executor could not perform ends in `execution.completed` with
 * `outcome: errored` (or `unknown`) and one of these in `error.code`. Refusals
 * of a grant are `GRANT_*` codes (see `ExecutorRefusalCode`), recorded in
 * `grant.refused`. Cell failures keep their `CELL_*` codes.
 */
export type ExecutorErrorCode =
  /** The action class has no executor implementation yet (recorded, outcome errored). */
  | 'EXECUTOR_ACTION_UNSUPPORTED'
  /** The request's params cannot drive its action class (e.g. write_local without content; recorded, errored). */
  | 'EXECUTOR_PARAMS_INVALID'
  /** A file action's path goes through a symlink or leaves the workspace (recorded, errored). */
  | 'EXECUTOR_PATH_ESCAPE'
  /**
   * The use was claimed but no completion was ever recorded (a crash between claim and
   * completion): recorded with outcome unknown; the action is never run again (Hermit 19.4).
   */
  | 'EXECUTOR_OUTCOME_UNKNOWN'
  /** The action ran but the workspace could not be read back afterwards (recorded, no diff). */
  | 'EXECUTOR_DIFF_UNAVAILABLE'
  /** stdout or stderr went past the output cap; the artifacts hold the first bytes (recorded, outcome completed). */
  | 'EXECUTOR_OUTPUT_TRUNCATED'
  /** The action ran but some artifacts could not be stored (recorded; hashes are still in the event). */
  | 'EXECUTOR_ARTIFACTS_INCOMPLETE'
  /** The Object Store refused or lost an artifact (thrown by the artifact store). */
  | 'EXECUTOR_ARTIFACT_STORE_FAILED'
  /** execution.completed could not be appended after the action ran (thrown; a redelivery records unknown). */
  | 'EXECUTOR_COMPLETION_NOT_RECORDED'
  /** The service is not ready to run actions (thrown before any claim; the command is retried). */
  | 'EXECUTOR_NOT_READY'
  /**
   * A state-witness observation found the resources changing under it: no two consecutive
   * walks agreed (replied to the observer, who retries later; nothing is recorded).
   */
  | 'EXECUTOR_OBSERVE_UNSTABLE'
  /**
   * A secret handle the grant names could not be resolved from `WRIT_SECRETS_DIR` (missing,
   * not 0600, too large): recorded with outcome errored before anything ran; the message names
   * the handle, never a value.
   */
  | 'EXECUTOR_SECRET_UNAVAILABLE'
  /**
   * The grant names egress hosts but the cell's egress (internal network, proxy, firewall rules) could
   * not be set up: recorded, outcome errored, nothing ran (never a cell with a wider network instead).
   */
  | 'EXECUTOR_EGRESS_UNAVAILABLE'
  /**
   * An https network action found no TLS client in the cell (an image built with WRIT_CELL_TLS=0):
   * recorded, outcome completed with the script's exit 95, nothing sent. Rebuild the image.
   */
  | 'EXECUTOR_TLS_UNAVAILABLE'
  /**
   * An https network action's server certificate did not verify (no trusted root in the image's
   * bundle or WRIT_EXECUTOR_EXTRA_CA_FILE, or not issued for the URL's host): the handshake was
   * abandoned before any byte of the request was sent (recorded, outcome completed, curl's exit 60).
   */
  | 'EXECUTOR_TLS_VERIFY_FAILED'
  /** A network action's URL names a host:port the grant's egress hosts do not allow (recorded, errored, nothing sent). */
  | 'EXECUTOR_EGRESS_HOST_NOT_GRANTED'
  /** A network action ran but its stdout holds no HTTP response (recorded, outcome completed: the request may have been sent). */
  | 'EXECUTOR_HTTP_RESPONSE_INVALID'
  /** `resolve-outcome`: the resolution is not a compact JWS over an OutcomeResolution verifying with an active key of its signer (replied). */
  | 'EXECUTOR_RESOLUTION_SIGNATURE_INVALID'
  /** `resolve-outcome`: the signer is unknown, not a director, an agent, or proposed the action (replied; `details.reason`). */
  | 'EXECUTOR_RESOLUTION_NOT_ALLOWED'
  /** `resolve-outcome`: signed more than the freshness window away from the executor's clock (replied; sign again). */
  | 'EXECUTOR_RESOLUTION_STALE'
  /** `resolve-outcome`: the signed resolution names another task or attempt than the request (replied). */
  | 'EXECUTOR_RESOLUTION_MISMATCH'
  /** `resolve-outcome`: the attempt has no `execution.completed` (replied). */
  | 'EXECUTOR_EXECUTION_NOT_FOUND'
  /** `resolve-outcome`: the attempt's last execution has a known outcome; only `unknown` is resolved by a director (replied). */
  | 'EXECUTOR_OUTCOME_NOT_UNKNOWN'
  /**
   * A file action's path is outside what its seat's role may write in the cell (Lazarus 3, 6): another
   * participant's home, the harness's `.lazarus/`, a directory of the layout itself (recorded, errored, nothing ran).
   */
  | 'EXECUTOR_CELL_WRITE_REFUSED'
  /** A read_local of another participant's home or of the harness's checkpoints (recorded, errored, nothing ran). */
  | 'EXECUTOR_CELL_READ_REFUSED'
  /** The task's cell is CLOSED or ARCHIVED: nothing runs in it (recorded, errored; a director may resurrect it within its grace). */
  | 'EXECUTOR_CELL_CLOSED'
  /**
   * The task's cell cannot take the action now: DOWNED (and the principal neither is the downed seat nor may
   * take over as a substitute) or CHECKPOINTING (recorded, errored, nothing ran).
   */
  | 'EXECUTOR_CELL_NOT_ACTIVE'
  /** A checkpoint could not be captured, stored or restored: too large, tar failed, missing or corrupt in the store. */
  | 'EXECUTOR_CHECKPOINT_FAILED'
  /** `resurrect-cell`, `renew-cell`: no cell with this id in the log (replied). */
  | 'EXECUTOR_CELL_NOT_FOUND'
  /** `resurrect-cell`: this executor does not hold the cell's graveyard and the cell has no checkpoint to resume from (replied). */
  | 'EXECUTOR_CELL_NOT_RESTORABLE'
  /** `resurrect-cell`, `renew-cell`: not a compact JWS over a CellResurrection / CellRenewal verifying with an active key of its signer (replied). */
  | 'EXECUTOR_CELL_SIGNATURE_INVALID'
  /** `resurrect-cell`, `renew-cell`: the signer is unknown, not a director, or an agent (replied; `details.reason`). */
  | 'EXECUTOR_CELL_NOT_ALLOWED'
  /** `resurrect-cell`, `renew-cell`: signed more than the freshness window away from the executor's clock (replied; sign again). */
  | 'EXECUTOR_CELL_STALE'
  /** `resurrect-cell`, `renew-cell`: the signed resurrection or renewal names another cell than the request (replied). */
  | 'EXECUTOR_CELL_MISMATCH'
  /**
   * A rollback was refused before anything ran: a path no longer holds what the rolled-back action left
   * (a later change would be lost). The message lists each drifted path, expected and found (recorded, errored).
   */
  | 'EXECUTOR_ROLLBACK_PRECONDITION_FAILED'
  /** A rollback's params name a receipt the task's log does not hold, with another hash, or with other steps (recorded, errored, nothing ran). */
  | 'EXECUTOR_ROLLBACK_RECEIPT_MISMATCH'
  /** A pre-image a rollback writes back is not in the artifact store, or not with its SHA-256 (recorded, errored, nothing ran). */
  | 'EXECUTOR_ROLLBACK_PREIMAGE_MISSING'
  /**
   * The task's cell is held by another host that has stopped beating (no cell heartbeat within the heartbeat
   * timeout): the action is not run here, where its workspace is not (thrown before any claim: retried with
   * backoff, then dead-lettered with this code); an observation relayed to the holder got no answer (replied).
   */
  | 'EXECUTOR_CELL_HOST_UNAVAILABLE'
  /**
   * The task's cell moved to another host between routing and running (a revival or spawn takeover there won):
   * recorded, errored, nothing ran here.
   */
  | 'EXECUTOR_CELL_HELD_ELSEWHERE'
  /** A command was forwarded between hosts more than the bound allows (the holder kept changing): dead-lettered. */
  | 'EXECUTOR_CELL_ROUTE_LOOP'
  /** A bug: a value the executor built itself broke its own contract (thrown). */
  | 'EXECUTOR_INTERNAL';

export class ExecutorError extends WritError<ExecutorErrorCode> {
  constructor(code: ExecutorErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'ExecutorError';
  }
}
