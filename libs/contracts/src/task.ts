import { z } from 'zod';
import { Id, Name, Ref, Timestamp } from './ids.js';
import { LIMITS } from './limits.js';
import { TaskStatus } from './states.js';
import { FilePath, LongText, Text, Title } from './text.js';

/** Scheduling priority of a task. */
export const TaskPriority = z.enum(['low', 'normal', 'high', 'urgent']);
export type TaskPriority = z.infer<typeof TaskPriority>;

/** Whether a task's independent steps may run concurrently (Hermit 20.2). */
export const ParallelismMode = z.enum(['sequential', 'parallel']);
export type ParallelismMode = z.infer<typeof ParallelismMode>;

/**
 * A structured pointer from a new task to the terminal outcome it continues
 * (Hermit 8.1.1); a terminal task is never reopened.
 */
export const ContinuationAnchor = z.strictObject({
  anchor_task_id: Id,
  anchor_kind: z.enum(['completed_outcome']),
  selection_reason: Text,
  outcome_status: TaskStatus,
  outcome_summary: Text,
  source_artifact_refs: z.array(Ref).max(LIMITS.listItems),
});
export type ContinuationAnchor = z.infer<typeof ContinuationAnchor>;

/** The durable entrypoint for work (Hermit 8.1). */
export const Task = z
  .strictObject({
    task_id: Id,
    title: Title,
    goal: LongText,
    status: TaskStatus,
    priority: TaskPriority,
    owner_principal_id: Id,
    policy_profile_ref: Ref.describe('The policy profile governing the task, e.g. "local_edit_allowed@3".'),
    task_contract_ref: Ref.describe('The task contract artifact (brief: goal, scope, done criteria).'),
    created_at: Timestamp,
    updated_at: Timestamp,
    parent_task_id: Id.optional().describe('Decomposition lineage only; never conversational carry-forward.'),
    depends_on: z.array(Id).max(LIMITS.listItems).optional(),
    labels: z.array(Name).max(LIMITS.shortListItems).optional(),
    deadline_at: Timestamp.optional(),
    workspace_hint: FilePath.optional(),
    requested_by: Id.optional(),
    source_channel: Name.optional(),
    parallelism_mode: ParallelismMode.optional(),
    files_owned: z.array(FilePath).max(LIMITS.listItems).optional().describe('Path patterns the task may write (its ownership scope).'),
    continuation_anchor: ContinuationAnchor.optional(),
  })
  .meta({ title: 'Task', description: 'The durable entrypoint for work (Hermit 8.1).' });
export type Task = z.infer<typeof Task>;
