import type { EventEnvelope, IssueGrant, PolicyCapabilityScope } from '@writ/contracts';
import { consumedUses, grantDecider } from '@writ/kernel';
import { ResolutionAuthorityError, type ResolutionRefusal } from '@writ/runtime';
import { ApprovalServiceError } from './approval-errors.js';
import { causationIdOf, serviceDraft } from './event-drafts.js';
import { buildGrantClaims, grantIdFor } from './grant-claims.js';
import type { Clock, CommandOrigin, GrantSigner, TaskHistory, TaskLog } from './ports.js';
import { findPolicyEvaluation, foldApproval, foldGrant } from './task-history.js';

export interface IssueGrantDeps {
  readonly log: TaskLog;
  readonly signer: GrantSigner;
  readonly clock: Clock;
  /** The approval service principal: `iss` of the grant and actor of the event. */
  readonly principalId: string;
  readonly audience: string;
  readonly grantTtlSeconds: number;
}

/** The evaluation's capability scope, as the optional `scope` input of buildGrantClaims. */
function scopeOf(scope: PolicyCapabilityScope | undefined): { scope?: PolicyCapabilityScope } {
  return scope === undefined ? {} : { scope };
}

export type IssueGrantOutcome = 'issued' | 'already_issued';

/**
 * `writ.cmd.approval.issue-grant` (governed path step 4, Hermit 16.6): a grant
 * is minted only after a direct allow (a policy result of this attempt whose
 * outcome is allow or downgrade) or a granted approval of this attempt whose
 * policy result required it. The claims go through the kernel's grant
 * decider, are signed as a `writ-grant+jwt`, and `grant.issued` carries both.
 * The grant id is derived from the command, so a redelivery appends nothing.
 *
 * A renewal (`renewal: n`) is minted on the same authority, checked again,
 * and only when the grant before it expired with no use started (none
 * claimed, or each claimed one proven never started and released): its run
 * command waited longer than the grant lived, and the action still runs once.
 *
 * The approval is folded from the log as `TrustedTaskLog` reads it: an
 * `approval.granted` whose director's signature does not hold up is no grant,
 * and the command is refused with that resolution's code (APPROVAL_RESOLUTION_*,
 * terminal): nothing is minted on it.
 */
export class IssueGrantHandler {
  constructor(private readonly deps: IssueGrantDeps) {}

  async handle(command: IssueGrant, origin: CommandOrigin): Promise<IssueGrantOutcome> {
    const history = await this.deps.log.read(command.task_id);
    if (history.seq === 0) {
      throw new ApprovalServiceError('APPROVAL_TASK_NOT_FOUND', `task ${command.task_id} has no events; nothing to grant`, { details: { task_id: command.task_id } });
    }
    const grantId = grantIdFor(command);
    const existing = foldGrant(history.events, grantId);
    if (existing.status !== 'initial') return 'already_issued';

    const issuedBy = this.#authority(command, history);
    const now = this.deps.clock();
    if (command.renewal !== undefined) checkRenewable(command, command.renewal, history.events, Math.floor(now.getTime() / 1000));
    const at = now.toISOString();
    const claims = buildGrantClaims({
      command,
      grantId,
      issuer: this.deps.principalId,
      audience: this.deps.audience,
      issuedBy,
      nowSeconds: Math.floor(now.getTime() / 1000),
      ttlSeconds: grantTtlFor(this.deps.grantTtlSeconds, command.renewal),
      ...scopeOf(findPolicyEvaluation(history.events, command.policy_result_id)?.capability_scope),
    });
    const events = grantDecider.decide({ type: 'issue-grant', data: { claims }, metadata: { now: at } }, existing);
    const drafts = [];
    for (const event of events) {
      const payload: Record<string, unknown> = { ...event.data };
      if (event.type === 'grant.issued') payload['jws'] = await this.deps.signer.sign(event.data.claims);
      drafts.push(
        serviceDraft({
          key: `${grantId}:${event.type}`,
          eventType: event.type,
          entityType: 'grant',
          entityId: grantId,
          stepId: command.step_id,
          attemptId: command.attempt_id,
          occurredAt: at,
          actorId: this.deps.principalId,
          payload,
          causationId: causationIdOf(origin.commandId),
          correlationId: command.task_id,
        }),
      );
    }
    await this.deps.log.append(command.task_id, drafts, history.seq);
    return 'issued';
  }

