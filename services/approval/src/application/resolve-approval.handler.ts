import { hasErrorCode, type ApprovalResolution, type EventEnvelope } from '@writ/contracts';
import { approvalDecider, type ApprovalCommand, type ApprovalRecord } from '@writ/kernel';
import {
  RESOLUTION_AUTHORITY_CODES,
  ResolutionAuthorityError,
  SIGNED_REQUESTS,
  checkResolutionAuthority,
  decision,
  handleCommand,
  packetHashOfRef,
  requestedApproval,
  taskStream,
  verifySignedRequest,
  type CommandDecision,
  type RegistrationCheck,
} from '@writ/runtime';
import { ApprovalServiceError } from './approval-errors.js';
import { derivedId } from './event-drafts.js';
import { policyVersions } from './policy-drift.js';
import type { Clock, PolicyProfiles, PrincipalDirectory, TaskLog, WorkspaceWitness } from './ports.js';
import { landedResolution, resolutionDrafts, type ResolutionEvent } from './resolution-decision.js';
import type { ResolveApprovalReply, ResolveApprovalRequest } from './resolve-approval.contract.js';
import { claimedResolution } from './resolution-jws.js';
import { resolutionFailure } from './signed-request.js';
import { foldApproval } from './task-history.js';

export interface ResolveApprovalDeps {
  readonly log: TaskLog;
  readonly principals: PrincipalDirectory;
  readonly clock: Clock;
  readonly principalId: string;
  /** The executor's read-only workspace observation, to revalidate a state witness at grant time. */
  readonly witness: WorkspaceWitness;
  /** The policy service's profile bucket (read-only): the current version of the approval's profile at grant time. */
  readonly policies: PolicyProfiles;
  /** Re-read-and-decide rounds after losing an append race (default 5). */
  readonly maxConflicts?: number;
  /** That the director's registration and key chain back to the trust anchor (`resolutionRegistrationOptions`); none: not checked here. */
  readonly registration?: RegistrationCheck;
}

const STATUS_OF: Readonly<Record<string, ResolveApprovalReply['status']>> = {
  'approval.granted': 'granted',
  'approval.denied': 'denied',
  'approval.expired': 'expired',
  'approval.invalidated': 'invalidated',
};

/** Codes a resolver may see; anything else (the log or bus down) is APPROVAL_UNAVAILABLE. */
const REPLY_CODES = new Set([
  'APPROVAL_NOT_FOUND',
  'APPROVAL_RESOLVER_NOT_ALLOWED',
  'APPROVAL_SIGNATURE_INVALID',
  'APPROVAL_NOT_PENDING',
  'APPROVAL_RESOLUTION_MISMATCH',
  'APPROVAL_WITNESS_MISSING',
  'APPROVAL_WITNESS_UNAVAILABLE',
  'APPROVAL_POLICY_UNAVAILABLE',
  'CONTRACT_INVALID',
  ...RESOLUTION_AUTHORITY_CODES,
]);

/**
 * `<root>.qry.approval.resolve` (request/reply): a resolver's signed
 * ApprovalResolution grants or denies a pending approval.
 *
 * 1. The JWS must be a compact EdDSA JWS by an active key of the principal it
 *    names as `resolved_by` (keys folded from the log): the signer is the resolver.
 * 2. The kernel decides: only a `director`, never the requester, and only
 *    while pending; after `expires_at` the outcome is `approval.expired`.
 * 3. A grant of an approval that captured a state witness re-observes the
 *    witnessed resources through the executor and hands the fingerprints to the
 *    kernel (Hermit 16.8): unchanged → `approval.granted` with
 *    `witness_validated: true`; drifted → `approval.invalidated` (witness_drift,
 *    the drifted resources), which sends the attempt back to policy. No answer
 *    from the executor → APPROVAL_WITNESS_UNAVAILABLE and nothing is appended.
 * 4. A grant of an approval that answers a policy result compares the profile version
 *    that result was evaluated under with the profile's current version in the policy
 *    service's bucket (Hermit 19.6): different, or the profile gone → `approval.invalidated`
 *    (policy_drift), which re-enters policy; the bucket unavailable →
 *    APPROVAL_POLICY_UNAVAILABLE, nothing appended, the approval stays pending.
 * 5. The resolution must sign the approval's packet (`packet_hash` = the hash its
 *    `approval_packet_ref` names): a director who saw another packet, or a packet
 *    that changed since, is refused APPROVAL_RESOLUTION_PACKET_STALE.
 * 6. The event carries the director's JWS (`resolution_jws`), and before it is appended
 *    it passes the very check everyone who acts on it will make (`@writ/runtime`
 *    ResolutionAuthority: a key valid when signed, signed while pending, ...): the
 *    service never records a decision its consumers would refuse.
 * 7. The event is appended to the task stream together with `decision.recorded` (the
 *    Decision with the resolver); a lost race re-reads and decides again (a second
 *    resolution then finds it no longer pending).
 */
