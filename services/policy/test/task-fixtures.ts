import type { ActionRequest, EvaluatePolicy, EventDraft } from '@writ/contracts';
import { attemptDecider, fold, stepDecider, taskDecider, type AttemptEvent, type StepEvent, type TaskEvent } from '@writ/kernel';

/** The events ingress appends for a new task (through the kernel's deciders), and the command the orchestrator then sends. */

export const T0 = '2030-01-01T00:00:00.000Z';

export interface TaskIds {
  readonly task_id: string;
  readonly step_id: string;
  readonly attempt_id: string;
}

export function taskIds(suffix: string): TaskIds {
  return { task_id: `tsk-${suffix}`, step_id: `stp-${suffix}`, attempt_id: `att-${suffix}` };
}

const base = (ids: TaskIds, profile: string) => ({
  action_request_id: `ar-${ids.task_id}`,
  task: { title: 'A task', goal: 'Do the thing', policy_profile: profile, files_owned: ['**'] },
  expected_effects: [],
  reversibility_hint: 'reversible' as const,
  reason: 'The task asks for it.',
  proposed_by: 'agent-1',
  proposed_at: T0,
});

export function commandRequest(ids: TaskIds, argv: string[], profile = 'local_edit_allowed'): ActionRequest {
  return { ...base(ids, profile), action_class: 'execute_command', target_resources: ['out.txt'], params: { argv } } as ActionRequest;
}

export function writeRequest(ids: TaskIds, profile = 'readonly_analysis'): ActionRequest {
  return { ...base(ids, profile), action_class: 'write_local', target_resources: ['notes.txt'], params: { path: 'notes.txt', content: 'hello' } } as ActionRequest;
}

function draft(ids: TaskIds, where: Pick<EventDraft, 'entity_type' | 'entity_id' | 'step_id' | 'attempt_id'>, type: string, data: unknown, key: string): EventDraft {
  return {
    event_id: `fx-${key.replace(/[^A-Za-z0-9_-]/g, '-')}`.slice(0, 128),
    schema_version: 1,
    event_type: type,
    ...where,
    occurred_at: T0,
    actor_type: 'service',
    actor_id: 'writ-ingress',
    payload: data as Record<string, unknown>,
    causation_id: null,
    correlation_id: ids.task_id,
    idempotency_key: key,
  };
}

/** task.created … attempt.awaiting_policy, as ingress appends them. */
export function ingressDrafts(ids: TaskIds, request: ActionRequest): EventDraft[] {
  const meta = { now: T0 };
  const spec = request.task ?? { title: 'A task', goal: 'Do the thing', policy_profile: 'local_edit_allowed', files_owned: ['**'] };
  const task: TaskEvent[] = taskDecider.decide(
    {
      type: 'create-task',
      data: {
        task_id: ids.task_id,
        title: spec.title,
        goal: spec.goal,
        owner_principal_id: request.proposed_by,
        policy_profile_ref: spec.policy_profile,
        task_contract_ref: `action_request:${request.action_request_id}`,
        files_owned: spec.files_owned,
      },
      metadata: meta,
    },
    taskDecider.initialState(),
  );
  task.push(...taskDecider.decide({ type: 'mark-task-ready', data: {}, metadata: meta }, fold(taskDecider, task)));
  task.push(...taskDecider.decide({ type: 'start-task', data: {}, metadata: meta }, fold(taskDecider, task)));
  const step: StepEvent[] = stepDecider.decide(
    { type: 'plan-step', data: { step_id: ids.step_id, task_id: ids.task_id, kind: 'run', title: 'Run', contract_ref: `action_request:${request.action_request_id}`, max_attempts: 3 }, metadata: meta },
    stepDecider.initialState(),
  );
  step.push(...stepDecider.decide({ type: 'mark-step-ready', data: {}, metadata: meta }, fold(stepDecider, step)));
  step.push(...stepDecider.decide({ type: 'open-attempt', data: { attempt_id: ids.attempt_id }, metadata: meta }, fold(stepDecider, step)));
  const attempt: AttemptEvent[] = attemptDecider.decide(
    { type: 'create-attempt', data: { ...ids, attempt_no: 1, idempotency_key: request.action_request_id }, metadata: meta },
    attemptDecider.initialState(),
  );
  attempt.push(...attemptDecider.decide({ type: 'lease-workspace', data: { workspace_lease_ref: `cell:${ids.task_id}` }, metadata: meta }, fold(attemptDecider, attempt)));
  attempt.push(...attemptDecider.decide({ type: 'submit-action', data: { action_request: request }, metadata: meta }, fold(attemptDecider, attempt)));
  return [
    ...task.map((e) => draft(ids, { entity_type: 'task', entity_id: ids.task_id }, e.type, e.data, `${ids.task_id}:${e.type}`)),
    ...step.map((e) => draft(ids, { entity_type: 'step', entity_id: ids.step_id, step_id: ids.step_id }, e.type, e.data, `${ids.step_id}:${e.type}`)),
    ...attempt.map((e) =>
      draft(ids, { entity_type: 'attempt', entity_id: ids.attempt_id, step_id: ids.step_id, attempt_id: ids.attempt_id }, e.type, e.data, `${ids.attempt_id}:${e.type}`),
    ),
  ];
}

/** The attempt's policy re-entry (the orchestrator's `report-drift`), as it would append it. */
export function reenteredDraft(ids: TaskIds, state: Parameters<typeof attemptDecider.decide>[1]): EventDraft {
  const [event] = attemptDecider.decide({ type: 'report-drift', data: { cause: 'policy_drift', recovery: 'reenter_policy' }, metadata: { now: T0 } }, state);
  const e = event as AttemptEvent;
  return draft(ids, { entity_type: 'attempt', entity_id: ids.attempt_id, step_id: ids.step_id, attempt_id: ids.attempt_id }, e.type, e.data, `${ids.attempt_id}:${e.type}:2`);
}

/** The command the orchestrator sends for this attempt. */
export function evaluateCommandFor(ids: TaskIds, request: ActionRequest, profile = request.task?.policy_profile ?? 'local_edit_allowed', filesOwned = ['**']): EvaluatePolicy {
  return { ...ids, action_request: request, policy_profile: profile, files_owned: filesOwned };
}
