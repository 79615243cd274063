import { hasErrorCode } from '@writ/contracts';
import { DEFAULT_WORKING_STATE_LIMITS, workingStateDecider, type WorkingStateEvent } from '@writ/kernel';
import type { ClaimPlanner } from './plan-claims.js';

/** The working state request id of a degraded memory's candidate: one per memory event, so it is written once. */
export function memoryCandidateRequestId(memoryEventId: string): string {
  return `memcand-${memoryEventId}`.slice(0, 128);
}

/**
 * Hermit 6.3.1, "an unsupported write degrades to working state" (issue 17):
 * a memory_write the executor recorded as `degraded_to_working_state` left no
 * memory record, and its candidate entry (the kernel's, carried in
 * `execution.completed.memory`) is written here to the task's working state,
 * which the orchestrator alone appends. Once per memory event (its request id
 * derives from the event); the working state is opened with the default limits
 * when the task has none yet. A candidate the working state cannot take (past
 * its limits) is left out: the memory event still records it, and the receipt
 * says the promotion degraded.
 */
export function planMemoryCandidates(planner: Pick<ClaimPlanner, 'view' | 'now' | 'actorId' | 'fact'>): void {
  const { view } = planner;
  const metadata = { now: planner.now };
  for (const attempt of view.attempts.values()) {
    for (const execution of attempt.executions) {
      const memory = execution.value.memory;
      if (memory?.outcome !== 'degraded_to_working_state' || memory.entry === undefined) continue;
      const requestId = memoryCandidateRequestId(memory.event_id);
      if (view.workingStateRequests.has(requestId)) continue;
      let state = view.workingState;
      const decided: WorkingStateEvent[] = [];
      try {
        if (state.status === 'initial') {
          const opened = workingStateDecider.decide({ type: 'open-working-state', data: { task_id: view.taskId, limits: DEFAULT_WORKING_STATE_LIMITS }, metadata }, state);
          decided.push(...opened);
          for (const event of opened) state = workingStateDecider.evolve(state, event);
        }
        if (state.status !== 'open') continue;
        decided.push(
          ...workingStateDecider.decide(
            {
              type: 'revise-working-state',
              data: { task_id: view.taskId, request_id: requestId, revised_by: planner.actorId, expected_revision: state.revision, set: [memory.entry], remove: [] },
              metadata,
            },
            state,
          ),
        );
      } catch (error) {
        if (hasErrorCode(error) && error.code.startsWith('KNOWLEDGE_')) continue;
        throw error;
      }
      decided.forEach((event, n) => {
        const key = event.type === 'working_state.opened' ? 'ws:opened' : `ws:${requestId}:${n}`;
        planner.fact({ type: event.type, entityType: 'task', entityId: view.taskId, payload: event.data as unknown as Record<string, unknown>, key, attemptId: attempt.attempt_id });
      });
    }
  }
}
