import type { ExpireApproval } from '@writ/contracts';
import { approvalDecider } from '@writ/kernel';
import { decision, handleCommand, taskStream, type CommandDecision } from '@writ/runtime';
import { ApprovalServiceError } from './approval-errors.js';
import { causationIdOf } from './event-drafts.js';
import type { Clock, CommandOrigin, TaskLog } from './ports.js';
import { landedResolution, resolutionDrafts } from './resolution-decision.js';
import { foldApproval } from './task-history.js';

export interface ExpireApprovalDeps {
  readonly log: TaskLog;
  readonly clock: Clock;
  /** The approval service principal: actor of the events and `resolved_by` of an expiry. */
  readonly principalId: string;
  /** Re-read-and-decide rounds after losing an append race (default 5). */
  readonly maxConflicts?: number;
}

/** What one firing of the timer found. */
export type ExpiryOutcome =
  /** `approval.expired` (and its decision) appended by this firing. */
  | { readonly kind: 'expired' }
  /** The approval is no longer pending (resolved, cancelled, invalidated, or expired by someone else): nothing to do. */
  | { readonly kind: 'settled'; readonly status: string }
  /** Still pending and not yet due (by the log's `expires_at` and this service's clock). */
  | { readonly kind: 'not_due'; readonly dueInMs: number };

/**
 * `writ.cmd.approval.expire`: one firing of an approval's expiry timer. The decision is the
 * log's, never the timer's: the approval is folded from the task stream and the kernel's
 * `expire-approval` appends `approval.expired` only for an approval still pending whose
 * `expires_at` has passed (resolved_by = this service). A resolution that got there first
 * wins (the kernel refuses, or the append conflicts and the re-read finds it resolved), so
 * an approval resolved meanwhile is never expired.
 */
export class ExpireApprovalHandler {
  constructor(private readonly deps: ExpireApprovalDeps) {}

  async handle(command: ExpireApproval, origin: CommandOrigin): Promise<ExpiryOutcome> {
    return handleCommand({
      stream: taskStream(this.deps.log, command.task_id),
      maxRounds: this.deps.maxConflicts,
      exhausted: () => new ApprovalServiceError('APPROVAL_UNAVAILABLE', `approval ${command.approval_id} kept changing while being expired; retry`),
      decide: (history): CommandDecision<ExpiryOutcome> => {
        const landed = landedResolution(history.events, command.approval_id, causationIdOf(origin.commandId), this.deps.principalId);
        if (landed !== undefined) {
          const outcome: ExpiryOutcome = landed.event.event_type === 'approval.expired' ? { kind: 'expired' } : { kind: 'settled', status: landed.event.event_type.slice('approval.'.length) };
          return landed.decision === undefined ? decision.done(outcome) : decision.append([landed.decision], outcome);
        }
        const state = foldApproval(history.events, command.approval_id);
        if (state.status === 'initial') {
          throw new ApprovalServiceError('APPROVAL_NOT_FOUND', `task ${command.task_id} has no approval ${command.approval_id}; the timer has nothing to expire`, {
            details: { task_id: command.task_id, approval_id: command.approval_id },
          });
        }
        if (state.status !== 'pending') return decision.done({ kind: 'settled', status: state.status });
        const now = this.deps.clock();
        const dueInMs = Date.parse(state.expires_at) - now.getTime();
        if (dueInMs > 0) return decision.done({ kind: 'not_due', dueInMs });

        const at = now.toISOString();
        const [event] = approvalDecider.decide({ type: 'expire-approval', data: { resolved_by: this.deps.principalId }, metadata: { now: at } }, state);
        if (event === undefined || event.type === 'approval.requested' || event.type === 'approval.resolution_refused') throw new ApprovalServiceError('APPROVAL_UNAVAILABLE', 'the kernel decided nothing');
        const drafts = resolutionDrafts({
          state,
          event,
          events: history.events,
          resolutionKey: `${command.approval_id}:${event.type}:${this.deps.principalId}`,
          actorId: this.deps.principalId,
          causationId: causationIdOf(origin.commandId),
          occurredAt: at,
          correlationId: command.task_id,
        });
        return decision.append(drafts, { kind: 'expired' });
      },
    });
  }
}
