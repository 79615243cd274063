/**
 * The SDK's one seam onto @writ/contracts, Writ's zod schemas (the single
 * source of truth for the wire). Every other module imports contracts from
 * here, never from the package itself.
 *
 * Why a seam: @writ/contracts is a private workspace package. The build
 * (scripts/build-package.mjs) compiles it into dist/vendor/contracts and points
 * this module's output at that copy, so the published SDK carries the very
 * schemas ingress and the orchestrator check, and needs no private package.
 */
export {
  ActionRequest,
  BLOCKED_CLAIM_JWS_TYPE,
  BlockedClaim,
  BlockedClaimSubmission,
  Brief,
  COMMANDS,
  CORRECTION_JWS_TYPE,
  ClaimReply,
  ContractError,
  Correction,
  CorrectionSubmission,
  DONE_CLAIM_JWS_TYPE,
  DoneClaim,
  DoneClaimSubmission,
  HTTP_TOKEN_DEFAULT_TTL_SECONDS,
  HTTP_TOKEN_JWS_TYPE,
  HTTP_TOKEN_MAX_TTL_SECONDS,
  HttpTokenClaims,
  INGRESS_IDEMPOTENCY_KEY_HEADER,
  Id,
  Name,
  PublicEd25519Jwk,
  Receipt,
  SubmitClaim,
  TASK_TERMINAL_STATES,
  TaskSpec,
  WritError,
  httpAudience,
  safeParseContract,
} from '@writ/contracts';
export type { ContractIssue, HttpAuthErrorCode, IngressRejectionCode, ReceiptResultCode, TaskStatus } from '@writ/contracts';
export { ACTION_STATUSES, type ActionStatus } from '@writ/contracts/projection-rows';
