import { GRANT_RENEWALS_MAX, hasErrorCode, type ActionRequest, type EventEnvelope, type IssueReceipt } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { attemptFacts, type AttemptFacts } from './attempt-facts.js';
import { buildReceiptBody, receiptClassOf, receiptIdFor } from './build-receipt.js';

const request: ActionRequest = {
  action_request_id: 'ar-1',
  task_id: 'task-1',
  action_class: 'read_local',
  target_resources: ['README.md'],
  params: { path: 'README.md' },
  expected_effects: [],
  reversibility_hint: 'reversible',
  reason: 'read',
  proposed_by: 'agent-1',
  proposed_at: '2030-01-01T00:00:00Z',
};

const noFacts: AttemptFacts = {
  request,
  requestEventId: 'evt-1',
  downgradedRequest: null,
  policy: null,
  requestHash: null,
  policyResultHash: null,
  approval: null,
  grant: null,
  grantJwsHash: null,
  refusal: null,
  execution: null,
  observedOutcome: null,
  settledResult: null,
  resolution: null,
  renewals: [],
  grantsIssued: 0,
};

const command = (cause: IssueReceipt['cause']): IssueReceipt => ({ task_id: 'task-1', step_id: 'step-1', attempt_id: 'att-1', cause });

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return hasErrorCode(error) ? error.code : 'untyped';
  }
  return undefined;
}

describe('receipt ids and classes', () => {
  it('derives one receipt id per attempt, cause and result', () => {
    expect(receiptIdFor(command('settled'), 'succeeded')).toBe(receiptIdFor(command('settled'), 'succeeded'));
    expect(receiptIdFor(command('settled'), 'succeeded')).not.toBe(receiptIdFor(command('refused'), 'refused'));
    expect(receiptIdFor(command('settled'), 'unknown_outcome')).not.toBe(receiptIdFor(command('settled'), 'succeeded'));
    expect(receiptIdFor(command('settled'), 'succeeded')).toMatch(/^rct-[0-9a-f]{32}$/);
  });

  it.each([
    ['execute_command', 'command_execution'],
    ['publication', 'publish'],
    ['rollback', 'rollback'],
    ['memory_write', 'memory_promotion'],
    ['write_local', 'tool_execution'],
    ['network_read', 'tool_execution'],
  ] as const)('%s → %s', (actionClass, receiptClass) => {
    expect(receiptClassOf(actionClass)).toBe(receiptClass);
  });
});

describe('buildReceiptBody', () => {
  const input = (cause: IssueReceipt['cause'], facts: AttemptFacts) => ({ command: command(cause), facts, createdAt: '2030-01-01T00:00:00Z', prevReceiptHash: null, signerRef: 'k1' });

  it('refuses an attempt with no action request, and a settled attempt never dispatched', () => {
    expect(codeOf(() => buildReceiptBody(input('settled', { ...noFacts, request: null })))).toBe('RECEIPT_ATTEMPT_NOT_FOUND');
    expect(codeOf(() => buildReceiptBody(input('settled', noFacts)))).toBe('RECEIPT_GRANT_NOT_FOUND');
  });

  it('receipts an executor refusal with the refused grant, and nothing that ran', () => {
    const grant = { jti: 'gnt-1' } as AttemptFacts['grant'];
    const body = buildReceiptBody(input('refused', { ...noFacts, grant, refusal: { code: 'GRANT_EXPIRED', message: 'grant gnt-1 expired' } }));
    expect(body).toMatchObject({ result_code: 'refused', capability_grant_ref: 'grant:gnt-1', receipt_class: 'tool_execution', output_refs: [], replay_class: 'explain_only' });
    expect(body.result_summary).toContain('GRANT_EXPIRED');
  });

  it('receipts a downgraded request as what ran, citing both requests', () => {
    const downgraded = { ...request, action_request_id: 'ar-1-dg', action_class: 'read_local' as const };
    const body = buildReceiptBody(input('policy_denied', { ...noFacts, request: { ...request, action_class: 'write_local' }, downgradedRequest: downgraded }));
    expect(body.action_request_ref).toBe('action_request:ar-1');
    expect(body.input_refs).toContain('action_request:ar-1-dg');
  });
});

