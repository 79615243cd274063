import { problemTitle, problemType, type ProblemDetails } from '@writ/contracts';
import { redactString } from '@writ/telemetry';

/**
 * The HTTP adapter's one mapping table: error code → status. Codes are the
 * projection's own and those forwarded from ingress and approval, which keep
 * their codes in the problem details' `code` (domain errors carry no HTTP
 * status themselves). The OpenAPI document lists each status's codes from here.
 */
export const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  PROJECTION_NOT_FOUND: 404,
  PROJECTION_REQUEST_INVALID: 400,
  PROJECTION_CURSOR_INVALID: 400,
  PROJECTION_REQUEST_TOO_LARGE: 413,
  PROJECTION_ROUTE_NOT_FOUND: 404,
  PROJECTION_DECISION_MISMATCH: 400,
  PROJECTION_REQUEST_MISMATCH: 400,
  PROJECTION_UPSTREAM_UNAVAILABLE: 503,
  PROJECTION_UPSTREAM_TIMEOUT: 504,
  PROJECTION_UPSTREAM_INVALID_REPLY: 502,
  PROJECTION_DB_UNAVAILABLE: 503,
  PROJECTION_LOG_UNAVAILABLE: 503,
  PROJECTION_CHECKPOINT_AHEAD: 503,
  PROJECTION_NATS_UNAVAILABLE: 503,
  PROJECTION_NOT_READY: 503,
  PROJECTION_REBUILD_TARGET_INVALID: 409,
  PROJECTION_REBUILD_RUNNING: 409,
  PROJECTION_REBUILD_MISMATCH: 409,
  PROJECTION_REBUILD_ABORTED: 503,
  PROJECTION_REBUILD_ABANDONED: 503,
  PROJECTION_SCOPE_FORBIDDEN: 403,
  PROJECTION_STREAMS_EXHAUSTED: 503,
  PROJECTION_CONTEXT_PACK_UNAVAILABLE: 503,
  PROJECTION_CONTEXT_PACK_CORRUPT: 502,
  PROJECTION_INTERNAL: 500,
  // the bearer credential (HttpAuthErrorCode): always 401
  HTTP_AUTH_MISSING: 401,
  HTTP_AUTH_MALFORMED: 401,
  HTTP_AUTH_ALG_NOT_ALLOWED: 401,
  HTTP_AUTH_TYPE_INVALID: 401,
  HTTP_AUTH_AUDIENCE_INVALID: 401,
  HTTP_AUTH_PRINCIPAL_UNKNOWN: 401,
  HTTP_AUTH_KEY_UNKNOWN: 401,
  HTTP_AUTH_SIGNATURE_INVALID: 401,
  HTTP_AUTH_EXPIRED: 401,
  HTTP_AUTH_NOT_YET_VALID: 401,
  HTTP_AUTH_LIFETIME_TOO_LONG: 401,
  CONTRACT_INVALID: 400,
  // ingress (IngressRejectionCode)
  INGRESS_REQUEST_INVALID: 400,
  INGRESS_SIGNATURE_INVALID: 401,
  INGRESS_PRINCIPAL_UNKNOWN: 401,
  INGRESS_KEY_UNKNOWN: 401,
  INGRESS_PRINCIPAL_MISMATCH: 403,
  INGRESS_STALE: 422,
  INGRESS_TOO_LARGE: 413,
  INGRESS_TASK_UNKNOWN: 404,
  INGRESS_TASK_TERMINAL: 409,
  // ingress, free-form messages (POST /v1/messages)
  INGRESS_MESSAGE_SIGNATURE_INVALID: 401,
  INGRESS_MESSAGE_STALE: 422,
  INGRESS_MESSAGE_TASK_UNKNOWN: 404,
  INGRESS_MESSAGE_REPLY_UNKNOWN: 404,
  INGRESS_MESSAGE_REUSED: 409,
  INGRESS_MESSAGE_BUSY: 503,
  // approval (ApprovalErrorCode)
  APPROVAL_NOT_FOUND: 404,
  APPROVAL_NOT_PENDING: 409,
  APPROVAL_TERMINAL: 409,
  APPROVAL_ALREADY_REQUESTED: 409,
  APPROVAL_RESOLVER_NOT_ALLOWED: 403,
  APPROVAL_WITNESS_MISSING: 409,
  APPROVAL_EXPIRY_INVALID: 422,
  APPROVAL_NOT_EXPIRED: 409,
  APPROVAL_SIGNATURE_INVALID: 401,
  APPROVAL_RESOLUTION_MISMATCH: 400,
  APPROVAL_NOT_GRANTED: 409,
  APPROVAL_AUTHORITY_MISSING: 409,
  APPROVAL_SIGNER_NOT_ALLOWED: 403,
  APPROVAL_SIGNED_REQUEST_STALE: 422,
  APPROVAL_SIGNED_REQUEST_MISMATCH: 400,
  APPROVAL_GRANT_NOT_FOUND: 404,
  // orchestrator claims (POST /v1/tasks/<id>/claims/<kind>)
  ORCHESTRATOR_CLAIM_SIGNATURE_INVALID: 401,
  ORCHESTRATOR_CLAIM_SIGNER_NOT_ALLOWED: 403,
  ORCHESTRATOR_CLAIM_STALE: 422,
  ORCHESTRATOR_CLAIM_MISMATCH: 400,
  ORCHESTRATOR_CLAIM_TASK_UNKNOWN: 404,
  ORCHESTRATOR_TASK_NOT_BRIEFED: 409,
  ORCHESTRATOR_CLAIM_UNKNOWN: 404,
  ORCHESTRATOR_UNAVAILABLE: 503,
  // orchestrator knowledge requests (POST /v1/tasks/<id>/working-state, /beliefs) and the kernel's refusals of them
  ORCHESTRATOR_KNOWLEDGE_SIGNATURE_INVALID: 401,
  ORCHESTRATOR_KNOWLEDGE_SIGNER_NOT_ALLOWED: 403,
  ORCHESTRATOR_KNOWLEDGE_STALE: 422,
  ORCHESTRATOR_KNOWLEDGE_MISMATCH: 400,
  ORCHESTRATOR_KNOWLEDGE_TASK_UNKNOWN: 404,
  ORCHESTRATOR_KNOWLEDGE_REQUEST_REUSED: 409,
  KNOWLEDGE_WORKING_STATE_TOO_LARGE: 413,
  KNOWLEDGE_WORKING_STATE_REVISION_CONFLICT: 409,
  KNOWLEDGE_WORKING_STATE_REVISION_INVALID: 422,
  KNOWLEDGE_WORKING_STATE_ENTRY_UNKNOWN: 422,
  KNOWLEDGE_WORKING_STATE_DANGLING_REF: 422,
  KNOWLEDGE_SECRET_BY_VALUE: 422,
  KNOWLEDGE_WRONG_TASK: 400,
  KNOWLEDGE_BELIEF_EXISTS: 409,
  KNOWLEDGE_BELIEF_NOT_FOUND: 404,
  KNOWLEDGE_BELIEF_NOT_ACTIVE: 409,
  KNOWLEDGE_CONTRADICTION_INVALID: 422,
  KNOWLEDGE_TRUST_TIER_UNSUPPORTED: 422,
  KNOWLEDGE_DELETION_FORBIDDEN: 422,
  BUS_TIMEOUT: 504,
  BUS_NO_RESPONDERS: 503,
};

