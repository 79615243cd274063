import type { ActionRequestFields } from './action-request.js';
import { AgentError } from './agent-errors.js';
import { checkContract } from './contract-check.js';
import { Brief, Name, TaskSpec } from './contracts.js';

/** The first action of a briefed task: an ActionRequest without `task` / `task_id` (the task is made from the brief). */
export type FirstActionFields = Omit<ActionRequestFields, 'task' | 'task_id'>;

export interface BriefedTaskOptions {
  /** The policy profile the task asks for (default `local_edit_allowed`); policy may refuse it. */
  readonly profile?: string;
  /** Sacred Scope paths the task asks to write (honoured only where the profile allows the same exception). */
  readonly sacredExceptions?: readonly string[];
}

/**
 * The first ActionRequest of a task made from a brief (docs/task-claims.md),
 * built as `writ task create` builds it: the TaskSpec's title is the brief's
 * `mission`, its goal the `purpose` (or the `done_criteria` when the purpose is
 * empty), its `files_owned` the brief's `spec.scope.files_owned`, and the brief
 * itself rides along (ingress stores it in `task.created`). Such a task closes
 * only on an accepted done claim. Throws AGENT_REQUEST_INVALID naming every
 * missing or malformed section of the brief.
 */
export function briefedTaskRequest(brief: Brief, firstAction: FirstActionFields, options: BriefedTaskOptions = {}): ActionRequestFields {
  const checked = checkContract('Brief', Brief, brief);
  const action = firstAction as Readonly<Record<string, unknown>>;
  if (action['task'] !== undefined || action['task_id'] !== undefined) {
    throw new AgentError('AGENT_REQUEST_INVALID', 'the first action of a briefed task names neither task nor task_id: the task is made from the brief');
  }
  const profile = checkContract('policy profile', Name, options.profile ?? 'local_edit_allowed');
  const task = checkContract('TaskSpec', TaskSpec, {
    title: checked.mission,
    goal: checked.purpose.trim() !== '' ? checked.purpose : checked.done_criteria,
    policy_profile: profile,
    files_owned: [...checked.spec.scope.files_owned],
    ...(options.sacredExceptions === undefined || options.sacredExceptions.length === 0 ? {} : { sacred_exceptions: [...options.sacredExceptions] }),
    brief: checked,
  });
  return { ...firstAction, task };
}
