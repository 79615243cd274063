import type { ExecutionCompleted } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import type { FactDraft } from './plan-claims.js';
import { memoryCandidateRequestId, planMemoryCandidates } from './plan-memory-candidates.js';
import { TaskView, type LoggedEvent } from './task-view.js';

const AT = '2030-01-01T00:01:00Z';
const HASH = 'a'.repeat(64);

function completion(seq: number, memory: ExecutionCompleted['memory']): LoggedEvent {
  const payload: ExecutionCompleted = {
    grant_id: 'gnt-1',
    use_no: 1,
    executor_id: 'executor-1',
    outcome: 'completed',
    exit_code: 0,
    timed_out: false,
    duration_ms: 1,
    stdout_sha256: HASH,
    stderr_sha256: HASH,
    changed_files: [],
    artifacts: [],
    environment: null,
    ...(memory === undefined ? {} : { memory }),
    at: AT,
  };
  return { event_id: `use-${seq}-completed`, event_type: 'execution.completed', entity_type: 'attempt', entity_id: 'att-1', attempt_id: 'att-1', task_seq: seq, payload };
}

const degraded = (entry: Record<string, unknown> = { key: 'memory_candidate.mem_1', kind: 'uncertainty', value: { claim: 'the port is 8080' } }): ExecutionCompleted['memory'] =>
  ({ memory_id: 'mem-1', op: 'promote', outcome: 'degraded_to_working_state', event_id: 'use-1-memory', event_sha256: HASH, reasons: ['EVIDENCE_MISSING'], entry }) as ExecutionCompleted['memory'];

/** Runs the planner step as the task planner does: each fact drafted is folded into the view at once. */
function plan(view: TaskView): FactDraft[] {
  const drafted: FactDraft[] = [];
  planMemoryCandidates({
    view,
    now: AT,
    actorId: 'writ-orchestrator',
    fact: (draft) => {
      drafted.push(draft);
      view.apply({ event_id: draft.key, event_type: draft.type, entity_type: draft.entityType, entity_id: draft.entityId, attempt_id: draft.attemptId, task_seq: view.headSeq + 1, payload: draft.payload });
    },
  });
  return drafted;
}

describe('a degraded memory_write degrades to working state (Hermit 6.3.1, issue 17)', () => {
  it('given an execution.completed whose memory_write degraded, then the working state is opened and the candidate written, keyed by the memory event', () => {
    const view = TaskView.fold('task-1', [completion(1, degraded())]);
    const drafted = plan(view);
    expect(drafted.map((d) => [d.type, d.key])).toEqual([
      ['working_state.opened', 'ws:opened'],
      ['working_state.revised', `ws:${memoryCandidateRequestId('use-1-memory')}:1`],
    ]);
    expect(drafted[1]?.payload).toMatchObject({ request_id: 'memcand-use-1-memory', revised_by: 'writ-orchestrator', set: [{ key: 'memory_candidate.mem_1', kind: 'uncertainty' }] });
    expect(view.workingState.status === 'open' && view.workingState.entries.map((e) => e.key)).toEqual(['memory_candidate.mem_1']);
  });

  it('given the candidate already written, then handling any later event writes nothing more', () => {
    const view = TaskView.fold('task-1', [completion(1, degraded())]);
    plan(view);
    expect(plan(view)).toEqual([]);
  });

  it('given a promoted or errored memory_write, or another action, then nothing goes to working state', () => {
    const promoted = { ...degraded(), outcome: 'promoted', reasons: undefined, entry: undefined } as unknown as ExecutionCompleted['memory'];
    expect(plan(TaskView.fold('task-1', [completion(1, promoted), completion(2, undefined)]))).toEqual([]);
  });

  it('given a candidate the working state cannot take (over its entry size limit), then it is left out and nothing is appended', () => {
    const view = TaskView.fold('task-1', [completion(1, degraded({ key: 'memory_candidate.mem_1', kind: 'uncertainty', value: 'x'.repeat(5_000) }))]);
    expect(plan(view)).toEqual([]);
  });
});