const SUFFIX_STATUS: ReadonlyArray<readonly [string, number]> = [
  ['_NOT_FOUND', 404],
  ['_INVALID', 400],
  ['_UNAUTHORIZED', 401],
  ['_NOT_ALLOWED', 403],
  ['_FORBIDDEN', 403],
  ['_CONFLICT', 409],
  ['_UNAVAILABLE', 503],
  ['_TIMEOUT', 504],
];

/** The status of a code: the table, then by suffix; other client-facing codes of ingress/approval/the orchestrator 422; anything else 502 (the other side failed). */
export function statusForCode(code: string): number {
  const known = STATUS_BY_CODE[code];
  if (known !== undefined) return known;
  const bySuffix = SUFFIX_STATUS.find(([suffix]) => code.endsWith(suffix));
  if (bySuffix !== undefined) return bySuffix[1];
  if (code.startsWith('PROJECTION_')) return 500;
  if (code.startsWith('INGRESS_') || code.startsWith('APPROVAL_') || code.startsWith('ORCHESTRATOR_') || code.startsWith('KNOWLEDGE_')) return 422;
  return 502;
}

export interface HttpErrorBody {
  readonly code: string;
  readonly message: string;
  /** The malformed parameter, header or body a 400 is about (`details.parameter` of the error). */
  readonly parameter?: string;
}

