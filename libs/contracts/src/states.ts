import { z } from 'zod';

/** Task states (Hermit 12.1). */
export const TaskStatus = z.enum([
  'created',
  'ready',
  'running',
  'blocked',
  'paused',
  'completed',
  'failed',
  'cancelled',
  'rolled_back',
]);
export type TaskStatus = z.infer<typeof TaskStatus>;

/**
 * The allowed task transitions of Hermit 12.1, as data: `TASK_TRANSITIONS[from]`
 * lists every state `from` may move to. `completed | failed -> rolled_back`
 * applies only when the task's actions support rollback.
 */
export const TASK_TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = Object.freeze({
  created: Object.freeze(['ready'] as const),
  ready: Object.freeze(['running', 'cancelled'] as const),
  running: Object.freeze(['blocked', 'paused', 'completed', 'failed', 'cancelled'] as const),
  blocked: Object.freeze(['running', 'cancelled'] as const),
  paused: Object.freeze(['ready', 'cancelled'] as const),
  completed: Object.freeze(['rolled_back'] as const),
  failed: Object.freeze(['rolled_back'] as const),
  cancelled: Object.freeze([] as const),
  rolled_back: Object.freeze([] as const),
});

/** True when Hermit 12.1 allows a task to move from `from` to `to`. */
export function isTaskTransitionAllowed(from: TaskStatus, to: TaskStatus): boolean {
  return TASK_TRANSITIONS[from].includes(to);
}

/**
 * Terminal task states: the work is over and a follow-up creates a new task
 * (Hermit 8.1.1: completed, failed, cancelled), plus rolled_back. The only
 * move out of a terminal state is the rollback edge `completed | failed -> rolled_back`.
 */
export const TASK_TERMINAL_STATES: readonly TaskStatus[] = Object.freeze(['completed', 'failed', 'cancelled', 'rolled_back'] as const);

/** Step states (Hermit 12.2). A step's effective state derives from its latest relevant attempt. */
export const StepStatus = z.enum(['planned', 'ready', 'running', 'blocked', 'succeeded', 'failed', 'cancelled', 'superseded']);
export type StepStatus = z.infer<typeof StepStatus>;

/** Terminal step states: no further transition. */
export const STEP_TERMINAL_STATES: readonly StepStatus[] = Object.freeze(['succeeded', 'failed', 'cancelled', 'superseded'] as const);

/** StepAttempt states (Hermit 12.3). Observation after uncertain execution is the `observing` phase. */
export const AttemptStatus = z.enum([
  'created',
  'leased',
  'compiling_context',
  'reasoning',
  'awaiting_policy',
  'awaiting_approval',
  'authorized',
  'executing',
  'observing',
  'receipt_pending',
  'succeeded',
  'failed',
  'cancelled',
  'superseded',
]);
export type AttemptStatus = z.infer<typeof AttemptStatus>;

/** Terminal attempt states: no further transition; a retry is a new attempt. */
export const ATTEMPT_TERMINAL_STATES: readonly AttemptStatus[] = Object.freeze(['succeeded', 'failed', 'cancelled', 'superseded'] as const);

/** Approval statuses (Hermit 8.9). */
export const ApprovalStatus = z.enum(['pending', 'granted', 'denied', 'expired', 'cancelled', 'invalidated']);
export type ApprovalStatus = z.infer<typeof ApprovalStatus>;

/**
 * Approval statuses that never change again. `granted` is not among them: a
 * granted approval whose state witness or packet drifts before use becomes
 * `invalidated` (Hermit 16.7, 16.8). The spec lists no approval transitions;
 * this is Writ's reading.
 */
export const APPROVAL_TERMINAL_STATES: readonly ApprovalStatus[] = Object.freeze(['denied', 'expired', 'cancelled', 'invalidated'] as const);
