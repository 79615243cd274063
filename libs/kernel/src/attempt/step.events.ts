import { Id, LIMITS, Name, Ref, Text, Timestamp, Title, type StepStatus } from '@writ/contracts';
import { z } from 'zod';

const at = Timestamp;

/** How an attempt ended, as far as its step is concerned. */
export const ClosedAttemptOutcome = z.enum(['failed', 'cancelled', 'superseded']);
export type ClosedAttemptOutcome = z.infer<typeof ClosedAttemptOutcome>;

/** The events of the Step aggregate (Hermit 8.2, 12.2). */
export const StepEvent = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('step.planned'),
    data: z.strictObject({
      step_id: Id,
      task_id: Id,
      kind: Name,
      title: Title,
      contract_ref: Ref,
      depends_on: z.array(Id).max(LIMITS.listItems),
      max_attempts: z.int().min(1).max(100),
      at,
    }),
  }),
  z.strictObject({ type: z.literal('step.marked_ready'), data: z.strictObject({ at }) }),
  z.strictObject({ type: z.literal('step.attempt_opened'), data: z.strictObject({ attempt_id: Id, attempt_no: z.int().min(1).max(1_000), at }) }),
  z.strictObject({ type: z.literal('step.blocked'), data: z.strictObject({ reason: Text, at }) }),
  z.strictObject({ type: z.literal('step.unblocked'), data: z.strictObject({ at }) }),
  z.strictObject({ type: z.literal('step.attempt_closed'), data: z.strictObject({ attempt_id: Id, outcome: ClosedAttemptOutcome, at }) }),
  z.strictObject({ type: z.literal('step.succeeded'), data: z.strictObject({ attempt_id: Id, at }) }),
  z.strictObject({ type: z.literal('step.failed'), data: z.strictObject({ reason: Text, at }) }),
  z.strictObject({ type: z.literal('step.cancelled'), data: z.strictObject({ reason: Text, at }) }),
  z.strictObject({ type: z.literal('step.superseded'), data: z.strictObject({ reason: Text, superseded_by_step_id: Id.optional(), at }) }),
]);
export type StepEvent = z.infer<typeof StepEvent>;
export type StepEventType = StepEvent['type'];

/**
 * The step state machine as data: each event's source states and target.
 * A step leaves `planned`/`ready` for a terminal state only while no attempt
 * is active; `running`/`blocked` end through `step.attempt_closed` or
 * `step.succeeded`, so an attempt is never orphaned.
 */
export const STEP_EVENT_EDGES: Readonly<Record<Exclude<StepEventType, 'step.planned'>, { readonly from: readonly StepStatus[]; readonly to: StepStatus }>> =
  Object.freeze({
    'step.marked_ready': { from: ['planned'], to: 'ready' },
    'step.attempt_opened': { from: ['ready'], to: 'running' },
    'step.blocked': { from: ['running'], to: 'blocked' },
    'step.unblocked': { from: ['blocked'], to: 'running' },
    'step.attempt_closed': { from: ['running', 'blocked'], to: 'ready' },
    'step.succeeded': { from: ['running'], to: 'succeeded' },
    'step.failed': { from: ['planned', 'ready'], to: 'failed' },
    'step.cancelled': { from: ['planned', 'ready'], to: 'cancelled' },
    'step.superseded': { from: ['planned', 'ready'], to: 'superseded' },
  });
