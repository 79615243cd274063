import { hasErrorCode, WritError } from '@writ/contracts';

/**
 * The projection service's closed set of error codes. Remote codes forwarded
 * from ingress and approval (`INGRESS_*`, `APPROVAL_*`, `CONTRACT_INVALID`…)
 * keep their own codes; the HTTP adapter maps every code to a status in one table.
 */
export type ProjectionErrorCode =
  /** The id is well formed, but the projection holds no such row (yet: it may still be in flight). */
  | 'PROJECTION_NOT_FOUND'
  /** A path parameter, query parameter, header or body is malformed. */
  | 'PROJECTION_REQUEST_INVALID'
  /** A list's `cursor` is not one this API made for this list and these filters (garbled, altered, or from another query): start again without it. */
  | 'PROJECTION_CURSOR_INVALID'
  /** The body exceeds what the API accepts. */
  | 'PROJECTION_REQUEST_TOO_LARGE'
  /** No such route. */
  | 'PROJECTION_ROUTE_NOT_FOUND'
  /** The URL says grant (deny), the signed resolution says otherwise, or names another approval. */
  | 'PROJECTION_DECISION_MISMATCH'
  /** The signed payload (a grant revocation, a task claim) names another grant or task than the URL and body. */
  | 'PROJECTION_REQUEST_MISMATCH'
  /** Nobody answers on the forwarding subject (ingress or approval down). */
  | 'PROJECTION_UPSTREAM_UNAVAILABLE'
  /** Ingress or approval did not answer in time. */
  | 'PROJECTION_UPSTREAM_TIMEOUT'
  /** Ingress or approval answered with something that is not a reply object. */
  | 'PROJECTION_UPSTREAM_INVALID_REPLY'
  /** Postgres could not be reached or refused a statement. */
  | 'PROJECTION_DB_UNAVAILABLE'
  /** NATS could not be reached at start-up. */
  | 'PROJECTION_NATS_UNAVAILABLE'
  /** The event log could not be read (catch-up, rebuild, lag). */
  | 'PROJECTION_LOG_UNAVAILABLE'
  /** The views' checkpoint is beyond the end of the log: they were folded from another log (a recreated stream, another deployment's schema). */
  | 'PROJECTION_CHECKPOINT_AHEAD'
  /** Not ready: NATS down, streams not ensured, consumer not bound, or Postgres down. */
  | 'PROJECTION_NOT_READY'
  /** A rebuild target schema is the live one, or already exists. */
  | 'PROJECTION_REBUILD_TARGET_INVALID'
  /** Another rebuild of this projection is running (one at a time); follow it, or wait. */
  | 'PROJECTION_REBUILD_RUNNING'
  /** A rebuilt view's rows differ from the live ones at the same checkpoint: nothing was swapped. */
  | 'PROJECTION_REBUILD_MISMATCH'
  /** The service stopped during the rebuild: nothing was swapped; start it again. */
  | 'PROJECTION_REBUILD_ABORTED'
  /** The process running the rebuild went away (its lock is gone): nothing was swapped; start it again. */
  | 'PROJECTION_REBUILD_ABANDONED'
  /** The caller's scope does not cover this read (a list across tasks, the projection's status: directors, operators and observers only). */
  | 'PROJECTION_SCOPE_FORBIDDEN'
  /** The instance serves as many change streams as `WRIT_SSE_MAX_STREAMS` allows: retry later, or read `GET /v1/changes`. */
  | 'PROJECTION_STREAMS_EXHAUSTED'
  /** The attempt's context pack is recorded, but the artifact store cannot give its bytes now (bucket unreachable, or missing): retry later. */
  | 'PROJECTION_CONTEXT_PACK_UNAVAILABLE'
  /** The bytes the artifact store holds for a context pack do not hash to the recorded sha256, or are not that attempt's pack: never served. */
  | 'PROJECTION_CONTEXT_PACK_CORRUPT'
  /** Anything else (a bug); details are logged, never returned. */
  | 'PROJECTION_INTERNAL';

export class ProjectionError<Code extends ProjectionErrorCode = ProjectionErrorCode> extends WritError<Code> {
  constructor(code: Code, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'ProjectionError';
  }
}

/** A Writ error code (`CONTEXT_REASON`), as opposed to a driver's (`23505`, `P0001`, `ECONNREFUSED`, `ERR_…`). */
const WRIT_CODE = /^(?!ERR_)[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;

/** True when `error` carries a Writ error code (so it may cross a boundary as is). */
export function isWritCoded(error: unknown): error is WritError {
  return hasErrorCode(error) && WRIT_CODE.test(error.code);
}
