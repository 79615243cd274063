import fc from 'fast-check';
import { STEP_TERMINAL_STATES } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { deciderSpec, meta, T0 } from '../../test/decider-spec.js';
import { evolveIsTotal, instants, modelCheck } from '../../test/model.js';
import { stepDecider, type StepCommand } from './step.decider.js';
import type { StepEvent } from './step.events.js';

const spec = deciderSpec(stepDecider);
const planned: StepEvent = {
  type: 'step.planned',
  data: { step_id: 'step-1', task_id: 'task-1', kind: 'edit', title: 'Patch retry.ts', contract_ref: 'artifact:step-1', depends_on: [], max_attempts: 2, at: T0 },
};
const ready: StepEvent = { type: 'step.marked_ready', data: { at: T0 } };
const opened = (attempt: string, no: number): StepEvent => ({ type: 'step.attempt_opened', data: { attempt_id: attempt, attempt_no: no, at: T0 } });
const closed = (attempt: string): StepEvent => ({ type: 'step.attempt_closed', data: { attempt_id: attempt, outcome: 'failed', at: T0 } });
const cmd = (type: StepCommand['type'], data: object): StepCommand => ({ type, data, metadata: meta() }) as StepCommand;

describe('step decider (Hermit 8.2, 12.2)', () => {
  it('given a ready step, when open-attempt, then the first attempt is numbered 1', () => {
    spec.given([planned, ready]).when(cmd('open-attempt', { attempt_id: 'a-1' })).then([opened('a-1', 1)]);
  });

  it('given an active attempt, when open-attempt, then STEP_ATTEMPT_ACTIVE (one mutable attempt per step)', () => {
    spec.given([planned, ready, opened('a-1', 1)]).when(cmd('open-attempt', { attempt_id: 'a-2' })).thenThrows('STEP_ATTEMPT_ACTIVE');
  });

  it('given a failed first attempt, when open-attempt, then the retry is a new attempt number', () => {
    spec.given([planned, ready, opened('a-1', 1), closed('a-1')]).when(cmd('open-attempt', { attempt_id: 'a-2' })).then([opened('a-2', 2)]);
  });

  it('given the last allowed attempt fails, when close-attempt, then the step fails too', () => {
    const events = spec
      .given([planned, ready, opened('a-1', 1), closed('a-1'), opened('a-2', 2)])
      .when(cmd('close-attempt', { attempt_id: 'a-2', outcome: 'failed' }))
      .thenEvents();
    expect(events.map((e) => e.type)).toEqual(['step.attempt_closed', 'step.failed']);
  });

  it('given the last allowed attempt is superseded, when close-attempt, then only the attempt closes (a supersession is no failure) and the step can be superseded', () => {
    const one = { ...planned, data: { ...planned.data, max_attempts: 1 } } as StepEvent;
    const superseded: StepEvent = { type: 'step.attempt_closed', data: { attempt_id: 'a-1', outcome: 'superseded', at: T0 } };
    spec.given([one, ready, opened('a-1', 1)]).when(cmd('close-attempt', { attempt_id: 'a-1', outcome: 'superseded' })).then([superseded]);
    spec
      .given([one, ready, opened('a-1', 1), superseded])
      .when(cmd('supersede-step', { reason: 'replaced', superseded_by_step_id: 'step-2' }))
      .then([{ type: 'step.superseded', data: { reason: 'replaced', superseded_by_step_id: 'step-2', at: T0 } }]);
  });

  it('given all attempts used, when open-attempt on a ready step, then STEP_ATTEMPTS_EXHAUSTED', () => {
    const one = { ...planned, data: { ...planned.data, max_attempts: 1 } } as StepEvent;
    const closedNoFail: StepEvent = { type: 'step.attempt_closed', data: { attempt_id: 'a-1', outcome: 'superseded', at: T0 } };
    spec.given([one, ready, opened('a-1', 1), closedNoFail]).when(cmd('open-attempt', { attempt_id: 'a-2' })).thenThrows('STEP_ATTEMPTS_EXHAUSTED');
  });

  it('given an active attempt, when close-attempt names another attempt, then STEP_ATTEMPT_UNKNOWN', () => {
    spec.given([planned, ready, opened('a-1', 1)]).when(cmd('close-attempt', { attempt_id: 'a-9', outcome: 'succeeded' })).thenThrows('STEP_ATTEMPT_UNKNOWN');
  });

  it('given an active attempt, when cancel-step, then STEP_ATTEMPT_ACTIVE (the attempt is never orphaned)', () => {
    spec.given([planned, ready, opened('a-1', 1)]).when(cmd('cancel-step', { reason: 'stop' })).thenThrows('STEP_ATTEMPT_ACTIVE');
  });

  it('given a succeeded step, when anything, then STEP_TERMINAL', () => {
    const succeeded: StepEvent = { type: 'step.succeeded', data: { attempt_id: 'a-1', at: T0 } };
    spec.given([planned, ready, opened('a-1', 1), succeeded]).when(cmd('open-attempt', { attempt_id: 'a-2' })).thenThrows('STEP_TERMINAL');
    spec.given([planned, ready, opened('a-1', 1), succeeded]).when(cmd('cancel-step', { reason: 'x' })).thenThrows('STEP_TERMINAL');
  });

  it('given no step, when open-attempt, then STEP_NOT_FOUND', () => {
    spec.given([]).when(cmd('open-attempt', { attempt_id: 'a-1' })).thenThrows('STEP_NOT_FOUND');
  });
});

