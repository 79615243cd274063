import { describe, expect, it } from 'vitest';
import { timeline } from '../test/projection-api.fixture.js';
import type { TaskEventView } from './projection-api.js';
import { eventDetail, summarizeSteps } from './task-summary.js';

const at = '2031-05-01T12:00:00.000Z';
function ev(seq: number, type: string, entity: 'step' | 'attempt', id: string, stepId = 'step-1'): TaskEventView {
  return {
    task_seq: seq,
    event_id: `e-${seq}`,
    event_type: type,
    entity_type: entity,
    entity_id: id,
    step_id: stepId,
    attempt_id: entity === 'attempt' ? id : null,
    actor_type: 'service',
    actor_id: 'orchestrator',
    payload: {},
    occurred_at: at,
  };
}

describe('summarizeSteps', () => {
  it('folds the governed path of one allowed action into a succeeded step and attempt', () => {
    // given the timeline of an allowed command
    // when it is summarised
    const steps = summarizeSteps(timeline);
    // then one step with one attempt, both succeeded, the attempt's last event the one that ended it
    expect(steps).toEqual([{ step_id: 'step-1', status: 'succeeded', attempts: [{ attempt_id: 'att-1', status: 'succeeded', last_event_type: 'attempt.succeeded' }] }]);
  });

  it('keeps a retried step with its failed and its running attempt, in order, whatever order the events arrive in', () => {
    // given a step whose first attempt was denied and whose second is executing
    const events = [
      ev(1, 'step.planned', 'step', 'step-1'),
      ev(2, 'step.marked_ready', 'step', 'step-1'),
      ev(3, 'step.attempt_opened', 'step', 'step-1'),
      ev(4, 'attempt.created', 'attempt', 'att-1'),
      ev(5, 'attempt.leased', 'attempt', 'att-1'),
      ev(6, 'attempt.awaiting_policy', 'attempt', 'att-1'),
      ev(7, 'attempt.policy_denied', 'attempt', 'att-1'),
      ev(8, 'step.attempt_closed', 'step', 'step-1'),
      ev(9, 'step.attempt_opened', 'step', 'step-1'),
      ev(10, 'attempt.created', 'attempt', 'att-2'),
      ev(11, 'attempt.leased', 'attempt', 'att-2'),
      ev(12, 'attempt.awaiting_policy', 'attempt', 'att-2'),
      ev(13, 'attempt.authorized', 'attempt', 'att-2'),
      ev(14, 'attempt.executing', 'attempt', 'att-2'),
    ];
    // when they are summarised out of order
    const steps = summarizeSteps([...events].reverse());
    // then the step runs and its attempts are listed first-seen first
    expect(steps).toEqual([
      {
        step_id: 'step-1',
        status: 'running',
        attempts: [
          { attempt_id: 'att-1', status: 'failed', last_event_type: 'attempt.policy_denied' },
          { attempt_id: 'att-2', status: 'executing', last_event_type: 'attempt.executing' },
        ],
      },
    ]);
  });

  it('follows the latest transition even where the timeline skips one, and never leaves a terminal status', () => {
    // given an attempt whose lease is not in the timeline, and a stray event after it succeeded
    const events = [
      ev(1, 'step.planned', 'step', 'step-1'),
      ev(2, 'step.attempt_opened', 'step', 'step-1'),
      ev(3, 'attempt.created', 'attempt', 'att-1'),
      ev(4, 'attempt.awaiting_policy', 'attempt', 'att-1'),
      ev(5, 'attempt.authorized', 'attempt', 'att-1'),
      ev(6, 'attempt.executing', 'attempt', 'att-1'),
      ev(7, 'attempt.observing', 'attempt', 'att-1'),
      ev(8, 'attempt.receipt_pending', 'attempt', 'att-1'),
      ev(9, 'attempt.succeeded', 'attempt', 'att-1'),
      ev(10, 'attempt.cancelled', 'attempt', 'att-1'),
    ];
    // when they are summarised
    const [step] = summarizeSteps(events);
    // then the step runs (no step event closed it) and the attempt stays succeeded
    expect(step).toEqual({ step_id: 'step-1', status: 'running', attempts: [{ attempt_id: 'att-1', status: 'succeeded', last_event_type: 'attempt.cancelled' }] });
  });
});

describe('eventDetail', () => {
  it('shows the policy outcome, the exit code and the receipt result', () => {
    const detail = (type: string) => eventDetail(timeline.find((e) => e.event_type === type)!);
    expect(detail('policy.evaluated')).toBe('outcome=allow risk=low');
    expect(detail('execution.completed')).toBe('outcome=completed exit_code=0');
    expect(detail('receipt.issued')).toBe('receipt=rcp-1 result=succeeded');
    expect(detail('attempt.authorized')).toBe('');
  });
});
