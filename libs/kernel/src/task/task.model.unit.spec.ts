import { TASK_TERMINAL_STATES, TASK_TRANSITIONS, type TaskStatus } from '@writ/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evolveIsTotal, instants, modelCheck } from '../../test/model.js';
import { taskDecider, type TaskCommand } from './task.decider.js';

const CODES = ['TASK_NOT_FOUND', 'TASK_ALREADY_EXISTS', 'TASK_TERMINAL', 'TASK_TRANSITION_NOT_ALLOWED'];

const data = fc.constantFrom<Pick<TaskCommand, 'type' | 'data'>>(
  {
    type: 'create-task',
    data: { task_id: 'task-1', title: 'T', goal: 'G', owner_principal_id: 'user-1', policy_profile_ref: 'p@1', task_contract_ref: 'artifact:c', files_owned: ['src/**'] },
  },
  { type: 'mark-task-ready', data: {} },
  { type: 'start-task', data: {} },
  { type: 'block-task', data: { reason: 'waiting' } },
  { type: 'unblock-task', data: {} },
  { type: 'pause-task', data: { reason: 'pause' } },
  { type: 'resume-task', data: {} },
  { type: 'complete-task', data: {} },
  { type: 'fail-task', data: { reason: 'broken' } },
  { type: 'cancel-task', data: { reason: 'stop' } },
  { type: 'roll-back-task', data: { rollback_ref: 'receipt:r' } },
);

const commands = fc
  .array(data, { maxLength: 25 })
  .chain((items) => instants(items.length).map((times) => items.map((item, i) => ({ ...item, metadata: { now: times[i] as string } }) as TaskCommand)));

describe('task decider model', () => {
  it('property: random command sequences only walk TASK_TRANSITIONS and nothing follows cancelled or rolled_back', () => {
    modelCheck(taskDecider, commands, CODES, (step) => {
      const { before, after } = step;
      if (before.status !== 'initial' && after.status !== before.status) {
        expect(TASK_TRANSITIONS[before.status].includes(after.status as TaskStatus), `${before.status} -> ${after.status}`).toBe(true);
      }
      if (before.status === 'cancelled' || before.status === 'rolled_back') {
        expect(step.events).toBeNull();
        expect(['TASK_TERMINAL', 'TASK_ALREADY_EXISTS']).toContain(step.code);
      }
      if (before.status !== 'initial' && TASK_TERMINAL_STATES.includes(before.status) && step.events !== null) {
        expect(step.events.map((e) => e.type)).toEqual(['task.rolled_back']);
      }
    });
  });

  it('property: evolve is total', () => {
    const valid = commands.map((sequence) => {
      const events: unknown[] = [];
      let state = taskDecider.initialState();
      for (const command of sequence) {
        try {
          const produced = taskDecider.decide(command, state);
          events.push(...produced);
          state = produced.reduce(taskDecider.evolve, state);
        } catch {
          // refused commands add nothing
        }
      }
      return events as never[];
    });
    evolveIsTotal(taskDecider, valid);
  });
});
