import { hasErrorCode, type EventEnvelope } from '@writ/contracts';
import { BUILTIN_POLICY_DOCUMENTS, preparePolicyProfile, versionPolicyProfile } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import { collectPolicyRequests, parseInstant, profileIdOf, simulatePolicy } from './policy-simulate.js';

const NOW = new Date('2030-01-02T00:00:00.000Z');
const SINCE = new Date('2030-01-01T00:00:00.000Z');

function envelope(taskId: string, seq: number, type: string, payload: Record<string, unknown>, at: string, attemptId?: string): EventEnvelope {
  return {
    event_id: `${taskId}-${seq}`,
    schema_version: 1,
    event_type: type,
    entity_type: attemptId === undefined ? 'task' : 'attempt',
    entity_id: attemptId ?? taskId,
    ...(attemptId === undefined ? {} : { attempt_id: attemptId }),
    task_id: taskId,
    task_seq: seq,
    occurred_at: at,
    actor_type: 'service',
    actor_id: 'writ-test',
    payload,
    causation_id: null,
    correlation_id: taskId,
    prev_event_hash: null,
    hash: 'a'.repeat(64),
  } as EventEnvelope;
}

function task(taskId: string, profileRef: string, argv: string[], recorded: string | null, at = '2030-01-01T12:00:00.000Z'): EventEnvelope[] {
  const attemptId = `att-${taskId}`;
  const request = {
    action_request_id: `ar-${taskId}`,
    task_id: taskId,
    action_class: 'execute_command',
    target_resources: ['build'],
    params: { argv },
    expected_effects: [],
    reversibility_hint: 'reversible',
    reason: 'The task asks for it.',
    proposed_by: 'agent-1',
    proposed_at: at,
  };
  const events = [
    envelope(taskId, 1, 'task.created', { policy_profile_ref: profileRef, files_owned: ['**'] }, at),
    envelope(taskId, 2, 'attempt.awaiting_policy', { action_request: request, at }, at, attemptId),
  ];
  if (recorded !== null) {
    events.push(envelope(taskId, 3, 'policy.evaluated', { policy_result: { attempt_id: attemptId, action_request_id: request.action_request_id, outcome: recorded, matched_rules: ['x'], policy_version: 'v0' } }, at, attemptId));
  }
  return events;
}

const candidate = (destructive: 'deny' | 'require_approval') => {
  const document = { ...BUILTIN_POLICY_DOCUMENTS.local_edit_allowed, destructive_commands: destructive };
  return { profile_id: 'local_edit_allowed', version: 'sha256:candidate', prepared: preparePolicyProfile(versionPolicyProfile(document, 'sha256:candidate')) };
};

describe('parseInstant', () => {
  it.each([
    ['2h', '2030-01-01T22:00:00.000Z'],
    ['7d', '2029-12-26T00:00:00.000Z'],
    ['30m', '2030-01-01T23:30:00.000Z'],
    ['2030-01-01T00:00:00Z', '2030-01-01T00:00:00.000Z'],
    ['2030-01-01T01:00:00+01:00', '2030-01-01T00:00:00.000Z'],
  ])('reads %s', (value, want) => {
    expect(parseInstant(value, NOW, '--since').toISOString()).toBe(want);
  });

  it.each(['yesterday', '2h ago', '2030-01-01', '-2h'])('refuses %s with CLI_USAGE', (value) => {
    let error: unknown;
    try {
      parseInstant(value, NOW, '--since');
    } catch (caught) {
      error = caught;
    }
    expect(hasErrorCode(error, 'CLI_USAGE')).toBe(true);
  });
});

describe('profileIdOf', () => {
  it.each([
    ['local_edit_allowed', 'local_edit_allowed'],
    ['local_edit_allowed@sha256:abc', 'local_edit_allowed'],
    ['policy:team@1', 'team'],
  ])('%s → %s', (ref, id) => expect(profileIdOf(ref)).toBe(id));
});

describe('simulatePolicy', () => {
  const log = [
    ...task('t-rm', 'local_edit_allowed', ['rm', '-rf', 'build'], 'require_approval'),
    ...task('t-echo', 'local_edit_allowed', ['sh', '-c', 'echo hi > out.txt'], 'allow'),
    ...task('t-pending', 'local_edit_allowed', ['rm', '-rf', 'build'], null),
    ...task('t-other', 'destructive_denied', ['rm', '-rf', 'build'], 'deny'),
    ...task('t-before', 'local_edit_allowed', ['rm', '-rf', 'build'], 'require_approval', '2029-12-31T00:00:00.000Z'),
  ];
  const taskIds = [...new Set(log.map((event) => event.task_id))];
  const requests = taskIds.flatMap((id) => collectPolicyRequests(log.filter((event) => event.task_id === id), SINCE, NOW));

  it('collects the requests that entered policy in the window, with their recorded outcome', () => {
    expect(requests.map((r) => [r.task_id, r.profile_id, r.recorded?.outcome ?? null])).toEqual([
      ['t-rm', 'local_edit_allowed', 'require_approval'],
      ['t-echo', 'local_edit_allowed', 'allow'],
      ['t-pending', 'local_edit_allowed', null],
      ['t-other', 'destructive_denied', 'deny'],
    ]);
  });

  it('given a stricter candidate, then exactly the decisions it changes are reported', () => {
    const report = simulatePolicy(requests, candidate('deny'), { since: SINCE, until: NOW });
    expect(report).toMatchObject({ evaluated: 3, unchanged: 1, changed: 1, unrecorded: 1, skipped: 1, by_transition: { 'require_approval → deny': 1 } });
    expect(report.changes).toEqual([expect.objectContaining({ task_id: 't-rm', was: 'require_approval', would_be: 'deny', rule: 'destructive_command', recorded_version: 'v0' })]);
  });

  it('given the same rules as recorded, then nothing changes', () => {
    expect(simulatePolicy(requests, candidate('require_approval'), { since: SINCE, until: NOW })).toMatchObject({ changed: 0, unchanged: 2 });
  });

  it('given allTasks, then tasks under other profiles are judged by the candidate too', () => {
    const report = simulatePolicy(requests, candidate('require_approval'), { since: SINCE, until: NOW, allTasks: true });
    expect(report).toMatchObject({ evaluated: 4, skipped: 0, changed: 1, by_transition: { 'deny → require_approval': 1 } });
  });
});
