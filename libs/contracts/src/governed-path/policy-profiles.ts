import { z } from 'zod';
import { ActionClass } from '../action-class.js';
import { ActionRequest } from '../action-request.js';
import { ExecutionMode } from '../execution-mode.js';
import { Id, Name, Timestamp } from '../ids.js';
import { LIMITS } from '../limits.js';
import { PolicyOutcome } from '../policy-result.js';
import { RiskBand } from '../risk-band.js';
import { isPresent, withRules } from '../rules.js';
import { FilePath } from '../text.js';

/**
 * A policy profile's version: `sha256:` and the lowercase hex SHA-256 of the
 * profile document's RFC 8785 canonical JSON. Equal content, equal version.
 */
export const PolicyProfileVersion = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 lowercase hex>');
export type PolicyProfileVersion = z.infer<typeof PolicyProfileVersion>;

/**
 * The value stored under a profile's id in the policy profile KV bucket
 * (`WRIT_POLICY_BUCKET`, default `WRIT_POLICY`). `document` is the profile as
 * written (validated by the kernel's PolicyProfileDocument before it is
 * stored); `version` is derived from it, never chosen by the author.
 */
export const PolicyProfileRecord = z.strictObject({
  profile_id: Name,
  version: PolicyProfileVersion,
  document: z.record(z.string(), z.unknown()),
  /** `writ-policy` for the built-ins the policy service seeds; the director's principal otherwise. */
  applied_by: Id,
  applied_at: Timestamp,
  /** The version this record replaced, null for the first. */
  previous_version: PolicyProfileVersion.nullable(),
  /**
   * The director's signed application this record was made from (the compact
   * JWS `writ policy apply` sent, typ `writ-policy-apply+jws`), so whoever
   * loads the record checks its author's authority itself (DESIGN invariant 9).
   * Absent only on the built-ins the policy service seeds (trusted as the
   * content shipped in its code) and on records of releases before it.
   */
  application_jws: z.string().min(1).max(256 * 1024).optional(),
});
export type PolicyProfileRecord = z.infer<typeof PolicyProfileRecord>;

/** `policy.profile_applied` on `writ.evt.policy.<profile_id>`: the durable record of every applied profile version. */
export const PolicyProfileApplied = PolicyProfileRecord;
export type PolicyProfileApplied = PolicyProfileRecord;

/**
 * What a director signs to apply a profile: a compact EdDSA JWS (header `typ`
 * `writ-policy-apply+jws`, `kid` one of the director's active keys) over this
 * object. `document` is the profile as written (no `version`: the policy
 * service derives it); `applied_at` must be within ±300 s of the service's
 * clock and later than the current record's, so a captured application cannot
 * be replayed.
 */
export const PolicyProfileApplication = z.strictObject({
  document: z.record(z.string(), z.unknown()),
  applied_by: Id,
  applied_at: Timestamp,
});
export type PolicyProfileApplication = z.infer<typeof PolicyProfileApplication>;

/** The JWS `typ` of a signed PolicyProfileApplication: one kind of signed object cannot pass for another. */
export const POLICY_APPLICATION_JWS_TYPE = 'writ-policy-apply+jws';

/**
 * `writ.qry.policy.apply-profile` (request/reply). Refusals reply `{ code, message }`
 * (header Writ-Error-Code): POLICY_APPLY_SIGNATURE_INVALID, POLICY_APPLY_FORBIDDEN,
 * POLICY_APPLY_STALE, POLICY_PROFILE_INVALID (the message lists every issue).
 */
export const ApplyPolicyProfile = z.strictObject({ application_jws: z.string().min(1).max(256 * 1024) });
export type ApplyPolicyProfile = z.infer<typeof ApplyPolicyProfile>;

/** The success reply: `unchanged` when the log's current version already has this content (nothing appended). */
export const ApplyPolicyProfileReply = z.strictObject({
  status: z.enum(['applied', 'unchanged']),
  profile_id: Name,
  version: PolicyProfileVersion,
  /** For `applied`: the version it replaced (null for the first); for `unchanged`: the current record's. */
  previous_version: PolicyProfileVersion.nullable(),
});
export type ApplyPolicyProfileReply = z.infer<typeof ApplyPolicyProfileReply>;

/**
 * `writ.qry.policy.evaluate` (request/reply): evaluates one ActionRequest
 * without recording anything, against the stored profile `profile_id` or an
 * inline candidate `document` (exactly one of them).
 */
export const EvaluatePolicyDryRun = withRules(
  z.strictObject({
    action_request: ActionRequest,
    profile_id: Name.optional(),
    document: z.record(z.string(), z.unknown()).optional(),
    files_owned: z.array(FilePath).max(LIMITS.listItems),
    sacred_exceptions: z.array(FilePath).max(LIMITS.listItems).optional(),
  }),
  (request, report) => {
    if (isPresent(request.profile_id) === isPresent(request.document)) report(['profile_id'], 'give exactly one of profile_id and document');
  },
);
export type EvaluatePolicyDryRun = z.infer<typeof EvaluatePolicyDryRun>;

/** One coded reason behind an outcome (the kernel's PolicyReason). */
export const PolicyReasonSummary = z.strictObject({ code: z.string().min(1).max(128), outcome: PolicyOutcome, message: z.string().max(LIMITS.text) });
export type PolicyReasonSummary = z.infer<typeof PolicyReasonSummary>;

/** The reply: the evaluation's outcome and why, and the profile version it was evaluated under. */
export const EvaluatePolicyDryRunReply = z.strictObject({
  outcome: PolicyOutcome,
  action_class: ActionClass,
  risk_band: RiskBand,
  matched_rules: z.array(z.string().min(1).max(128)).max(LIMITS.listItems),
  profile_id: Name,
  policy_version: PolicyProfileVersion,
  reasons: z.array(PolicyReasonSummary).max(LIMITS.listItems),
  witness_required: z.boolean(),
  approver_roles: z.array(Name).max(LIMITS.shortListItems).optional(),
  /** A downgrade's rewritten request and restricted mode. */
  downgrade: z.strictObject({ action_request: ActionRequest, restricted_mode: ExecutionMode.optional(), summary: z.string().max(LIMITS.text) }).optional(),
});
export type EvaluatePolicyDryRunReply = z.infer<typeof EvaluatePolicyDryRunReply>;
