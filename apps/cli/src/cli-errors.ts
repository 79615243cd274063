import { WritError } from '@writ/contracts';

/** Failures of the CLI itself; errors of the libraries it drives keep their own codes (EVENTSTORE_*, CRYPTO_*, CONTRACT_INVALID). */
export type CliErrorCode =
  /** Unknown command or option, missing argument (exit status 2). */
  | 'CLI_USAGE'
  /** `--out` names a file that exists: a key is never overwritten. */
  | 'CLI_FILE_EXISTS'
  /** A file could not be read, or is not JSON. */
  | 'CLI_FILE_UNREADABLE'
  /** The JWK is not a public Ed25519 key Writ accepts. */
  | 'CLI_JWK_INVALID'
  /** The JWK given where a public key belongs carries the private part `d`. */
  | 'CLI_PRIVATE_KEY_REFUSED'
  /** The principal exists with another type or roles, or the kid names another key (or a revoked one). */
  | 'CLI_PRINCIPAL_CONFLICT'
  | 'CLI_PRINCIPAL_NOT_FOUND'
  /** `participant show`: nothing was recorded for this seed id. */
  | 'CLI_PARTICIPANT_NOT_FOUND'
  /** `action submit` cannot tell who proposes: no `--principal` and no `proposed_by`. */
  | 'CLI_PRINCIPAL_REQUIRED'
  /** A command that signs was given no `--key` (checked after the input validated, so a file can be checked without one). */
  | 'CLI_KEY_REQUIRED'
  /** `--principal` and the request's `proposed_by` disagree. */
  | 'CLI_PRINCIPAL_MISMATCH'
  /** No event log (stream) to write to: the stack is not up, or another stream name is configured. */
  | 'CLI_EVENT_LOG_MISSING'
  | 'CLI_NATS_UNREACHABLE'
  /** The HTTP endpoint could not be reached, timed out, or answered an error without a Writ code. */
  | 'CLI_HTTP_FAILED'
  /** The API answered success with something that is not the JSON this CLI reads (is --url the Writ API?). */
  | 'CLI_HTTP_REPLY_INVALID'
  /** `approve` / `deny`: the projection holds no approval with this id (not caught up yet?): there is no packet to sign over. */
  | 'CLI_APPROVAL_NOT_FOUND'
  /** `approve` / `deny`: the packet `GET /v1/approvals/<id>` shows does not hash to the packet the approval records: nothing is signed. */
  | 'CLI_APPROVAL_PACKET_MISMATCH'
  /** `approve`: the approval service re-observed the witnessed state, found it changed, and invalidated the approval (the action re-enters policy). */
  | 'CLI_APPROVAL_INVALIDATED'
  /** `approve` / `deny`: the approval had expired when it was resolved. */
  | 'CLI_APPROVAL_EXPIRED'
  /** `receipt --verify`: at least one check did not pass. */
  | 'CLI_RECEIPT_UNVERIFIED'
  /** `tlog head` / `tlog prove`: the tree head, the receipt's leaf or the inclusion proof did not verify. */
  | 'CLI_TLOG_UNVERIFIED'
  /** `policy list|show`: no policy profile bucket (the policy service creates it; or another WRIT_POLICY_BUCKET is configured). */
  | 'CLI_POLICY_STORE_MISSING'
  /** `policy show`: the bucket holds no profile with this id. */
  | 'CLI_POLICY_NOT_FOUND'
  /** `grant revoke`: the projection lists no grant with this id (not caught up yet?); `--task` skips the lookup. */
  | 'CLI_GRANT_NOT_FOUND'
  /** A request over NATS (`grant revoke`, `keys rotate`) got no answer: the service is down or runs under another WRIT_SUBJECT_ROOT. */
  | 'CLI_SERVICE_UNAVAILABLE'
  /** The bus credential in use (WRIT_NATS_CREDS) may not publish or subscribe where the command must: the server refused it. */
  | 'CLI_BUS_FORBIDDEN'
  /** `writ pg setup`: the admin connection failed, or Postgres refused to create or alter a service role. */
  | 'CLI_PG_SETUP_FAILED'
  /** `writ doctor`: at least one check failed (each printed with its next step). */
  | 'CLI_DOCTOR_FAILED'
  /** `streams replicas`: a peer of a replicated stream holds other messages than the rest (or could not be compared). */
  | 'CLI_REPLICAS_DIVERGED'
  /** `explain` / `decisions`: the id names no task in the log, nor an action request of a known task. */
  | 'CLI_EXPLAIN_NOT_FOUND'
  /** `context`: the id names no attempt or task with a context pack the caller may read (yet). */
  | 'CLI_CONTEXT_NOT_FOUND'
  /** `context`: the pack served does not hash to the sha256 the log recorded, or (`--verify`) a recompile from the log gives other bytes. */
  | 'CLI_CONTEXT_MISMATCH'
  /** `verify`: at least one check of the bundle (or of the live task) failed; `export`: the bundle was written but does not verify. */
  | 'CLI_BUNDLE_UNVERIFIED'
  /** `export` / `verify --task`: the log holds no event of this task. */
  | 'CLI_TASK_NOT_FOUND'
  /** `export` / `verify --task`: a receipt was not sequenced in the transparency log within --wait. */
  | 'CLI_RECEIPT_NOT_SEQUENCED'
  /** `cell show`: the log holds no event of this cell (its task never ran an action). */
  | 'CLI_CELL_NOT_FOUND'
  /** `rollback`: the receipt names no rollback method (the message carries its statement), or more paths than one request targets. */
  | 'CLI_ROLLBACK_UNAVAILABLE'
  /** `rollback`: the task's log holds no receipt with this id (or the API does not say its task). */
  | 'CLI_RECEIPT_NOT_FOUND'
  /** Anything unexpected. */
  /** `serve --all`: apps/serve is not built (npx nx run @writ/serve:build). */
  | 'CLI_SERVE_NOT_BUILT'
  /** `serve --all`: the services' process ended with a failure (its log, above, names the service and the code). */
  | 'CLI_SERVE_EXITED'
  | 'CLI_FAILED';

export class CliError extends WritError<CliErrorCode> {
  constructor(code: CliErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'CliError';
  }
}
