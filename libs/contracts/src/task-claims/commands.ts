import { z } from 'zod';
import { Id, Timestamp } from '../ids.js';
import { LIMITS } from '../limits.js';
import { BlockedClaim } from './blocked-claim.js';
import { Correction } from './correction.js';
import { DoneClaim } from './done-claim.js';
import { BlockRefusal, DoneRefusal } from './events.js';

/** `typ` of each signed claim: a JWS of one kind never passes for another. */
export const DONE_CLAIM_JWS_TYPE = 'writ-done-claim+jws';
export const BLOCKED_CLAIM_JWS_TYPE = 'writ-blocked-claim+jws';
export const CORRECTION_JWS_TYPE = 'writ-correction+jws';

const Signed = { task_id: Id, claimed_by: Id, claimed_at: Timestamp };

/** What the task's owner signs to claim done (compact EdDSA JWS, typ `writ-done-claim+jws`). */
export const DoneClaimSubmission = z.strictObject({ ...Signed, claim: DoneClaim });
export type DoneClaimSubmission = z.infer<typeof DoneClaimSubmission>;

/** What the task's owner signs to report a block (typ `writ-blocked-claim+jws`). */
export const BlockedClaimSubmission = z.strictObject({ ...Signed, claim: BlockedClaim });
export type BlockedClaimSubmission = z.infer<typeof BlockedClaimSubmission>;

/** What the task's owner signs to correct a done claim (typ `writ-correction+jws`). */
export const CorrectionSubmission = z.strictObject({ ...Signed, correction: Correction });
export type CorrectionSubmission = z.infer<typeof CorrectionSubmission>;

/** `writ.qry.orchestrator.claim-done` / `claim-blocked` / `claim-correction` (request/reply): the signed claim and the task it is about. */
export const SubmitClaim = z.strictObject({ task_id: Id, claim_jws: z.string().min(1).max(LIMITS.rawMessage) });
export type SubmitClaim = z.infer<typeof SubmitClaim>;

/**
 * The orchestrator's answer. `verifying`: the brief's verify command runs as a
 * governed action, and the verdict (`claim.done_accepted` / `claim.done_refused`)
 * follows in the task stream; `submitted`: recorded, the verdict follows.
 */
export const ClaimReply = z.strictObject({
  task_id: Id,
  claim_id: Id,
  kind: z.enum(['done', 'blocked', 'correction']),
  status: z.enum(['submitted', 'verifying', 'accepted', 'refused', 'recorded']),
  refusals: z.array(z.union([DoneRefusal, BlockRefusal])).max(LIMITS.shortListItems),
  /** The verify run's ActionRequest, while `verifying` or once judged. */
  verify_action_request_id: Id.nullable(),
  /** The question in the approval inbox (accepted blocked claim). */
  question_id: Id.nullable(),
  /** Whether the log already held this claim (the same signed JWS sent again). */
  duplicate: z.boolean(),
});
export type ClaimReply = z.infer<typeof ClaimReply>;
