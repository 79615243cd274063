import { CompactSign } from 'jose';
import type { AgentKey } from './agent-key.js';
import { checkContract } from './contract-check.js';
import {
  BLOCKED_CLAIM_JWS_TYPE,
  BlockedClaimSubmission,
  COMMANDS,
  CORRECTION_JWS_TYPE,
  CorrectionSubmission,
  DONE_CLAIM_JWS_TYPE,
  DoneClaimSubmission,
  type BlockedClaim,
  type Correction,
  type DoneClaim,
} from './contracts.js';

/** What an agent claims about its task: done (done.json), blocked (blocked.json), or a correction of its done claim. */
export type TaskClaim =
  | { readonly kind: 'done'; readonly claim: DoneClaim }
  | { readonly kind: 'blocked'; readonly claim: BlockedClaim }
  | { readonly kind: 'correction'; readonly correction: Correction };

export type TaskClaimKind = TaskClaim['kind'];

/** Per kind: the contract signed, its JWS `typ`, and the orchestrator's subject (under `writ.`; the root replaces it). */
const KINDS = {
  done: { contract: 'DoneClaimSubmission', schema: DoneClaimSubmission, typ: DONE_CLAIM_JWS_TYPE, subject: COMMANDS.orchestratorClaimDone },
  blocked: { contract: 'BlockedClaimSubmission', schema: BlockedClaimSubmission, typ: BLOCKED_CLAIM_JWS_TYPE, subject: COMMANDS.orchestratorClaimBlocked },
  correction: { contract: 'CorrectionSubmission', schema: CorrectionSubmission, typ: CORRECTION_JWS_TYPE, subject: COMMANDS.orchestratorClaimCorrection },
} as const;

/**
 * Signs a claim as the orchestrator verifies it (docs/task-claims.md, "Claims"):
 * a compact EdDSA JWS with header `{"alg":"EdDSA","kid":…,"typ":"writ-done-claim+jws"}`
 * (`writ-blocked-claim+jws`, `writ-correction+jws`) over `{ task_id, claim |
 * correction, claimed_by, claimed_at }`. Only the task's owner may claim, and
 * `claimed_at` must lie within the orchestrator's freshness window (300 s):
 * sign just before sending. AGENT_REQUEST_INVALID when the document breaks its contract.
 */
export async function signTaskClaim(taskId: string, claim: TaskClaim, by: { readonly principalId: string; readonly key: AgentKey; readonly now?: Date }): Promise<string> {
  const kind = KINDS[claim.kind];
  const body = claim.kind === 'correction' ? { correction: claim.correction } : { claim: claim.claim };
  const payload = checkContract(kind.contract, kind.schema, { task_id: taskId, ...body, claimed_by: by.principalId, claimed_at: (by.now ?? new Date()).toISOString() });
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: 'EdDSA', kid: by.key.kid, typ: kind.typ }).sign(by.key.privateKey);
}

/** `<root>.qry.orchestrator.claim-done` / `claim-blocked` / `claim-correction`. */
export function claimSubject(kind: TaskClaimKind, subjectRoot = 'writ'): string {
  return `${subjectRoot}.${KINDS[kind].subject.slice('writ.'.length)}`;
}