const CODES = ['STEP_NOT_FOUND', 'STEP_ALREADY_EXISTS', 'STEP_TERMINAL', 'STEP_TRANSITION_NOT_ALLOWED', 'STEP_ATTEMPT_ACTIVE', 'STEP_ATTEMPTS_EXHAUSTED', 'STEP_ATTEMPT_UNKNOWN'];
const attemptId = fc.constantFrom('a-1', 'a-2', 'a-3');
const item = fc.oneof(
  fc.constant({ type: 'plan-step', data: { ...(({ at: _at, ...rest }) => rest)(planned.data as Extract<StepEvent, { type: 'step.planned' }>['data']), max_attempts: 3 } }),
  fc.constant({ type: 'mark-step-ready', data: {} }),
  attemptId.map((attempt_id) => ({ type: 'open-attempt', data: { attempt_id } })),
  fc.constant({ type: 'block-step', data: { reason: 'approval' } }),
  fc.constant({ type: 'unblock-step', data: {} }),
  fc.tuple(attemptId, fc.constantFrom('succeeded', 'failed', 'cancelled', 'superseded')).map(([attempt_id, outcome]) => ({ type: 'close-attempt', data: { attempt_id, outcome } })),
  fc.constant({ type: 'fail-step', data: { reason: 'x' } }),
  fc.constant({ type: 'cancel-step', data: { reason: 'x' } }),
  fc.constant({ type: 'supersede-step', data: { reason: 'x' } }),
);
const commands = fc.array(item, { maxLength: 30 }).chain((items) => instants(items.length).map((times) => items.map((c, i) => ({ ...c, metadata: { now: times[i] } }) as StepCommand)));

describe('step decider model', () => {
  it('property: at most one active attempt, attempt numbers count up, never more than max_attempts, nothing after a terminal state', () => {
    modelCheck(stepDecider, commands, CODES, (step) => {
      const { before, after } = step;
      if (before.status !== 'initial' && STEP_TERMINAL_STATES.includes(before.status)) expect(step.events).toBeNull();
      if (after.status === 'initial') return;
      expect(after.attempts.filter((a) => a.outcome === null).length).toBeLessThanOrEqual(1);
      expect(after.attempts.map((a) => a.attempt_no)).toEqual(after.attempts.map((_, i) => i + 1));
      expect(after.attempts.length).toBeLessThanOrEqual(after.max_attempts);
      expect(after.active_attempt_id === null).toBe(after.attempts.every((a) => a.outcome !== null));
    });
  });

  it('property: evolve is total', () => {
    evolveIsTotal(stepDecider, fc.constant([planned, ready, opened('a-1', 1)]));
  });
});