describe('buildReceiptBody: an unknown outcome resolved by a director (Hermit 19.4)', () => {
  const input = (facts: AttemptFacts) => ({ command: command('settled'), facts, createdAt: '2030-01-01T00:10:00Z', prevReceiptHash: null, signerRef: 'k1' });
  const HASH = 'a'.repeat(64);
  const grant = { jti: 'gnt-1' } as AttemptFacts['grant'];
  const execution: NonNullable<AttemptFacts['execution']> = {
    eventId: 'use-1-completed',
    completed: {
      grant_id: 'gnt-1',
      use_no: 1,
      executor_id: 'executor-1',
      outcome: 'unknown',
      exit_code: null,
      timed_out: false,
      duration_ms: 0,
      stdout_sha256: HASH,
      stderr_sha256: HASH,
      changed_files: [],
      artifacts: [],
      environment: null,
      error: { code: 'EXECUTOR_OUTCOME_UNKNOWN', message: 'claimed and never recorded as completed' },
      at: '2030-01-01T00:01:00Z',
    },
  };
  const resolution = (outcome: 'succeeded' | 'failed', executionEventId = 'use-1-completed'): AttemptFacts['resolution'] => ({
    eventId: 'exr-1',
    resolved: {
      grant_id: 'gnt-1',
      use_no: 1,
      execution_event_id: executionEventId,
      outcome,
      resolved_by: 'director-1',
      resolved_at: '2030-01-01T00:09:00Z',
      note: 'the file is on the server',
      resolution_jws_sha256: HASH,
    },
  });
  const unknownFacts: AttemptFacts = { ...noFacts, grant, execution, observedOutcome: 'unknown' };

  it('given the unknown outcome before any resolution, then the receipt is unknown_outcome and observe-only', () => {
    const body = buildReceiptBody(input(unknownFacts));
    expect(body).toMatchObject({ result_code: 'unknown_outcome', replay_class: 'observe_only' });
    expect(body.result_summary).not.toContain('resolved');
  });

  it.each(['succeeded', 'failed'] as const)('given a resolution %s, then the receipt carries it, names the resolver and note, cites the resolution and says the effect was not observed', (outcome) => {
    const body = buildReceiptBody(input({ ...unknownFacts, settledResult: outcome, resolution: resolution(outcome) }));
    expect(body.result_code).toBe(outcome);
    expect(body.result_summary).toContain('director-1');
    expect(body.result_summary).toContain('the file is on the server');
    expect(body.result_summary).toContain('not observed');
    expect(body.output_refs).toContain('event:use-1-completed');
    expect(body.output_refs).toContain('event:exr-1');
    // a resolved outcome is never replayable on Writ's word
    expect(body.replay_class).toBe('observe_only');
  });

  it('given a resolution of another execution, then the receipt does not claim it', () => {
    const body = buildReceiptBody(input({ ...unknownFacts, settledResult: 'succeeded', resolution: resolution('succeeded', 'use-2-completed') }));
    expect(body.output_refs).not.toContain('event:exr-1');
    expect(body.result_summary).not.toContain('director-1');
  });
});

describe('buildReceiptBody: a receipt states only what the execution record shows (issue 13)', () => {
  const input = (facts: AttemptFacts) => ({ command: command('settled'), facts, createdAt: '2030-01-01T00:10:00Z', prevReceiptHash: null, signerRef: 'k1' });
  const HASH = 'b'.repeat(64);
  const completed = (outcome: 'not_run' | 'errored', code: string): NonNullable<AttemptFacts['execution']> => ({
    eventId: 'use-1-completed',
    completed: {
      grant_id: 'gnt-1',
      use_no: 1,
      executor_id: 'executor-1',
      outcome,
      exit_code: null,
      timed_out: false,
      duration_ms: 0,
      stdout_sha256: HASH,
      stderr_sha256: HASH,
      changed_files: [],
      artifacts: [],
      environment: null,
      error: { code, message: 'never started' },
      at: '2030-01-01T00:01:00Z',
    },
  });

  it('given an execution errored without an exit status settled as failed, then the summary says it did not complete, never that it exited', () => {
    const body = buildReceiptBody(input({ ...noFacts, grant: { jti: 'gnt-1' } as AttemptFacts['grant'], execution: completed('errored', 'EXECUTOR_SECRET_UNAVAILABLE'), observedOutcome: 'errored', settledResult: 'failed' }));
    expect(body.result_code).toBe('failed');
    expect(body.result_summary).toContain('did not complete');
    expect(body.result_summary).not.toContain('exited');
  });

  it('given a last use proven never started, then the grant refused as expired, settled as failed, then the receipt says refused: not run, with both reasons, and nothing to replay', () => {
    // given the 2,000-action chaos run's case: use 1 fenced before its process started, released; the next run refused GRANT_EXPIRED
    const refusal = { code: 'GRANT_EXPIRED', message: 'grant gnt-1 fails verification (JWS_EXPIRED)' } as NonNullable<AttemptFacts['refusal']>;
    const facts = { ...noFacts, grant: { jti: 'gnt-1' } as AttemptFacts['grant'], execution: completed('not_run', 'CELL_USE_FENCED'), observedOutcome: 'errored', settledResult: 'failed', refusal } as AttemptFacts;
    // when its receipt is built
    const body = buildReceiptBody(input(facts));
    // then it states that nothing ran, never "failed" (which reads as ran and failed)
    expect(body.result_code).toBe('refused');
    expect(body.result_summary).toMatch(/^refused: .* not run: .*never started \(use 1 was proven not run and released\)/);
    expect(body.result_summary).toContain('CELL_USE_FENCED');
    expect(body.result_summary).toContain('then the executor refused grant gnt-1: GRANT_EXPIRED');
    expect(body.capability_grant_ref).toBe('grant:gnt-1');
    expect(body.output_refs).toEqual([]);
    expect(body.replay_class).toBe('explain_only');
  });
});

