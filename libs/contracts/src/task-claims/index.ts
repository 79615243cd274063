export { BRIEF_MISSION_MAX, BRIEF_SECTIONS, Brief, BriefContext, BriefScope, VerifyCommand } from './brief.js';
export { CLAIM_OUTPUT_MAX, DoneAudit, DoneClaim, DoneClaimStatus, DoneEvidence, DoneShip } from './done-claim.js';
export { BlockedClaim, GENUINE_BLOCK_REASONS, HumanRequiredFor, type GenuineBlockReason } from './blocked-claim.js';
export { Correction } from './correction.js';
export {
  AuditRollbackProposed,
  AuditRollbackRef,
  AuditedChange,
  BlockRefusal,
  BlockRefusalCode,
  BlockedClaimAccepted,
  BlockedClaimRefused,
  BlockedClaimSubmitted,
  CorrectionRecorded,
  DoneClaimAccepted,
  DoneClaimRefused,
  DoneClaimSubmitted,
  DoneRefusal,
  DoneRefusalCode,
  DoneVerificationRequested,
  FileOwnershipAudited,
  QuestionAsked,
  QuestionWithdrawn,
  SacredRollback,
  UnrollablePath,
  VerifyObservation,
} from './events.js';
export {
  BLOCKED_CLAIM_JWS_TYPE,
  BlockedClaimSubmission,
  CORRECTION_JWS_TYPE,
  ClaimReply,
  CorrectionSubmission,
  DONE_CLAIM_JWS_TYPE,
  DoneClaimSubmission,
  SubmitClaim,
} from './commands.js';
