import { describe, expect, it } from 'vitest';
import type { TaskEventRow } from '../api/rows.js';
import { actionStories, summarizeRequest, timelineReceipts } from './action-story.js';

let seq = 0;
function event(type: string, attempt: string | null, payload: Record<string, unknown>, entity = attempt ?? 'task-1'): TaskEventRow {
  seq += 1;
  return {
    task_id: 'task-1',
    task_seq: seq,
    event_id: `evt-${seq}`,
    event_type: type,
    entity_type: type.split('.')[0] as string,
    entity_id: entity,
    step_id: attempt === null ? null : 'step-1',
    attempt_id: attempt,
    actor_type: 'service',
    actor_id: 'writ',
    payload,
    occurred_at: `2031-05-01T12:00:${String(seq).padStart(2, '0')}.000Z`,
  };
}

/** A destructive command held for approval, granted by a director, run and receipted (shapes as the API serves them). */
const timeline: TaskEventRow[] = [
  event('task.created', null, { title: 't' }),
  event('attempt.awaiting_policy', 'att-1', {
    action_request: { action_request_id: 'ar-1', action_class: 'execute_command', target_resources: ['build'], params: { argv: ['rm', '-rf', 'build'] }, reason: 'clean', proposed_by: 'agent-1', reversibility_hint: 'irreversible' },
  }),
  event('policy.evaluated', 'att-1', { policy_result: { outcome: 'require_approval', risk_band: 'high', matched_rules: ['destructive_command'], reasoning_summary: 'destructive command', policy_profile_ref: 'local@sha256:x', policy_result_id: 'pr-1' } }, 'dec-1'),
  event('attempt.awaiting_approval', 'att-1', {}),
  event('approval.requested', 'att-1', { approval_id: 'apv-1', expires_at: '2031-05-01T13:00:00.000Z' }, 'apv-1'),
  event('approval.granted', 'att-1', { resolved_by: 'director-1', note: 'fine', witness_validated: true }, 'apv-1'),
  event('grant.issued', 'att-1', { jws: '[WITHHELD]', claims: { jti: 'gnt-1', attempt_id: 'att-1', max_uses: 1, exp: 1935403500, issued_by_principal_id: 'writ-policy', resource_scope: { paths: ['build'], hosts: [] } } }, 'gnt-1'),
  event('grant.use_claimed', 'att-1', { grant_id: 'gnt-1', use_no: 1 }, 'gnt-1'),
  event('execution.completed', 'att-1', { outcome: 'completed', exit_code: 0, duration_ms: 812.4, environment: { network_mode: 'none' }, changed_files: [{ path: 'build/marker', change: 'deleted' }] }),
  event('receipt.issued', 'att-1', { jws: '[REDACTED]', receipt: { receipt_id: 'rct-1', attempt_id: 'att-1', result_code: 'succeeded', result_summary: 'exited 0', rollback: { method: 'none', statement: 'cannot be undone' } } }, 'rct-1'),
  event('attempt.succeeded', 'att-1', {}),
  event('attempt.awaiting_policy', 'att-2', { action_request: { action_request_id: 'ar-2', action_class: 'write_local', target_resources: ['notes.txt'], params: { path: 'notes.txt', content: 'x' } } }),
  event('policy.evaluated', 'att-2', { policy_result: { outcome: 'deny', risk_band: 'low', matched_rules: ['sacred_scope'] } }, 'dec-2'),
  event('attempt.policy_denied', 'att-2', {}),
];

describe('actionStories', () => {
  it('given a granted destructive command, when told, then it answers what, why, authority, grant, what ran and changed, and its receipt', () => {
    // when
    const [granted] = actionStories(timeline);
    // then
    expect(granted).toMatchObject({
      attemptId: 'att-1',
      actionRequestId: 'ar-1',
      status: 'succeeded',
      what: { actionClass: 'execute_command', summary: 'rm -rf build', targets: ['build'], reason: 'clean', proposedBy: 'agent-1', reversibility: 'irreversible' },
      why: { outcome: 'require_approval', riskBand: 'high', rules: ['destructive_command'], reasoning: 'destructive command', policyResultId: 'pr-1' },
      approval: { approvalId: 'apv-1', status: 'granted', resolvedBy: 'director-1', note: 'fine', expiresAt: '2031-05-01T13:00:00.000Z' },
      grant: { grantId: 'gnt-1', paths: ['build'], maxUses: 1, usesClaimed: 1, revoked: false, issuedBy: 'writ-policy' },
      execution: { outcome: 'completed', exitCode: 0, network: 'none', changedFiles: [{ path: 'build/marker', change: 'deleted' }] },
      receipts: [{ receiptId: 'rct-1', resultCode: 'succeeded', rollbackMethod: 'none' }],
    });
  });

  it('given a request policy denied, when told, then it is denied with no authority, grant or execution', () => {
    const denied = actionStories(timeline)[1];
    expect(denied).toMatchObject({ attemptId: 'att-2', status: 'denied', what: { summary: 'write_local notes.txt' }, why: { outcome: 'deny' }, approval: null, grant: null, execution: null, receipts: [] });
  });

  it('given request params that are not a command line, when summarized, then the class and targets are named', () => {
    expect(summarizeRequest({ action_class: 'network_write', target_resources: ['api.example'] })).toBe('network_write of api.example');
  });

  it('given the timeline, when its receipts are listed, then they come in log order as receipt.issued carries them', () => {
    expect(timelineReceipts(timeline).map((receipt) => receipt['receipt_id'])).toEqual(['rct-1']);
  });
});