describe('buildReceiptBody: a grant renewed while executing, after its use was proven never started (issue 13)', () => {
  const HASH = 'c'.repeat(64);
  let seq = 0;
  const event = (eventType: string, entity: [EventEnvelope['entity_type'], string], payload: Record<string, unknown>): EventEnvelope => ({
    event_id: `evt-${(seq += 1)}-${eventType}`,
    schema_version: 1,
    event_type: eventType,
    entity_type: entity[0],
    entity_id: entity[1],
    attempt_id: 'att-1',
    occurred_at: '2030-01-01T00:00:00Z',
    actor_type: 'service',
    actor_id: 'x',
    payload,
    causation_id: null,
    correlation_id: 'task-1',
    task_id: 'task-1',
    task_seq: seq,
    prev_event_hash: null,
    hash: '0'.repeat(64),
  });
  const claims = (jti: string, iat: number) => ({
    iss: 'writ-approval',
    sub: 'writ-executor',
    aud: 'writ-executor',
    jti,
    iat,
    exp: iat + 300,
    task_id: 'task-1',
    step_id: 'step-1',
    attempt_id: 'att-1',
    action_class: 'read_local',
    resource_scope: { paths: ['README.md'], hosts: [] },
    max_uses: 1,
    issued_by_principal_id: 'writ-policy',
    policy_result_ref: 'policy_result:pr-1',
  });
  const completion = (grantId: string, useNo: number, outcome: 'not_run' | 'completed') => ({
    grant_id: grantId,
    use_no: useNo,
    executor_id: 'executor-1',
    outcome,
    exit_code: outcome === 'completed' ? 0 : null,
    timed_out: false,
    duration_ms: outcome === 'completed' ? 42 : 0,
    stdout_sha256: HASH,
    stderr_sha256: HASH,
    changed_files: [],
    artifacts: [],
    environment: null,
    ...(outcome === 'not_run' ? { error: { code: 'CELL_USE_FENCED', message: 'use 1 never started: its claimer stopped before the task cell existed' } } : {}),
    at: '2030-01-01T00:01:00Z',
  });
  const IAT = Math.floor(Date.parse('2030-01-01T00:00:00Z') / 1000);
  /** Grant gnt-1: use 1 claimed, proven never started; run 2 refused as expired; gnt-2 renewed it while executing. */
  const renewedLog = (): EventEnvelope[] => [
    event('attempt.awaiting_policy', ['attempt', 'att-1'], { action_request: request, at: '2030-01-01T00:00:00Z' }),
    event('grant.issued', ['grant', 'gnt-1'], { claims: claims('gnt-1', IAT), jws: 'a.b.c', at: '2030-01-01T00:00:00Z' }),
    event('grant.use_claimed', ['grant', 'gnt-1'], { use_id: 'use-1', use_no: 1, task_id: 'task-1', attempt_id: 'att-1', action_class: 'read_local', at: '2030-01-01T00:00:01Z' }),
    event('attempt.executing', ['attempt', 'att-1'], { grant_id: 'gnt-1', at: '2030-01-01T00:00:01Z' }),
    event('grant.use_released', ['grant', 'gnt-1'], { use_id: 'use-1', use_no: 1, reason_code: 'CELL_USE_FENCED', reason: 'never started', at: '2030-01-01T00:00:02Z' }),
    event('execution.completed', ['attempt', 'att-1'], completion('gnt-1', 1, 'not_run')),
    event('grant.refused', ['grant', 'gnt-1'], { use_id: 'use-2', code: 'GRANT_EXPIRED', message: 'grant gnt-1 expired', at: '2030-01-01T00:05:01Z' }),
    event('grant.issued', ['grant', 'gnt-2'], { claims: claims('gnt-2', IAT + 302), jws: 'd.e.f', at: '2030-01-01T00:05:02Z' }),
    event('attempt.grant_renewed', ['attempt', 'att-1'], {
      grant_id: 'gnt-2',
      expires_at: '2030-01-01T00:10:02Z',
      renews_grant_id: 'gnt-1',
      renews_expired_at: '2030-01-01T00:05:00.000Z',
      not_run_uses: [1],
      at: '2030-01-01T00:05:03Z',
    }),
  ];
  const input = (events: readonly EventEnvelope[]) => ({ command: command('settled'), facts: attemptFacts(events, 'att-1'), createdAt: '2030-01-01T00:20:00Z', prevReceiptHash: null, signerRef: 'k1' });

  it('given the renewal ran and exited 0, then the receipt is succeeded under the renewal, and says use 1 of the first grant never started and that grant expired', () => {
    // given
    const events = [
      ...renewedLog(),
      event('grant.use_claimed', ['grant', 'gnt-2'], { use_id: 'use-3', use_no: 1, task_id: 'task-1', attempt_id: 'att-1', action_class: 'read_local', at: '2030-01-01T00:05:04Z' }),
      event('execution.completed', ['attempt', 'att-1'], completion('gnt-2', 1, 'completed')),
      event('attempt.observing', ['attempt', 'att-1'], { execution_outcome: 'completed', output_refs: [], at: '2030-01-01T00:05:05Z' }),
      event('attempt.receipt_pending', ['attempt', 'att-1'], { result_code: 'succeeded', evidence_refs: [], at: '2030-01-01T00:05:06Z' }),
    ];
    // when
    const body = buildReceiptBody(input(events));
    // then
    expect(body.result_code).toBe('succeeded');
    expect(body.capability_grant_ref).toBe('grant:gnt-2');
    expect(body.result_summary).toMatch(/^succeeded: read_local: exited 0 after 42 ms/);
    expect(body.result_summary).toContain(
      'grant gnt-2 renewed grant gnt-1 on the same authority: use 1 of gnt-1 never started (proven not run and released), and gnt-1 expired at 2030-01-01T00:05:00.000Z, refused GRANT_EXPIRED',
    );
    expect(body.grant_hash).toBeDefined();
  });

  it('given the renewal refused before any use of it (revoked), settled as failed, then the receipt says refused, not run, naming the renewal and its refusal', () => {
    const events = [
      ...renewedLog(),
      event('grant.refused', ['grant', 'gnt-2'], { use_id: 'use-3', code: 'GRANT_REVOKED', message: 'grant gnt-2 was revoked', at: '2030-01-01T00:05:04Z' }),
      event('attempt.observing', ['attempt', 'att-1'], { execution_outcome: 'errored', output_refs: [], at: '2030-01-01T00:05:05Z' }),
      event('attempt.receipt_pending', ['attempt', 'att-1'], { result_code: 'failed', evidence_refs: [], at: '2030-01-01T00:05:06Z' }),
    ];
    const body = buildReceiptBody(input(events));
    expect(body.result_code).toBe('refused');
    expect(body.capability_grant_ref).toBe('grant:gnt-2');
    expect(body.result_summary).toMatch(/^refused: read_local not run: .*never started \(use 1 was proven not run and released\)/);
    expect(body.result_summary).toContain('grant gnt-2 renewed grant gnt-1');
    expect(body.result_summary).toContain('then the executor refused grant gnt-2: GRANT_REVOKED: grant gnt-2 was revoked');
    expect(body.result_summary).not.toContain('the limit');
  });

  it(`given ${GRANT_RENEWALS_MAX} renewals, the last refused as expired before a use, then the receipt says refused and that the renewals reached the limit`, () => {
    const facts = attemptFacts(renewedLog(), 'att-1');
    const body = buildReceiptBody({
      ...input(renewedLog()),
      facts: { ...facts, grantsIssued: GRANT_RENEWALS_MAX + 1, refusal: { code: 'GRANT_EXPIRED', message: 'grant gnt-2 expired' }, observedOutcome: 'errored', settledResult: 'failed' },
    });
    expect(body.result_code).toBe('refused');
    expect(body.result_summary).toContain(`then the executor refused grant gnt-2: GRANT_EXPIRED: grant gnt-2 expired (its grant renewed ${GRANT_RENEWALS_MAX} time(s), the limit)`);
  });
});