/** A Writ code has at least two tokens (`CONTEXT_REASON`); a driver's SQLSTATE or errno does not pass for one. */
const WRIT_CODE = /^(?!ERR_)[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;

/** Status and `{ code, message }` for anything a route threw; never leaks an unexpected error's text. */
export function toHttpError(exception: unknown): { readonly status: number; readonly body: HttpErrorBody } {
  const code = (exception as { code?: unknown } | null)?.code;
  const message = (exception as { message?: unknown } | null)?.message;
  if (typeof code === 'string' && WRIT_CODE.test(code) && exception instanceof Error) {
    const parameter = (exception as { details?: { parameter?: unknown } }).details?.parameter;
    return {
      status: statusForCode(code),
      body: { code, message: redactString(typeof message === 'string' ? message : code), ...(typeof parameter === 'string' ? { parameter } : {}) },
    };
  }
  const status = httpStatusOf(exception);
  if (status === 404) return { status, body: { code: 'PROJECTION_ROUTE_NOT_FOUND', message: 'no such route; see services/projection/README.md for the API' } };
  if (status === 413) return { status, body: { code: 'PROJECTION_REQUEST_TOO_LARGE', message: 'the body is too large for this API' } };
  if (status !== undefined && status >= 400 && status < 500) {
    return { status: 400, body: { code: 'PROJECTION_REQUEST_INVALID', message: 'the request is malformed (body not valid for its Content-Type?)' } };
  }
  return { status: 500, body: { code: 'PROJECTION_INTERNAL', message: 'unexpected error; see the projection service logs' } };
}

/** The status of a Nest HttpException or a body-parser error. */
function httpStatusOf(exception: unknown): number | undefined {
  const e = exception as { getStatus?: () => unknown; status?: unknown; statusCode?: unknown } | null;
  const status = typeof e?.getStatus === 'function' ? e.getStatus() : (e?.status ?? e?.statusCode);
  return typeof status === 'number' && Number.isInteger(status) ? status : undefined;
}

/**
 * Anything a route threw as RFC 9457 problem details: `type` names the code
 * (`/v1/problems/<code>`, which the API answers), `title` is the code in
 * words, `detail` the actionable message, `instance` the path that answered;
 * `code` is kept as is (clients branch on it) and `message` repeats `detail`
 * for clients of the earlier `{ code, message }` body.
 */
export function toProblem(exception: unknown, instance?: string): { readonly status: number; readonly problem: ProblemDetails } {
  const { status, body } = toHttpError(exception);
  return {
    status,
    problem: {
      type: problemType(body.code),
      title: problemTitle(body.code),
      status,
      detail: body.message,
      ...(instance === undefined ? {} : { instance }),
      code: body.code,
      message: body.message,
      ...(body.parameter === undefined ? {} : { parameter: body.parameter }),
    },
  };
}
