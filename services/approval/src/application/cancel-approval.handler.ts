import type { CancelApproval } from '@writ/contracts';
import { approvalDecider, type ApprovalCommand } from '@writ/kernel';
import { ApprovalServiceError } from './approval-errors.js';
import { causationIdOf } from './event-drafts.js';
import type { Clock, CommandOrigin, TaskLog } from './ports.js';
import { landedResolution, resolutionDrafts } from './resolution-decision.js';
import { foldApproval } from './task-history.js';

export interface CancelApprovalDeps {
  readonly log: TaskLog;
  readonly clock: Clock;
  /** The approval service principal: actor of the events. */
  readonly principalId: string;
}

export type CancelApprovalOutcome = 'cancelled' | 'invalidated' | 'already_resolved';

/**
 * `writ.cmd.approval.cancel` (sent by the orchestrator): a pending approval must not be
 * resolved any more.
 * - `task_ended`: the task reached a terminal state → `approval.cancelled` (reason);
 * - `input_drift`: a newly bound input changed the action, its risk or its targets
 *   (Hermit 16.7) → `approval.invalidated` with cause `input_drift`, which re-enters
 *   policy or lets the orchestrator supersede the attempt.
 * Each is appended with its `decision.recorded` (decided_by = `cancelled_by`). An approval
 * that is no longer pending (granted, denied, expired, cancelled, invalidated) is left as
 * it is: the command is acknowledged and nothing is appended, so a redelivery or a late
 * cancellation is harmless. An approval not in the log yet (its request still in flight) is
 * APPROVAL_NOT_FOUND, retried with backoff.
 */
export class CancelApprovalHandler {
  constructor(private readonly deps: CancelApprovalDeps) {}

  async handle(command: CancelApproval, origin: CommandOrigin): Promise<CancelApprovalOutcome> {
    const history = await this.deps.log.read(command.task_id);
    if (history.seq === 0) {
      throw new ApprovalServiceError('APPROVAL_TASK_NOT_FOUND', `task ${command.task_id} has no events; nothing to cancel`, { details: { task_id: command.task_id } });
    }
    // A redelivery after this command's resolution landed without its decision (a lost race between the two publishes) finishes it.
    const landed = landedResolution(history.events, command.approval_id, causationIdOf(origin.commandId), this.deps.principalId);
    if (landed !== undefined) {
      // A lost race surfaces as EVENTSTORE_CONFLICT here too: redelivered, re-read.
      if (landed.decision !== undefined) await this.deps.log.append(command.task_id, [landed.decision], history.seq);
      return landed.event.event_type === 'approval.cancelled' ? 'cancelled' : landed.event.event_type === 'approval.invalidated' ? 'invalidated' : 'already_resolved';
    }
    const state = foldApproval(history.events, command.approval_id);
    if (state.status === 'initial') {
      throw new ApprovalServiceError('APPROVAL_NOT_FOUND', `task ${command.task_id} has no approval ${command.approval_id} (yet); retried`, {
        details: { task_id: command.task_id, approval_id: command.approval_id },
      });
    }
    if (state.attempt_id !== command.attempt_id) {
      throw new ApprovalServiceError('APPROVAL_ID_CONFLICT', `approval ${command.approval_id} belongs to attempt ${state.attempt_id}, not ${command.attempt_id}`, {
        details: { approval_id: command.approval_id, attempt_id: state.attempt_id },
      });
    }
    if (state.status !== 'pending') return 'already_resolved';

    const at = this.deps.clock().toISOString();
    const kernelCommand: ApprovalCommand =
      command.cause === 'task_ended'
        ? { type: 'cancel-approval', data: { resolved_by: command.cancelled_by, reason: command.reason }, metadata: { now: at } }
        : { type: 'invalidate-approval', data: { resolved_by: command.cancelled_by, cause: 'input_drift', note: command.reason }, metadata: { now: at } };
    const [event] = approvalDecider.decide(kernelCommand, state);
    if (event === undefined || event.type === 'approval.requested' || event.type === 'approval.resolution_refused') throw new ApprovalServiceError('APPROVAL_UNAVAILABLE', 'the kernel decided nothing');
    const drafts = resolutionDrafts({
      state,
      event,
      events: history.events,
      resolutionKey: `${command.approval_id}:${event.type}:${command.cause}`,
      actorId: this.deps.principalId,
      causationId: causationIdOf(origin.commandId),
      occurredAt: at,
      correlationId: command.task_id,
    });
    // A lost race surfaces as EVENTSTORE_CONFLICT: the bus redelivers soon, and the re-read decides again.
    await this.deps.log.append(command.task_id, drafts, history.seq);
    return event.type === 'approval.cancelled' ? 'cancelled' : 'invalidated';
  }
}