describe('attemptFacts', () => {
  const envelope = (eventType: string, entity: [EventEnvelope['entity_type'], string], payload: Record<string, unknown>, attemptId?: string): EventEnvelope => ({
    event_id: `evt-${eventType}`,
    schema_version: 1,
    event_type: eventType,
    entity_type: entity[0],
    entity_id: entity[1],
    ...(attemptId === undefined ? {} : { attempt_id: attemptId }),
    occurred_at: '2030-01-01T00:00:00Z',
    actor_type: 'service',
    actor_id: 'x',
    payload,
    causation_id: null,
    correlation_id: 'task-1',
    task_id: 'task-1',
    task_seq: 1,
    prev_event_hash: null,
    hash: '0'.repeat(64),
  });

  it('attributes events without an envelope attempt id through their payload, approval or grant', () => {
    const events = [
      envelope('attempt.awaiting_policy', ['attempt', 'att-1'], { action_request: request, at: '2030-01-01T00:00:00Z' }),
      envelope('approval.requested', ['approval', 'apr-1'], { approval_id: 'apr-1', attempt_id: 'att-1' }),
      envelope('approval.requested', ['approval', 'apr-2'], { approval_id: 'apr-2', attempt_id: 'att-2' }),
      envelope('approval.denied', ['approval', 'apr-2'], { resolved_by: 'd2' }),
      envelope('approval.granted', ['approval', 'apr-1'], { resolved_by: 'd1', witness_validated: false }),
    ];
    expect(attemptFacts(events, 'att-1')).toMatchObject({ request, approval: { approval_id: 'apr-1', status: 'granted', resolved_by: 'd1' } });
    expect(attemptFacts(events, 'att-2')).toMatchObject({ request: null, approval: { approval_id: 'apr-2', status: 'denied' } });
  });
});