  /** Who authorized the action (`issued_by_principal_id`), or why nobody did. */
  #authority(command: IssueGrant, history: TaskHistory): string {
    const events = history.events;
    const evaluation = findPolicyEvaluation(events, command.policy_result_id);
    const result = evaluation?.policy_result;
    if (result === undefined || result.task_id !== command.task_id || result.attempt_id !== command.attempt_id) {
      throw new ApprovalServiceError('APPROVAL_AUTHORITY_MISSING', `attempt ${command.attempt_id} has no policy result ${command.policy_result_id}`, {
        details: { attempt_id: command.attempt_id, policy_result_id: command.policy_result_id },
      });
    }
    if (command.approval_id === null) {
      if (result.outcome !== 'allow' && result.outcome !== 'downgrade') {
        throw new ApprovalServiceError('APPROVAL_AUTHORITY_MISSING', `policy result ${result.policy_result_id} is ${result.outcome}, not a direct allow`, {
          details: { policy_result_id: result.policy_result_id, outcome: result.outcome },
        });
      }
      return result.evaluated_by;
    }
    if (result.outcome !== 'require_approval') {
      throw new ApprovalServiceError('APPROVAL_AUTHORITY_MISSING', `policy result ${result.policy_result_id} is ${result.outcome}; it required no approval`, {
        details: { policy_result_id: result.policy_result_id, outcome: result.outcome },
      });
    }
    const approval = foldApproval(events, command.approval_id);
    const refused = refusedGrant(history.refused, command.approval_id);
    if (approval.status !== 'granted' && refused !== undefined) {
      throw new ResolutionAuthorityError(refused.code, `approval ${command.approval_id} was not granted by a director: ${refused.message}; no grant is minted`, {
        details: { ...refused.details, approval_id: command.approval_id, resolution_event_id: refused.event_id },
      });
    }
    if (approval.status !== 'granted' || approval.attempt_id !== command.attempt_id) {
      throw new ApprovalServiceError('APPROVAL_NOT_GRANTED', `approval ${command.approval_id} is ${approval.status} for this attempt; no grant is minted`, {
        details: { approval_id: command.approval_id, status: approval.status },
      });
    }
    if (result.witness_required && !approval.witness_validated) {
      // The kernel refuses to authorize such an attempt; the grant is refused here too (Hermit 12.4, 16.8).
      throw new ApprovalServiceError('APPROVAL_NOT_GRANTED', `approval ${command.approval_id} was granted without revalidating the state witness policy required`, {
        details: { approval_id: command.approval_id, status: approval.status, reason: 'witness_not_validated' },
      });
    }
    return approval.resolved_by ?? result.evaluated_by;
  }
}

/** The refused `approval.granted` of the approval, if the log holds one (the last: the one acted on). */
function refusedGrant(refused: TaskHistory['refused'], approvalId: string): ResolutionRefusal | undefined {
  return [...(refused?.values() ?? [])].filter((refusal) => refusal.approval_id === approvalId && refusal.event_type === 'approval.granted').at(-1);
}

/** The longest a grant may live, renewals included (a day). */
export const GRANT_TTL_CEILING_SECONDS = 24 * 3600;

/**
 * How long a grant lives: `WRIT_GRANT_TTL_SECONDS`, doubled with each renewal (capped at a day). A
 * renewal answers a backlog that outlasted the grant before it; renewed for as long, its run command
 * would wait at the back of the same backlog and expire again (measured: 2,000 actions under chaos,
 * 1,950 refusals as expired with a flat lifetime). Still one use, bound to the attempt and its params.
 */
export function grantTtlFor(baseSeconds: number, renewal: number | undefined): number {
  return Math.min(GRANT_TTL_CEILING_SECONDS, baseSeconds * 2 ** (renewal ?? 0));
}

/**
 * Renewal `n` stands only on grants of the same authority (renewals `0..n-1`, all issued, none
 * revoked) the last of which expired with nothing run under it (no use claimed, or every use
 * claimed released as proven never started: issue 13): an executor refused it as
 * `GRANT_EXPIRED`, or its `exp` has passed on this clock (else it may still be used: retried).
 */
function checkRenewable(command: IssueGrant, renewal: number, events: readonly EventEnvelope[], nowSeconds: number): void {
  const idOf = (n: number) => grantIdFor({ ...command, renewal: n === 0 ? undefined : n });
  for (let n = 0; n < renewal; n += 1) {
    const grant = foldGrant(events, idOf(n));
    if (grant.status === 'initial') {
      throw new ApprovalServiceError('APPROVAL_RENEWAL_REFUSED', `renewal ${renewal} of attempt ${command.attempt_id}'s grant needs grant ${idOf(n)}, which was never issued`, {
        details: { attempt_id: command.attempt_id, renewal, missing_grant_id: idOf(n) },
      });
    }
    if (grant.status === 'revoked') {
      throw new ApprovalServiceError('APPROVAL_RENEWAL_REFUSED', `grant ${grant.grant_id} of attempt ${command.attempt_id} was revoked; a revoked grant is never renewed`, {
        details: { attempt_id: command.attempt_id, renewal, revoked_grant_id: grant.grant_id },
      });
    }
  }
  const renewed = foldGrant(events, idOf(renewal - 1));
  if (renewed.status === 'initial') return; // unreachable: checked above
  // A released use was proven never started (the executor releases it with its not_run record): it does not count.
  // Any other claimed use is in flight or ran, or may have: the action is never run again on a renewal.
  if (consumedUses(renewed) > 0) {
    throw new ApprovalServiceError('APPROVAL_RENEWAL_REFUSED', `a use of grant ${renewed.grant_id} was claimed and not proven never started (it may have run): only a grant nothing ran under is renewed`, {
      details: { attempt_id: command.attempt_id, renewal, grant_id: renewed.grant_id },
    });
  }
  const refusedExpired = events.some(
    (event) => event.event_type === 'grant.refused' && event.entity_type === 'grant' && event.entity_id === renewed.grant_id && event.payload['code'] === 'GRANT_EXPIRED',
  );
  if (!refusedExpired && nowSeconds < renewed.claims.exp) {
    throw new ApprovalServiceError('APPROVAL_GRANT_STILL_LIVE', `grant ${renewed.grant_id} is valid until ${new Date(renewed.claims.exp * 1000).toISOString()}; it is renewed only once expired`, {
      details: { attempt_id: command.attempt_id, renewal, grant_id: renewed.grant_id, exp: renewed.claims.exp },
    });
  }
}
