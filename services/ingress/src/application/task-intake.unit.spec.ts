import { hasErrorCode, type ActionRequest, type EventEnvelope } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { ingressIds } from './ingress-ids.js';
import { planIntake, supersedesRefusal, taskStanding, type IntakeEvent, type IntakeInput } from './task-intake.js';

const NOW = '2030-01-01T00:00:00Z';
const ids = ingressIds('agent-1', 'ar-1', 'a'.repeat(64));

const request: ActionRequest = {
  action_request_id: 'ar-1',
  task: { title: 't', goal: 'g', policy_profile: 'local_edit_allowed', files_owned: ['src/**'] },
  action_class: 'read_local',
  target_resources: ['src/a.ts'],
  params: { path: 'src/a.ts' },
  expected_effects: [],
  reversibility_hint: 'reversible',
  reason: 'r',
  proposed_by: 'agent-1',
  proposed_at: NOW,
};

const input = (overrides: Partial<IntakeInput> = {}): IntakeInput => ({
  ids,
  request,
  principalId: 'agent-1',
  channel: 'nats',
  history: [],
  stepMaxAttempts: 3,
  now: NOW,
  ...overrides,
});

/** Stored envelopes for planned events (the fields the fold reads). */
function stored(events: readonly IntakeEvent[], taskId: string): EventEnvelope[] {
  return events.map((e, index) => ({
    event_id: e.eventId,
    schema_version: 1,
    event_type: e.type,
    entity_type: e.entityType,
    entity_id: e.entityId,
    occurred_at: NOW,
    actor_type: 'service',
    actor_id: 'ingress',
    payload: e.data,
    causation_id: null,
    correlation_id: taskId,
    task_id: taskId,
    task_seq: index + 1,
    prev_event_hash: null,
    hash: '0'.repeat(64),
  }));
}

const NEW_TASK = [
  'task.created',
  'task.marked_ready',
  'task.started',
  'step.planned',
  'step.marked_ready',
  'step.attempt_opened',
  'attempt.created',
  'attempt.leased',
  'attempt.awaiting_policy',
];

describe('planIntake', () => {
  it('opens a new task, its step and its first attempt, awaiting policy with the request', () => {
    const plan = planIntake(input());
    expect(plan).toMatchObject({ taskId: ids.newTaskId, createsTask: true });
    expect(plan.events.map((e) => e.type)).toEqual(NEW_TASK);
    expect(plan.events[0]!.data).toMatchObject({ task_id: ids.newTaskId, owner_principal_id: 'agent-1', policy_profile_ref: 'local_edit_allowed', task_contract_ref: `ingress:${ids.ingressId}` });
    expect(plan.events[5]!.data).toMatchObject({ attempt_id: ids.attemptId, attempt_no: 1 });
    expect(plan.events[7]!.data).toMatchObject({ workspace_lease_ref: `workspace:${ids.newTaskId}` });
    expect(plan.events[8]).toMatchObject({ entityType: 'attempt', entityId: ids.attemptId, stepId: ids.stepId, attemptId: ids.attemptId, data: { action_request: request } });
    expect(new Set(plan.events.map((e) => e.eventId)).size).toBe(9);
  });

  it('decides only what a crashed run left out', () => {
    const all = planIntake(input()).events;
    const resumed = planIntake(input({ history: stored(all.slice(0, 5), ids.newTaskId) }));
    expect(resumed.events.map((e) => e.type)).toEqual(NEW_TASK.slice(5));
    expect(resumed.events.map((e) => e.eventId)).toEqual(all.slice(5).map((e) => e.eventId));
    expect(planIntake(input({ history: stored(all, ids.newTaskId) })).events).toEqual([]);
  });

  it('adds a step and an attempt to an existing task', () => {
    const existing = stored(planIntake(input({ ids: ingressIds('agent-1', 'ar-0', 'a'.repeat(64)) })).events, ingressIds('agent-1', 'ar-0', 'a'.repeat(64)).newTaskId);
    const { task: _task, ...rest } = request;
    const plan = planIntake(input({ request: { ...rest, task_id: existing[0]!.task_id }, history: existing }));
    expect(plan).toMatchObject({ taskId: existing[0]!.task_id, createsTask: false });
    expect(plan.events.map((e) => e.type)).toEqual(NEW_TASK.slice(3));
    expect(taskStanding(existing)).toEqual({ owner: 'agent-1' });
  });

  it('refuses, through the kernel, a files_owned pattern the task aggregate does not accept', () => {
    const bad = { ...request, task: { ...request.task!, files_owned: ['../outside/**'] } };
    expect(() => planIntake(input({ request: bad }))).toThrow(expect.objectContaining({ code: 'KERNEL_COMMAND_INVALID' }));
  });

  it('reports INGRESS_INTAKE_CONFLICT when a resumed run can no longer continue', () => {
    // given our task.created is stored, but someone else's step took our step id first
    const all = planIntake(input()).events;
    const foreign = stored([all[0]!, { ...all[3]!, eventId: 'someone-else' }], ids.newTaskId);
    try {
      planIntake(input({ history: foreign }));
      expect.unreachable();
    } catch (error) {
      expect(hasErrorCode(error, 'INGRESS_INTAKE_CONFLICT')).toBe(true);
    }
  });

  it('knows unknown and terminal tasks', () => {
    expect(taskStanding([])).toBe('unknown');
    const all = stored(planIntake(input()).events.slice(0, 3), ids.newTaskId);
    const failed = { ...all[2]!, event_id: 'f', event_type: 'task.failed', payload: { reason: 'x', at: NOW }, task_seq: 4 };
    expect(taskStanding([...all, failed])).toBe('terminal');
  });
});