describe('buildReceiptBody: a memory_write says what it came to (issue 17)', () => {
  const HASH = 'c'.repeat(64);
  const memoryRequest: ActionRequest = { ...request, action_class: 'memory_write', target_resources: ['memory:repo:writ'], params: { memory: { op: 'promote', memory_id: 'mem-1' } } };
  const execution = (memory: NonNullable<AttemptFacts['execution']>['completed']['memory']): NonNullable<AttemptFacts['execution']> => ({
    eventId: 'use-1-completed',
    completed: {
      grant_id: 'gnt-1',
      use_no: 1,
      executor_id: 'executor-1',
      outcome: 'completed',
      exit_code: 0,
      timed_out: false,
      duration_ms: 3,
      stdout_sha256: HASH,
      stderr_sha256: HASH,
      changed_files: [],
      artifacts: [],
      environment: null,
      ...(memory === undefined ? {} : { memory }),
      at: '2030-01-01T00:01:00Z',
    },
  });
  const input = (memory: NonNullable<AttemptFacts['execution']>['completed']['memory']) => ({
    command: command('settled'),
    facts: { ...noFacts, request: memoryRequest, grant: { jti: 'gnt-1' } as AttemptFacts['grant'], execution: execution(memory), observedOutcome: 'completed', settledResult: 'succeeded' } as AttemptFacts,
    createdAt: '2030-01-01T00:10:00Z',
    prevReceiptHash: null,
    signerRef: 'k1',
  });
  const memoryEvent = 'd'.repeat(64);

  it('given a promotion, then a memory_promotion receipt names the record and binds its memory event by digest', () => {
    const body = buildReceiptBody(input({ memory_id: 'mem-1', op: 'promote', outcome: 'promoted', event_id: 'use-1-memory', event_sha256: memoryEvent }));
    expect(body).toMatchObject({ receipt_class: 'memory_promotion', result_code: 'succeeded' });
    expect(body.result_summary).toContain('promoted memory mem-1 (memory.promoted use-1-memory)');
    expect(body.output_refs).toContain(`sha256:${memoryEvent}`);
  });

  it('given a degraded promotion, then the receipt says it was NOT promoted, why, and that it became a working state candidate', () => {
    const body = buildReceiptBody(input({ memory_id: 'mem-1', op: 'promote', outcome: 'degraded_to_working_state', event_id: 'use-1-memory', event_sha256: memoryEvent, reasons: ['EVIDENCE_MISSING', 'TRUST_TIER_MISSING'] }));
    expect(body.result_summary).toContain('memory mem-1 was NOT promoted: unsupported (EVIDENCE_MISSING, TRUST_TIER_MISSING), it degraded to a working state candidate');
    expect(body.result_summary).not.toContain('file(s) changed');
  });

  it('given an invalidation, then the receipt says the record is kept, marked invalidated', () => {
    const body = buildReceiptBody(input({ memory_id: 'mem-1', op: 'invalidate', outcome: 'invalidated', event_id: 'use-1-memory', event_sha256: memoryEvent }));
    expect(body.result_summary).toContain('invalidated memory mem-1; the record is kept, marked invalidated');
  });
});
