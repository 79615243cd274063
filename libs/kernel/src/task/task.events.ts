import { Brief, ContinuationAnchor, Id, LIMITS, LongText, Name, Ref, TASK_TRANSITIONS, TaskPriority, Text, Timestamp, Title, type TaskStatus } from '@writ/contracts';
import { z } from 'zod';
import { GlobPattern } from '../shared/glob.js';

const at = Timestamp.describe('The command metadata `now` the event was decided at.');

/** The events of the Task aggregate (Hermit 8.1, 12.1). */
export const TaskEvent = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('task.created'),
    data: z.strictObject({
      task_id: Id,
      title: Title,
      goal: LongText,
      owner_principal_id: Id,
      policy_profile_ref: Ref,
      task_contract_ref: Ref,
      files_owned: z.array(GlobPattern).max(LIMITS.listItems).describe('The write scope: anchored globs that stay inside the workspace.'),
      sacred_exceptions: z
        .array(GlobPattern)
        .max(LIMITS.listItems)
        .optional()
        .describe('Sacred Scope paths the task explicitly needs to write (TaskSpec.sacred_exceptions); policy honours them only where the profile allows the same exception.'),
      priority: TaskPriority,
      source_channel: Name.optional(),
      brief: Brief.optional().describe('brief.json the task was created from (TaskSpec.brief, seed 003); such a task closes only on an accepted done claim.'),
      parent_task_id: Id.optional().describe('The live task this one was forked from (Hermit 8.1.3 fork_child): decomposition lineage; it inherits none of its working state.'),
      continuation_anchor: ContinuationAnchor.optional().describe(
        'The ended outcome this task continues (Hermit 8.1.1): a follow-up message on a terminal task starts this task instead of reopening that one.',
      ),
      at,
    }),
  }),
  z.strictObject({ type: z.literal('task.marked_ready'), data: z.strictObject({ at }) }),
  z.strictObject({ type: z.literal('task.started'), data: z.strictObject({ at }) }),
  z.strictObject({ type: z.literal('task.blocked'), data: z.strictObject({ reason: Text, blocked_on: Ref.optional(), at }) }),
  z.strictObject({ type: z.literal('task.unblocked'), data: z.strictObject({ at }) }),
  z.strictObject({ type: z.literal('task.paused'), data: z.strictObject({ reason: Text, at }) }),
  z.strictObject({ type: z.literal('task.resumed'), data: z.strictObject({ at }) }),
  z.strictObject({ type: z.literal('task.completed'), data: z.strictObject({ summary: Text.optional(), at }) }),
  z.strictObject({ type: z.literal('task.failed'), data: z.strictObject({ reason: Text, at }) }),
  z.strictObject({ type: z.literal('task.cancelled'), data: z.strictObject({ reason: Text, at }) }),
  z.strictObject({ type: z.literal('task.rolled_back'), data: z.strictObject({ rollback_ref: Ref, at }) }),
]);
export type TaskEvent = z.infer<typeof TaskEvent>;
export type TaskEventType = TaskEvent['type'];
export type TaskTransitionEventType = Exclude<TaskEventType, 'task.created'>;

/** The states that lead to `to` in Hermit 12.1, optionally narrowed to `only`. */
function edge(to: TaskStatus, only?: readonly TaskStatus[]): { readonly from: readonly TaskStatus[]; readonly to: TaskStatus } {
  const from = (Object.keys(TASK_TRANSITIONS) as TaskStatus[]).filter((s) => TASK_TRANSITIONS[s].includes(to) && (only === undefined || only.includes(s)));
  return Object.freeze({ from: Object.freeze(from), to });
}

/**
 * Which edge of `TASK_TRANSITIONS` each event walks. Two edges lead to
 * `running` (start, unblock) and two to `ready` (mark ready, resume); their
 * events name them apart. A unit test checks this table covers the contract's
 * table exactly.
 */
export const TASK_EVENT_EDGES: Readonly<Record<TaskTransitionEventType, { readonly from: readonly TaskStatus[]; readonly to: TaskStatus }>> = Object.freeze({
  'task.marked_ready': edge('ready', ['created']),
  'task.resumed': edge('ready', ['paused']),
  'task.started': edge('running', ['ready']),
  'task.unblocked': edge('running', ['blocked']),
  'task.blocked': edge('blocked'),
  'task.paused': edge('paused'),
  'task.completed': edge('completed'),
  'task.failed': edge('failed'),
  'task.cancelled': edge('cancelled'),
  'task.rolled_back': edge('rolled_back'),
});