export class ResolveApprovalHandler {
  constructor(private readonly deps: ResolveApprovalDeps) {}

  /**
   * `options.recorded` runs once, after the append, when this call recorded the resolution; a resent
   * resolution that finds it already in the log is answered the same but not reported again (metrics).
   */
  async resolve(request: ResolveApprovalRequest, options: { readonly recorded?: (reply: ResolveApprovalReply) => void } = {}): Promise<ResolveApprovalReply> {
    try {
      let recordedHere = false;
      const reply = await this.#resolve(request, () => {
        recordedHere = true;
      });
      if (recordedHere) options.recorded?.(reply);
      return reply;
    } catch (error) {
      if (hasErrorCode(error) && REPLY_CODES.has(error.code)) throw error;
      throw new ApprovalServiceError('APPROVAL_UNAVAILABLE', 'the approval could not be resolved now; retry', { cause: error });
    }
  }

  async #resolve(request: ResolveApprovalRequest, recording: () => void): Promise<ResolveApprovalReply> {
    const claimed = claimedResolution(request.resolution_jws);
    if (claimed.approval_id !== request.approval_id) {
      throw new ApprovalServiceError('APPROVAL_RESOLUTION_MISMATCH', `the signed resolution is for approval ${claimed.approval_id}, not ${request.approval_id}`, {
        details: { approval_id: request.approval_id, signed_approval_id: claimed.approval_id },
      });
    }
    // Who may resolve (director, not the requester, still pending) is the kernel's to decide; resolutions
    // are not checked for freshness: the approval's own expiry bounds a replay, and a second one finds it resolved.
    const { payload: resolution, principal: resolver } = await verifySignedRequest(
      request.resolution_jws,
      { ...SIGNED_REQUESTS.approvalResolution, signers: 'any', freshnessSeconds: null },
      { principals: this.deps.principals, clock: this.deps.clock, failure: resolutionFailure },
    );
    const causationId = derivedId('res', request.resolution_jws);

    return handleCommand({
      stream: taskStream(this.deps.log, request.task_id),
      maxRounds: this.deps.maxConflicts,
      exhausted: () => new ApprovalServiceError('APPROVAL_UNAVAILABLE', `approval ${request.approval_id} kept changing while being resolved; retry`),
      decide: async (history): Promise<CommandDecision<ResolveApprovalReply>> => {
        const reply = (eventType: string, eventId: string): ResolveApprovalReply => ({
          approval_id: request.approval_id,
          task_id: request.task_id,
          status: STATUS_OF[eventType] ?? 'invalidated',
          resolved_by: resolver.principal_id,
          event_id: eventId,
        });
        // This very resolution may have landed already: an earlier round's append is two publishes, and the
        // orchestrator can react to the first before the second lands (a conflict), or the reply was lost.
        const landed = landedResolution(history.events, request.approval_id, causationId, this.deps.principalId);
        if (landed !== undefined) {
          const answer = reply(landed.event.event_type, landed.event.event_id);
          return landed.decision === undefined ? decision.done(answer) : decision.append([landed.decision], answer);
        }
        const state = foldApproval(history.events, request.approval_id);
        if (state.status === 'initial') {
          throw new ApprovalServiceError('APPROVAL_NOT_FOUND', `task ${request.task_id} has no approval ${request.approval_id}`, {
            details: { task_id: request.task_id, approval_id: request.approval_id },
          });
        }
        requireCurrentPacket(resolution, state);
        const at = this.deps.clock().toISOString();
        const who = { principal_id: resolver.principal_id, roles: resolver.roles };
        const data = { resolver: who, resolution_jws: request.resolution_jws, ...(resolution.note === undefined ? {} : { note: resolution.note }) };
        const command: ApprovalCommand =
          resolution.decision === 'grant' ? { type: 'grant-approval', data, metadata: { now: at } } : { type: 'deny-approval', data, metadata: { now: at } };
        const [event] = await this.#decide(command, state, request.task_id, history.events);
        if (event === undefined || event.type === 'approval.requested' || event.type === 'approval.resolution_refused') {
          throw new ApprovalServiceError('APPROVAL_UNAVAILABLE', 'the kernel decided nothing');
        }
        await this.#requireAuthority(event, history.events, request.approval_id);
        const drafts = resolutionDrafts({
          state,
          event,
          events: history.events,
          resolutionKey: `${request.approval_id}:${event.type}:${resolver.principal_id}`,
          actorId: this.deps.principalId,
          causationId,
          occurredAt: at,
          correlationId: request.task_id,
        });
        // A duplicate means our view was stale: the next read finds it landed (above), or no longer pending.
        // Either way it is this call's resolution from here on (a partly landed append is completed above).
        recording();
        return decision.append(drafts, reply(event.type, drafts[0]?.event_id ?? ''));
      },
    });
  }

  /**
   * The check every consumer of the resolution will make, made on the event about to be
   * appended: refused here, it is never recorded.
   */
  async #requireAuthority(event: ResolutionEvent, events: readonly EventEnvelope[], approvalId: string): Promise<void> {
    const approval = requestedApproval(events, approvalId);
    if (approval === undefined) throw new ApprovalServiceError('APPROVAL_NOT_FOUND', `approval ${approvalId} has no approval.requested in the log`);
    const registration = this.deps.registration;
    const check = await checkResolutionAuthority({ event_id: 'pending', event_type: event.type, payload: event.data }, approval, (id) => this.deps.principals.history(id), registration === undefined ? {} : { registration });
    if (!check.ok) throw new ResolutionAuthorityError(check.code, check.message, { details: check.details });
  }

  /**
   * The kernel decides first without policy versions or fingerprints, so who may resolve,
   * whether it is still pending and whether it expired are answered before anything else is
   * asked; only when it needs them (APPROVAL_POLICY_UNCHECKED, then APPROVAL_WITNESS_MISSING)
   * is the policy bucket read, then the workspace observed. A changed policy invalidates
   * before the executor is ever asked.
   */
  async #decide(command: ApprovalCommand, state: ApprovalRecord, taskId: string, events: readonly EventEnvelope[]) {
    if (command.type !== 'grant-approval') return approvalDecider.decide(command, state);
    let data = command.data;
    for (;;) {
      try {
        return approvalDecider.decide({ ...command, data }, state);
      } catch (error) {
        if (hasErrorCode(error, 'APPROVAL_POLICY_UNCHECKED') && data.policy_versions === undefined) {
          data = { ...data, policy_versions: await policyVersions(events, state, this.deps.policies) };
        } else if (hasErrorCode(error, 'APPROVAL_WITNESS_MISSING') && data.current_fingerprints === undefined && state.state_witness !== null) {
          const observed = await this.deps.witness.observe(taskId, Object.keys(state.state_witness.fingerprints));
          data = { ...data, current_fingerprints: { ...observed.fingerprints } };
        } else {
          throw error;
        }
      }
    }
  }
}

/** The resolution must sign the packet the approval shows now: the hash its `approval_packet_ref` names. */
function requireCurrentPacket(resolution: ApprovalResolution, state: ApprovalRecord): void {
  const current = packetHashOfRef(state.approval_packet_ref);
  if (resolution.packet_hash !== current) {
    throw new ResolutionAuthorityError(
      'APPROVAL_RESOLUTION_PACKET_STALE',
      `the resolution signs packet ${resolution.packet_hash}, but approval ${state.approval_id} shows ${current ?? state.approval_packet_ref}: fetch the packet again (writ approvals show ${state.approval_id}) and decide on what it says now`,
      { details: { approval_id: state.approval_id, signed_packet_hash: resolution.packet_hash, packet_ref: state.approval_packet_ref } },
    );
  }
}
