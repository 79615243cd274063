import type { EventDraft, EventEnvelope } from '@writ/contracts';
import { EventStoreError, GENESIS, sealEvent, type ChainLink } from '@writ/eventstore';
import { serviceDraft, type TaskHistory } from '@writ/runtime';
import type { TaskLog } from '../src/application/ports.js';

export const TASK = 'task-1';
export const APPROVAL = 'apv-1';
export const T0 = '2030-01-01T00:00:00.000Z';
/** The packet hash approval `apv-1` shows: what a resolution of it signs. */
export const PACKET_HASH = `sha256:${'e'.repeat(64)}`;

/**
 * A task stream in memory with the event store's guard (expected seq) and
 * dedupe (idempotency key). `interleave` stands for the orchestrator: it lands
 * its event right after the first event of the next multi-event append, so the
 * rest of that append loses the guard, as two publishes in a row can.
 */
export class RacingLog implements TaskLog {
  readonly events: EventEnvelope[] = [];
  interleave: EventDraft | undefined;

  async read(): Promise<TaskHistory> {
    return { events: [...this.events], seq: this.events.length };
  }

  async append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly duplicate: boolean }> {
    let duplicates = 0;
    for (const [index, draft] of drafts.entries()) {
      if (this.events.some((event) => event.idempotency_key !== undefined && event.idempotency_key === draft.idempotency_key)) {
        duplicates++;
        continue;
      }
      if (this.events.length !== expectedSeq + index - duplicates) {
        throw new EventStoreError('EVENTSTORE_CONFLICT', 'another writer got there first', { subject: taskId, expectedSeq, actualSeq: this.events.length, appended: [] } as never);
      }
      this.seal(taskId, draft);
      if (index === 0 && drafts.length > 1 && this.interleave !== undefined) {
        this.seal(taskId, this.interleave);
        this.interleave = undefined;
      }
    }
    return { duplicate: duplicates === drafts.length };
  }

  seal(taskId: string, draft: EventDraft): void {
    const last = this.events.at(-1);
    const link: ChainLink = last === undefined ? GENESIS : { taskSeq: last.task_seq, hash: last.hash };
    this.events.push(sealEvent(draft, taskId, link));
  }
}

export const draft = (key: string, eventType: string, entityType: 'approval' | 'attempt', entityId: string, payload: Record<string, unknown>): EventDraft =>
  serviceDraft({ key, eventType, entityType, entityId, stepId: 'step-1', attemptId: 'att-1', occurredAt: T0, actorId: 'writ-test', payload, causationId: null, correlationId: TASK });

/** A log holding one pending approval `apv-1` of attempt `att-1`, as the approval service requests it. */
export function logWithPendingApproval(): RacingLog {
  const log = new RacingLog();
  log.seal(
    TASK,
    draft(`${APPROVAL}:approval.requested`, 'approval.requested', 'approval', APPROVAL, {
      approval_id: APPROVAL,
      task_id: TASK,
      step_id: 'step-1',
      attempt_id: 'att-1',
      approval_type: 'action',
      requested_action_ref: 'action_request:ar-1',
      approval_packet_ref: `artifact:${PACKET_HASH}`,
      requested_by: 'agent-1',
      policy_result_ref: 'policy_result:pr-1',
      expires_at: '2030-01-01T01:00:00.000Z',
      state_witness: { ref: `sha256:${'c'.repeat(64)}`, fingerprints: { src: 'absent' }, observed_at: T0 },
      at: T0,
    }),
  );
  return log;
}

/** What the orchestrator appends on a resolution, landing between the resolution and its decision. */
export const orchestratorReaction = (): EventDraft => draft('att-1:attempt.reacted', 'attempt.approval_denied', 'attempt', 'att-1', { approval_id: APPROVAL, at: T0 });
