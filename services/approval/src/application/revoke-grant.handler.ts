import { hasErrorCode, type EventEnvelope, type RevokeGrant, type RevokeGrantReply } from '@writ/contracts';
import { grantDecider } from '@writ/kernel';
import { SIGNED_REQUESTS, decision, handleCommand, taskStream, verifySignedRequest } from '@writ/runtime';
import { ApprovalServiceError } from './approval-errors.js';
import { derivedId, serviceDraft } from './event-drafts.js';
import type { Clock, PrincipalDirectory, TaskLog } from './ports.js';
import { signedRequestFailure } from './signed-request.js';
import { foldGrant } from './task-history.js';

export interface RevokeGrantDeps {
  readonly log: TaskLog;
  readonly principals: PrincipalDirectory;
  readonly clock: Clock;
  /** The approval service principal: actor of `grant.revoked`. */
  readonly principalId: string;
  readonly freshnessSeconds: number;
  /** Re-read-and-decide rounds after losing an append race (default 5). */
  readonly maxConflicts?: number;
}

/** Codes a revoker may see; anything else (the log or bus down) is APPROVAL_UNAVAILABLE. */
const REPLY_CODES = new Set([
  'APPROVAL_SIGNATURE_INVALID',
  'APPROVAL_SIGNER_NOT_ALLOWED',
  'APPROVAL_SIGNED_REQUEST_STALE',
  'APPROVAL_SIGNED_REQUEST_MISMATCH',
  'APPROVAL_GRANT_NOT_FOUND',
  'CONTRACT_INVALID',
]);

/**
 * `<root>.qry.approval.revoke-grant` (request/reply): a director's signed
 * GrantRevocation appends `grant.revoked` to the grant's task stream.
 *
 * The signature, role (director, never an agent) and freshness are checked as
 * for any signed request (`verifySignedRequest`); the proposer of the granted
 * action may not revoke it either (the same separation as approval). The grant
 * is folded from the task stream with the kernel's grant decider, which decides
 * `revoke-grant`. A grant already revoked answers `already_revoked` with the
 * standing revocation, appending nothing. The executor reads the same stream
 * before it claims a use, so the revocation holds from the next use on.
 */
export class RevokeGrantHandler {
  constructor(private readonly deps: RevokeGrantDeps) {}

  async revoke(request: RevokeGrant): Promise<RevokeGrantReply> {
    try {
      return await this.#revoke(request);
    } catch (error) {
      if (hasErrorCode(error) && REPLY_CODES.has(error.code)) throw error;
      throw new ApprovalServiceError('APPROVAL_UNAVAILABLE', 'the grant could not be revoked now; retry', { cause: error });
    }
  }

  async #revoke(request: RevokeGrant): Promise<RevokeGrantReply> {
    const { payload: revocation, signer } = await verifySignedRequest(
      request.revocation_jws,
      { ...SIGNED_REQUESTS.grantRevocation, signers: 'director', freshnessSeconds: this.deps.freshnessSeconds },
      { principals: this.deps.principals, clock: this.deps.clock, failure: signedRequestFailure },
    );
    if (revocation.grant_id !== request.grant_id || revocation.task_id !== request.task_id) {
      throw new ApprovalServiceError('APPROVAL_SIGNED_REQUEST_MISMATCH', `the signed revocation is for grant ${revocation.grant_id} of task ${revocation.task_id}`, {
        details: { grant_id: request.grant_id, task_id: request.task_id, signed_grant_id: revocation.grant_id, signed_task_id: revocation.task_id },
      });
    }
    const causationId = derivedId('rev', request.revocation_jws);
    return handleCommand({
      stream: taskStream(this.deps.log, request.task_id),
      maxRounds: this.deps.maxConflicts,
      exhausted: () => new ApprovalServiceError('APPROVAL_UNAVAILABLE', `the task of grant ${request.grant_id} kept changing while it was being revoked; retry`),
      decide: (history) => {
        const state = foldGrant(history.events, request.grant_id);
        if (state.status === 'initial') {
          throw new ApprovalServiceError('APPROVAL_GRANT_NOT_FOUND', `task ${request.task_id} has no grant ${request.grant_id}`, {
            details: { task_id: request.task_id, grant_id: request.grant_id },
          });
        }
        if (proposerOf(history.events, state.claims.attempt_id) === signer) {
          throw new ApprovalServiceError('APPROVAL_SIGNER_NOT_ALLOWED', `${signer} proposed the granted action and may not govern its grant`, {
            details: { principal_id: signer, reason: 'requester' },
          });
        }
        // Revoked already (a duplicate append lands here too): answered with the standing revocation.
        if (state.status === 'revoked') return decision.done(standingRevocation(history.events, request));

        const at = this.deps.clock().toISOString();
        const [event] = grantDecider.decide({ type: 'revoke-grant', data: { revoked_by: signer, reason: revocation.reason }, metadata: { now: at } }, state);
        if (event?.type !== 'grant.revoked') throw new ApprovalServiceError('APPROVAL_UNAVAILABLE', 'the kernel decided no revocation');
        const draft = serviceDraft({
          key: `${request.grant_id}:grant.revoked`,
          eventType: event.type,
          entityType: 'grant',
          entityId: request.grant_id,
          stepId: state.claims.step_id,
          attemptId: state.claims.attempt_id,
          occurredAt: at,
          actorId: this.deps.principalId,
          payload: { ...event.data },
          causationId,
          correlationId: request.task_id,
        });
        const reply: RevokeGrantReply = { grant_id: request.grant_id, task_id: request.task_id, status: 'revoked', revoked_by: signer, revoked_at: event.data.at, event_id: draft.event_id };
        return decision.append([draft], reply);
      },
    });
  }
}

/** Who proposed the action of `attemptId` (its ActionRequest's `proposed_by`), if the task stream says. */
function proposerOf(events: readonly EventEnvelope[], attemptId: string): string | undefined {
  for (const event of events) {
    if (event.attempt_id !== attemptId) continue;
    const request = event.event_type === 'attempt.awaiting_policy' ? (event.payload['action_request'] as { proposed_by?: unknown } | undefined) : undefined;
    if (typeof request?.proposed_by === 'string') return request.proposed_by;
    if (event.event_type === 'approval.requested' && typeof event.payload['requested_by'] === 'string') return event.payload['requested_by'];
  }
  return undefined;
}

function standingRevocation(events: readonly EventEnvelope[], request: RevokeGrant): RevokeGrantReply {
  const revoked = events.find((event) => event.event_type === 'grant.revoked' && event.entity_id === request.grant_id);
  const payload = (revoked?.payload ?? {}) as { revoked_by?: unknown; at?: unknown };
  return {
    grant_id: request.grant_id,
    task_id: request.task_id,
    status: 'already_revoked',
    revoked_by: typeof payload.revoked_by === 'string' ? payload.revoked_by : 'unknown',
    revoked_at: typeof payload.at === 'string' ? payload.at : (revoked?.occurred_at ?? new Date(0).toISOString()),
    event_id: revoked?.event_id ?? derivedId('evt', `${request.grant_id}:grant.revoked`),
  };
}