describe('planIntake: Sacred Scope exceptions', () => {
  it('carries the task spec\'s sacred_exceptions into task.created', () => {
    const withExceptions = { ...request, task: { ...request.task!, sacred_exceptions: ['.env.example'] } };
    expect(planIntake(input({ request: withExceptions })).events[0]!.data).toMatchObject({ sacred_exceptions: ['.env.example'] });
    expect(planIntake(input()).events[0]!.data).not.toHaveProperty('sacred_exceptions');
  });

  it('refuses, through the kernel, an exception reaching outside the workspace', () => {
    const bad = { ...request, task: { ...request.task!, sacred_exceptions: ['/etc/shadow'] } };
    expect(() => planIntake(input({ request: bad }))).toThrow(expect.objectContaining({ code: 'KERNEL_COMMAND_INVALID' }));
  });
});

describe('supersedesRefusal', () => {
  // given a task whose first request (ar-1, by agent-1) awaits policy
  const history = stored(planIntake(input()).events, ids.newTaskId);
  const attemptId = ids.attemptId;
  const { task: _task, ...rest } = request;
  const revision = (changes: Partial<ActionRequest> = {}): ActionRequest => ({ ...rest, action_request_id: 'ar-2', task_id: ids.newTaskId, supersedes: 'ar-1', ...changes });
  const later = (type: string, payload: Record<string, unknown>, entity: Partial<EventEnvelope> = {}): EventEnvelope => ({
    ...history.at(-1)!,
    event_id: `later-${type}`,
    event_type: type,
    entity_type: 'attempt',
    entity_id: attemptId,
    attempt_id: attemptId,
    payload: { ...payload, at: NOW },
    task_seq: history.length + 1,
    ...entity,
  });

  it('accepts a request without supersedes, and one naming a pending request of the same task and principal', () => {
    expect(supersedesRefusal(history, { ...request }, 'agent-1')).toBeUndefined();
    expect(supersedesRefusal(history, revision(), 'agent-1')).toBeUndefined();
  });

  it.each([
    ['no task_id', () => ({ ...request, supersedes: 'ar-1' }) as ActionRequest, history, /task_id/],
    ['itself', () => revision({ action_request_id: 'ar-1' }), history, /itself/],
    ['an unknown request', () => revision({ supersedes: 'ar-9' }), history, /holds no request ar-9/],
    ['a request proposed by another principal', () => revision(), history.map((e) => (e.event_type === 'attempt.awaiting_policy' ? { ...e, payload: { ...e.payload, action_request: { ...request, proposed_by: 'agent-2' } } } : e)), /another principal/],
    ['an attempt whose grant use was claimed', () => revision(), [...history, later('grant.use_claimed', { use_id: 'u', use_no: 1, task_id: ids.newTaskId, attempt_id: attemptId, action_class: 'read_local' }, { entity_type: 'grant', entity_id: 'gnt-1' })], /started executing/],
    ['an attempt that ended', () => revision(), [...history, later('attempt.failed', { reason_code: 'policy_denied', reason: 'no' })], /\(failed\)/],
    ['an attempt already superseded', () => revision(), [...history, later('attempt.superseded', { cause: 'input_drift' })], /already superseded/],
  ])('refuses a supersedes naming %s', (_case, build, log, why) => {
    expect(supersedesRefusal(log as EventEnvelope[], build(), 'agent-1')).toMatch(why);
  });
});

describe('planIntake: a task created from a brief (seed 003)', () => {
  const brief = {
    id: 'brief-1',
    mission: 'Make the retry test deterministic.',
    purpose: '',
    context: {},
    whats_done: [],
    current_task: '',
    done_criteria: 'the retry test passes',
    verify_command: ['sh', 'verify.sh'],
    key_decisions: [],
    spec: { scope: { files_owned: ['src/**'] } },
    relevant_memories: [],
    ship: false,
    audit_gates: [],
    lifecycle: 'ephemeral' as const,
  };

  it('given a TaskSpec with a brief, when planned, then task.created carries the brief and its task contract is the brief digest', () => {
    // given
    const briefed = { ...request, task: { ...request.task!, brief } };
    // when
    const created = planIntake(input({ request: briefed })).events[0]!;
    // then
    expect(created.data).toMatchObject({ files_owned: ['src/**'], brief });
    expect(created.data['task_contract_ref']).toMatch(/^brief:sha256:[0-9a-f]{64}$/);
  });

  it('given a TaskSpec without a brief, when planned, then task.created has no brief field (every other task stays as it was)', () => {
    expect(planIntake(input()).events[0]!.data).not.toHaveProperty('brief');
  });
});
