import type { EventEnvelope } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import type { UseRecord } from '../outbound/cells/index.js';
import { findStarted, reconcileStep, type ReconcileInput } from './reconcile-use.js';

const USE = `use-${'a'.repeat(40)}`;
const OTHER_USE = `use-${'b'.repeat(40)}`;
const DEADLINE = Date.parse('2031-01-01T00:10:00Z');
const BEFORE = DEADLINE - 1;
const AFTER = DEADLINE + 1;

function record(fields: Partial<UseRecord>): UseRecord {
  return {
    started: false,
    fenced: false,
    exit_code: undefined,
    timed_out: false,
    pgid: undefined,
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    stdout_rest: undefined,
    stderr_rest: undefined,
    ...fields,
  };
}

const step = (input: Partial<ReconcileInput>) => reconcileStep({ record: undefined, local: true, now: BEFORE, deadline: DEADLINE, ...input });

describe('reconcileStep: what a claimed, never completed use comes to (Hermit 19.3)', () => {
  it.each([
    // [case, input, expected kind]
    ['the exit status is recorded (exit 0)', { record: record({ started: true, exit_code: 0 }) }, 'from-record'],
    ['the exit status is recorded (exit 3), after the deadline', { record: record({ started: true, exit_code: 3 }), now: AFTER }, 'from-record'],
    ['the exit status is recorded, the cell not on this host any more', { record: record({ started: true, exit_code: 0 }), local: false }, 'from-record'],
    ['the wrapper found the fence and never ran it', { record: record({ started: true, fenced: true }) }, 'not-run'],
    ['the wrapper found the fence, after the deadline', { record: record({ started: true, fenced: true }), now: AFTER }, 'not-run'],
    ['the local record directory does not exist yet', { record: undefined, local: true }, 'fence'],
    ['the local record exists and the wrapper has not begun', { record: record({ started: false }), local: true }, 'fence'],
    ['a local use nobody began, even past the deadline', { record: record({ started: false }), local: true, now: AFTER }, 'fence'],
    ['started, no exit status, before the deadline', { record: record({ started: true, pgid: 42 }) }, 'await'],
    ['started, no exit status, past the deadline', { record: record({ started: true, pgid: 42 }), now: AFTER }, 'unknown'],
    ['started, no exit status, at the deadline instant', { record: record({ started: true }), now: DEADLINE }, 'unknown'],
    ["another executor's use (nothing to read here), before its deadline", { record: undefined, local: false }, 'await'],
    ["another executor's use, past its deadline", { record: undefined, local: false, now: AFTER }, 'unknown'],
    ['the container and its record are gone, past the deadline', { record: undefined, local: false, now: AFTER }, 'unknown'],
  ] as const)('given %s, then %s', (_case, input, kind) => {
    expect(step(input as Partial<ReconcileInput>).kind).toBe(kind);
  });

  it('given a recorded exit status, then the record itself is handed on (exit code, output, timeout)', () => {
    const recorded = record({ started: true, exit_code: 124, timed_out: true, stdout: Buffer.from('partial') });
    const result = step({ record: recorded });
    expect(result).toEqual({ kind: 'from-record', record: recorded });
  });

  it('given an unknown outcome, then the reason says whether the action started or left no record', () => {
    expect(step({ record: record({ started: true }), now: AFTER })).toMatchObject({ kind: 'unknown', reason: expect.stringContaining('started') });
    expect(step({ record: undefined, local: false, now: AFTER })).toMatchObject({ kind: 'unknown', reason: expect.stringContaining('no record') });
  });

  it('given a started record without exit status, then it is never fenced (it may be running) and never re-run', () => {
    for (const now of [BEFORE, AFTER]) {
      const kind = step({ record: record({ started: true }), now }).kind;
      expect(['await', 'unknown']).toContain(kind);
    }
  });
});

describe('findStarted: the journaled exec of a use in the task stream', () => {
  const started = (useId: string, payload: Record<string, unknown> = {}): EventEnvelope => ({
    event_id: `${useId}-started`,
    schema_version: 1,
    event_type: 'execution.started',
    entity_type: 'attempt',
    entity_id: 'att-1',
    attempt_id: 'att-1',
    occurred_at: '2031-01-01T00:00:00Z',
    actor_type: 'service',
    actor_id: 'writ-executor',
    payload: {
      use_id: useId,
      grant_id: 'gnt-1',
      use_no: 1,
      executor_id: 'executor-a',
      container_id: 'c'.repeat(64),
      exec_id: 'e'.repeat(64),
      started_at: '2031-01-01T00:00:00Z',
      deadline: '2031-01-01T00:01:00Z',
      ...payload,
    },
    causation_id: null,
    correlation_id: 'task-1',
    task_id: 'task-1',
    task_seq: 1,
    prev_event_hash: null,
    hash: '0'.repeat(64),
  });

  it('given execution.started of several uses, then the one of this use is found with its event id and deadline', () => {
    const found = findStarted([started(OTHER_USE), started(USE, { executor_id: 'executor-b' })], USE);
    expect(found).toMatchObject({ event_id: `${USE}-started`, data: { use_id: USE, executor_id: 'executor-b', deadline: '2031-01-01T00:01:00Z' } });
  });

  it('given no execution.started of this use, or a malformed one, then nothing is found', () => {
    expect(findStarted([started(OTHER_USE)], USE)).toBeUndefined();
    expect(findStarted([started(USE, { container_id: 'not hex' })], USE)).toBeUndefined();
    expect(findStarted([], USE)).toBeUndefined();
  });
});
