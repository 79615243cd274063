import {
  ActionRequest,
  CapabilityGrantClaims,
  ExecutionCompleted,
  ExecutionOutcomeResolved,
  PolicyEvaluated,
  parseReceipt,
  type ActionClass,
  type CellEnvironment,
  type EventEnvelope,
  type IssueReceipt,
  type PolicyOutcome,
  type Receipt,
} from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { approvalFacts, attemptFacts, recordedSnapshots } from './attempt-facts.js';
import { REPLAY_CLASS, buildReceiptBody, type ReceiptBody } from './build-receipt.js';
import { MAX_RESTORABLE_BYTES } from './rollback-method.js';

/**
 * One receipt binds the whole chain of authority of its action (Hermit 18.2,
 * issue 6): request hash, policy result, approval and resolver, grant, state
 * witness, the cell as applied, outputs and outcome, replay class, rollback,
 * and what it does not assert. Each receipt kind is built from a task log as
 * the services append it, every payload checked against its contract.
 */

const T = (minute: number) => `2030-01-01T00:${String(minute).padStart(2, '0')}:00Z`;
const hex = (seed: string) => sha256Hex(seed);
const GRANT_JWS = 'eyJhbGciOiJFZERTQSJ9.eyJqdGkiOiJnbnQtMSJ9.c2ln';

const ENVIRONMENT: CellEnvironment = {
  image: 'writ/cell:latest',
  image_id: `sha256:${hex('image')}`,
  network_mode: 'none',
  readonly_rootfs: true,
  cap_drop: ['ALL'],
  user: '1000:1000',
  memory_bytes: 268_435_456,
  pids_limit: 128,
  mounts: [{ destination: '/workspace', read_only: false }],
};

class TaskLog {
  readonly events: EventEnvelope[] = [];

  add(eventType: string, entity: [EventEnvelope['entity_type'], string], payload: Record<string, unknown>, attemptId?: string): EventEnvelope {
    const seq = this.events.length + 1;
    const event: EventEnvelope = {
      event_id: `evt-${seq}`,
      schema_version: 1,
      event_type: eventType,
      entity_type: entity[0],
      entity_id: entity[1],
      ...(attemptId === undefined ? {} : { attempt_id: attemptId, step_id: 'step-1' }),
      occurred_at: T(seq),
      actor_type: 'service',
      actor_id: 'writ-test',
      payload,
      causation_id: null,
      correlation_id: 'task-1',
      task_id: 'task-1',
      task_seq: seq,
      prev_event_hash: null,
      hash: hex(`event-${seq}`),
    };
    this.events.push(event);
    return event;
  }
}

function request(attempt: string, actionClass: ActionClass, params: Record<string, unknown>, target: string): ActionRequest {
  return ActionRequest.parse({
    action_request_id: `ar-${attempt}`,
    task_id: 'task-1',
    action_class: actionClass,
    target_resources: [target],
    params,
    expected_effects: [`${target} changed`],
    reversibility_hint: 'reversible',
    reason: `change ${target}`,
    proposed_by: 'agent-1',
    proposed_at: T(0),
  });
}

function policyEvaluated(attempt: string, req: ActionRequest, outcome: PolicyOutcome): Record<string, unknown> {
  return PolicyEvaluated.parse({
    policy_result: {
      policy_result_id: `pr-${attempt}`,
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: attempt,
      action_request_id: req.action_request_id,
      outcome,
      action_class: req.action_class,
      risk_band: outcome === 'allow' ? 'low' : 'high',
      action_summary: `${req.action_class} of ${req.target_resources.join(', ')}`,
      risk_summary: 'low: write_local starts at low',
      policy_profile_ref: 'local_edit_allowed@sha256:abc',
      policy_version: 'sha256:abc',
      affected_resources: [...req.target_resources],
      reasoning_summary: `${outcome}: inside files_owned`,
      matched_rules: ['local_edit'],
      witness_required: outcome === 'require_approval',
      revalidation_conditions: [],
      ...(outcome === 'require_approval' ? { approver_roles: ['director'] } : {}),
      evaluated_at: T(1),
      evaluated_by: 'writ-policy',
    },
    decision: {
      decision_id: `dec-${attempt}`,
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: attempt,
      decision_type: 'safety',
      summary: `policy ${outcome}`,
      rationale: 'inside files_owned',
      evidence_refs: [],
      risk_level: outcome === 'allow' ? 'low' : 'high',
      decided_by: 'writ-policy',
      reversible: true,
      created_at: T(1),
    },
  });
}

function claims(attempt: string, actionClass: ActionClass): CapabilityGrantClaims {
  return CapabilityGrantClaims.parse({
    iss: 'writ-approval',
    sub: 'writ-executor',
    aud: 'writ-executor',
    jti: `gnt-${attempt}`,
    iat: 1_893_456_000,
    exp: 1_893_456_300,
    task_id: 'task-1',
    step_id: 'step-1',
    attempt_id: attempt,
    action_class: actionClass,
    resource_scope: { paths: ['**'], hosts: [] },
    max_uses: 1,
    issued_by_principal_id: 'writ-approval',
    policy_result_ref: `policy_result:pr-${attempt}`,
  });
}

interface StoryOptions {
  readonly attempt?: string;
  readonly actionClass?: ActionClass;
  readonly params?: Record<string, unknown>;
  readonly target?: string;
  readonly policy?: PolicyOutcome;
  /** require_approval: how it resolves, and whether a witness was captured and revalidated. */
  readonly approval?: { readonly outcome: 'granted' | 'denied'; readonly witness: boolean };
  readonly grantJws?: boolean;
  readonly execution?: Partial<ExecutionCompleted>;
  readonly refusal?: boolean;
}

/** One attempt through the governed path, as far as the options take it. */
function story(log: TaskLog, options: StoryOptions = {}): { attempt: string; request: ActionRequest } {
  const attempt = options.attempt ?? 'att-1';
  const actionClass = options.actionClass ?? 'write_local';
  const req = request(attempt, actionClass, options.params ?? { path: 'out.txt', content: 'hello\n' }, options.target ?? 'out.txt');
  log.add('attempt.awaiting_policy', ['attempt', attempt], { action_request: req, at: T(1) }, attempt);
  log.add('policy.evaluated', ['decision', `dec-${attempt}`], policyEvaluated(attempt, req, options.policy ?? 'allow'), attempt);
  if (options.policy === 'deny') return { attempt, request: req };
  if (options.approval !== undefined) {
    const approvalId = `apv-${attempt}`;
    log.add('approval.requested', ['approval', approvalId], {
      approval_id: approvalId,
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: attempt,
      approval_type: 'action',
      requested_action_ref: `action_request:${req.action_request_id}`,
      approval_packet_ref: `sha256:${hex('packet')}`,
      requested_by: 'agent-1',
      policy_result_ref: `policy_result:pr-${attempt}`,
      expires_at: T(50),
      ...(options.approval.witness ? { state_witness: { ref: `artifact:witness-${attempt}`, fingerprints: { [req.target_resources[0] ?? '']: 'sha256:aa' }, observed_at: T(2) } } : {}),
      at: T(2),
    });
    if (options.approval.outcome === 'denied') {
      log.add('approval.denied', ['approval', approvalId], { resolved_by: 'director-1', note: 'not now', at: T(3) });
      return { attempt, request: req };
    }
    log.add('approval.granted', ['approval', approvalId], { resolved_by: 'director-1', note: 'go', witness_validated: options.approval.witness, at: T(3) });
  }
  log.add('grant.issued', ['grant', `gnt-${attempt}`], { claims: claims(attempt, actionClass), ...(options.grantJws === false ? {} : { jws: GRANT_JWS }), at: T(4) }, attempt);
  if (options.refusal === true) {
    log.add('grant.refused', ['grant', `gnt-${attempt}`], { use_id: 'use-1', code: 'GRANT_EXPIRED', message: `grant gnt-${attempt} expired`, at: T(5) });
    return { attempt, request: req };
  }
  const completed = ExecutionCompleted.parse({
    grant_id: `gnt-${attempt}`,
    use_no: 1,
    executor_id: 'writ-executor',
    outcome: 'completed',
    exit_code: 0,
    timed_out: false,
    duration_ms: 40,
    stdout_sha256: hex(''),
    stderr_sha256: hex(''),
    changed_files: [{ path: 'out.txt', change: 'added', before_sha256: null, after_sha256: hex('hello\n') }],
    artifacts: [],
    environment: ENVIRONMENT,
    at: T(6),
    ...options.execution,
  });
  log.add('execution.completed', ['attempt', attempt], completed, attempt);
  if (completed.outcome !== 'unknown') {
    log.add('attempt.observing', ['attempt', attempt], { execution_outcome: completed.outcome, output_refs: [], at: T(7) }, attempt);
    log.add('attempt.receipt_pending', ['attempt', attempt], { result_code: completed.exit_code === 0 ? 'succeeded' : 'failed', evidence_refs: [], at: T(7) }, attempt);
  } else {
    log.add('attempt.observing', ['attempt', attempt], { execution_outcome: 'unknown', output_refs: [], at: T(7) }, attempt);
  }
  return { attempt, request: req };
}

function snapshotArtifact(id: string, content: string, byteSize = Buffer.byteLength(content)) {
  return {
    artifact_id: id,
    class: 'working',
    kind: 'file.snapshot',
    uri: `cas://sha256/${hex(content)}`,
    content_hash: hex(content),
    media_type: 'application/octet-stream',
    byte_size: byteSize,
    created_at: T(6),
    producer: 'writ-executor',
    retention_class: 'task',
    trust_tier: 'observed',
    sensitivity_class: 'internal',
    task_id: 'task-1',
  };
}

function receiptOf(log: TaskLog, attempt: string, cause: IssueReceipt['cause'], approvalId?: string, taskReceipts: readonly Receipt[] = []): ReceiptBody {
  const command: IssueReceipt = { task_id: 'task-1', step_id: 'step-1', attempt_id: attempt, cause, ...(approvalId === undefined ? {} : { approval_id: approvalId }) };
  const body = buildReceiptBody({
    command,
    facts: attemptFacts(log.events, attempt),
    createdAt: T(9),
    prevReceiptHash: null,
    signerRef: 'receipt-k1',
    snapshots: recordedSnapshots(log.events),
    taskReceipts,
    ...(approvalId === undefined ? {} : { approval: approvalFacts(log.events, approvalId) }),
  });
  // Every body is a valid receipt once sealed (the contract's cross-field rules included).
  parseReceipt({ ...body, receipt_hash: hex('receipt'), signature: 'eyJhbGciOiJFZERTQSJ9..c2ln' });
  return body;
}

const hashOf = (value: unknown) => sha256Hex(canonicalJson(value));
const eventPayload = (log: TaskLog, type: string) => log.events.find((event) => event.event_type === type)?.payload;

describe('a settled receipt binds the chain of authority', () => {
  it('given a directly allowed write_local that added out.txt, when receipted, then it binds request, policy result and grant by hash, attests the cell, and names a delete_local rollback', () => {
    // given
    const log = new TaskLog();
    const { attempt } = story(log);

    // when
    const body = receiptOf(log, attempt, 'settled');

    // then: the chain of authority, each link by content hash
    expect(body.result_code).toBe('succeeded');
    expect(body.request_hash).toBe(hashOf((eventPayload(log, 'attempt.awaiting_policy') as { action_request: unknown }).action_request));
    expect(body.policy_result_hash).toBe(hashOf((eventPayload(log, 'policy.evaluated') as { policy_result: unknown }).policy_result));
    expect(body.grant_hash).toBe(sha256Hex(GRANT_JWS));
    expect(body.capability_grant_ref).toBe('grant:gnt-att-1');
    expect(body.approval_resolution).toBeUndefined();
    expect(body.state_witness_ref).toBeNull();
    // and the cell as actually applied
    expect(body.attestation).toEqual({ ...ENVIRONMENT });
    expect(body.environment_ref).toBe(`sha256:${hashOf(ENVIRONMENT)}`);
    // and replay and rollback
    expect(body.replay_class).toBe('idempotent_replay');
    expect(body.rollback_supported).toBe(true);
    expect(body.rollback).toMatchObject({ method: 'compensating_local_actions', steps: [{ action_class: 'delete_local', path: 'out.txt', expected_sha256: hex('hello\n') }] });
    // and what it does not assert
    expect(body.not_asserted).toEqual(expect.arrayContaining([expect.stringContaining('no approval was required, so no state witness was captured')]));
    expect(body.not_asserted?.join('\n')).not.toContain('a rollback method');
  });

  it('given an approved delete whose pre-image an earlier action kept, when receipted, then it binds the approval, its resolver and resolution event, the witness, and a write_local rollback from the artifact', () => {
    // given: att-0 wrote build/marker (its content kept as a file.snapshot), att-1 deleted it after approval
    const log = new TaskLog();
    story(log, {
      attempt: 'att-0',
      params: { path: 'build/marker', content: 'keep\n' },
      target: 'build/marker',
      execution: { changed_files: [{ path: 'build/marker', change: 'added', before_sha256: null, after_sha256: hex('keep\n') }], artifacts: [snapshotArtifact('art-marker', 'keep\n')] as never },
    });
    const { attempt } = story(log, {
      attempt: 'att-1',
      actionClass: 'delete_local',
      params: { path: 'build/marker' },
      target: 'build/marker',
      policy: 'require_approval',
      approval: { outcome: 'granted', witness: true },
      execution: { changed_files: [{ path: 'build/marker', change: 'deleted', before_sha256: hex('keep\n'), after_sha256: null }] },
    });
    const granted = log.events.find((event) => event.event_type === 'approval.granted');

    // when
    const body = receiptOf(log, attempt, 'settled');

    // then
    expect(body.approval_ref).toBe('approval:apv-att-1');
    expect(body.approval_resolution).toEqual({
      status: 'granted',
      resolved_by: 'director-1',
      resolution_ref: `event:${granted?.event_id}`,
      resolution_hash: hashOf(granted?.payload),
      packet_ref: `sha256:${hex('packet')}`,
      witness_validated: true,
    });
    expect(body.state_witness_ref).toBe('artifact:witness-att-1');
    expect(body.rollback).toMatchObject({
      method: 'compensating_local_actions',
      steps: [{ action_class: 'write_local', path: 'build/marker', expected_sha256: null, restore_artifact_ref: 'artifact:art-marker', restore_sha256: hex('keep\n') }],
    });
    expect(body.rollback?.prerequisites.join('\n')).toContain('file modes are not restored');
    expect(body.not_asserted?.join('\n')).not.toContain('state witness');
  });

  it('given a modification whose pre-image was never kept, when receipted, then no rollback is named and the receipt says why, in rollback and not_asserted', () => {
    // given
    const log = new TaskLog();
    const { attempt } = story(log, {
      actionClass: 'execute_command',
      params: { argv: ['sh', '-c', 'echo more >> notes.txt'] },
      target: 'notes.txt',
      execution: { changed_files: [{ path: 'notes.txt', change: 'modified', before_sha256: hex('old'), after_sha256: hex('old+more') }] },
    });

    // when
    const body = receiptOf(log, attempt, 'settled');

    // then
    expect(body.rollback_supported).toBe(false);
    expect(body.rollback).toMatchObject({ method: 'none', steps: [], prerequisites: [] });
    expect(body.rollback?.statement).toContain('pre-image of notes.txt was not captured');
    expect(body.not_asserted).toEqual(expect.arrayContaining([expect.stringMatching(/^a rollback method: .*notes\.txt/)]));
    expect(body.replay_class).toBe('observe_only');
  });

  it.each([
    ['a mode-only change', { changed_files: [{ path: 'run.sh', change: 'modified', before_sha256: hex('x'), after_sha256: hex('x') }] }, 'run.sh'],
    ['egress to a host', { environment: { ...ENVIRONMENT, network_mode: 'writ-egress', egress_hosts: ['api.example.com'] } }, 'api.example.com'],
    ['a diff that was not taken', { changed_files: [], error: { code: 'EXECUTOR_DIFF_UNAVAILABLE', message: 'gone' } }, 'EXECUTOR_DIFF_UNAVAILABLE'],
    ['an environment not read back', { environment: null }, 'not read back'],
  ] as const)('given %s, when receipted, then no rollback is named and the reason is given', (_note, execution, reason) => {
    // given
    const log = new TaskLog();
    const { attempt } = story(log, { actionClass: 'execute_command', params: { argv: ['true'] }, execution: execution as Partial<ExecutionCompleted> });

    // when
    const body = receiptOf(log, attempt, 'settled');

    // then
    expect(body.rollback_supported).toBe(false);
    expect(body.rollback?.method).toBe('none');
    expect(body.rollback?.statement).toContain(reason);
  });

  it('given a pre-image larger than a rollback restores, when receipted, then no rollback is named', () => {
    // given
    const log = new TaskLog();
    story(log, { attempt: 'att-0', execution: { artifacts: [snapshotArtifact('art-big', 'big', MAX_RESTORABLE_BYTES + 1)] as never } });
    const { attempt } = story(log, { attempt: 'att-1', execution: { changed_files: [{ path: 'big.bin', change: 'modified', before_sha256: hex('big'), after_sha256: hex('new') }] } });

    // when
    const body = receiptOf(log, attempt, 'settled');

    // then
    expect(body.rollback?.method).toBe('none');
    expect(body.rollback?.statement).toContain('larger than a rollback restores');
  });

  it('given egress, when receipted, then it does not assert the effect on the hosts the cell could reach', () => {
    // given
    const log = new TaskLog();
    const { attempt } = story(log, { actionClass: 'execute_command', params: { argv: ['curl', 'https://api.example.com'] }, execution: { environment: { ...ENVIRONMENT, network_mode: 'writ-egress', egress_hosts: ['api.example.com'] } } });

    // when
    const body = receiptOf(log, attempt, 'settled');

    // then
    expect(body.attestation?.egress_hosts).toEqual(['api.example.com']);
    expect(body.not_asserted).toEqual(expect.arrayContaining([expect.stringContaining('the effect on the hosts the cell could reach (api.example.com)')]));
  });

  it('given a grant.issued without its JWS (an older event), when receipted, then no grant hash is claimed and the receipt says so', () => {
    // given
    const log = new TaskLog();
    const { attempt } = story(log, { grantJws: false });

    // when
    const body = receiptOf(log, attempt, 'settled');

    // then
    expect(body.grant_hash).toBeUndefined();
    expect(body.not_asserted).toEqual(expect.arrayContaining([expect.stringContaining("the grant's signed form")]));
  });
});

describe('unknown and director-resolved receipts', () => {
  const unknownExecution: Partial<ExecutionCompleted> = {
    outcome: 'unknown',
    exit_code: null,
    changed_files: [],
    environment: null,
    error: { code: 'EXECUTOR_OUTCOME_UNKNOWN', message: 'claimed and never recorded as completed' },
  };

  it('given an unknown outcome, when receipted, then the receipt is unknown_outcome, observe-only, without a rollback, and says it does not know whether the effect happened', () => {
    // given
    const log = new TaskLog();
    const { attempt } = story(log, { execution: unknownExecution });

    // when
    const body = receiptOf(log, attempt, 'settled');

    // then
    expect(body).toMatchObject({ result_code: 'unknown_outcome', replay_class: 'observe_only', rollback_supported: false, attestation: null, grant_hash: sha256Hex(GRANT_JWS) });
    expect(body.rollback?.statement).toContain('the outcome is unknown');
    expect(body.not_asserted).toEqual(expect.arrayContaining([expect.stringContaining('whether the effect happened')]));
  });

  it('given a director settled it, when receipted, then it names the director as the source and asserts no effect nor rollback', () => {
    // given
    const log = new TaskLog();
    const { attempt } = story(log, { execution: unknownExecution });
    const completed = log.events.find((event) => event.event_type === 'execution.completed');
    log.add(
      'execution.outcome_resolved',
      ['attempt', attempt],
      ExecutionOutcomeResolved.parse({
        grant_id: `gnt-${attempt}`,
        use_no: 1,
        execution_event_id: completed?.event_id,
        outcome: 'succeeded',
        resolved_by: 'director-1',
        resolved_at: T(8),
        note: 'the file is there',
        resolution_jws_sha256: hex('resolution'),
      }),
      attempt,
    );
    log.add('attempt.receipt_pending', ['attempt', attempt], { result_code: 'succeeded', evidence_refs: [], at: T(8) }, attempt);

    // when
    const body = receiptOf(log, attempt, 'settled');

    // then
    expect(body).toMatchObject({ result_code: 'succeeded', replay_class: 'observe_only', rollback_supported: false });
    expect(body.rollback?.statement).toContain('settled by a director');
    expect(body.not_asserted).toEqual(expect.arrayContaining([expect.stringContaining('the statement of director-1')]));
  });
});

describe('refusals', () => {
  it('given a policy deny, when receipted, then it binds the request and the policy result, claims no grant, cell or rollback', () => {
    // given
    const log = new TaskLog();
    const { attempt } = story(log, { policy: 'deny' });

    // when
    const body = receiptOf(log, attempt, 'policy_denied');

    // then
    expect(body).toMatchObject({ result_code: 'refused', capability_grant_ref: null, attestation: null, state_witness_ref: null, rollback_supported: false, replay_class: 'explain_only' });
    expect(body.request_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(body.policy_result_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(body.grant_hash).toBeUndefined();
    expect(body.rollback?.statement).toContain('nothing ran');
    expect(body.not_asserted).toEqual(expect.arrayContaining([expect.stringContaining('it was not run under this attempt')]));
  });

  it('given an approval denied by a director, when the attempt is receipted, then it names the resolver and the resolution event', () => {
    // given
    const log = new TaskLog();
    const { attempt } = story(log, { policy: 'require_approval', approval: { outcome: 'denied', witness: true } });
    const denied = log.events.find((event) => event.event_type === 'approval.denied');

    // when
    const body = receiptOf(log, attempt, 'approval_denied');

    // then
    expect(body.receipt_class).toBe('approval_resolution');
    expect(body.approval_resolution).toMatchObject({ status: 'denied', resolved_by: 'director-1', resolution_ref: `event:${denied?.event_id}` });
    expect(body.state_witness_ref).toBe('artifact:witness-att-1');
    expect(body.capability_grant_ref).toBeNull();
  });

  it('given the executor refused the grant, when receipted, then the refused grant is bound by hash and nothing ran', () => {
    // given
    const log = new TaskLog();
    const { attempt } = story(log, { refusal: true });

    // when
    const body = receiptOf(log, attempt, 'refused');

    // then
    expect(body).toMatchObject({ result_code: 'refused', capability_grant_ref: 'grant:gnt-att-1', grant_hash: sha256Hex(GRANT_JWS), attestation: null, rollback_supported: false });
  });
});

describe('an approval_resolution receipt', () => {
  it('given a granted approval without a witness, when receipted, then it binds request, policy result, resolver and resolution event, and does not assert the state it was given on', () => {
    // given
    const log = new TaskLog();
    const { attempt } = story(log, { policy: 'require_approval', approval: { outcome: 'granted', witness: false } });
    const granted = log.events.find((event) => event.event_type === 'approval.granted');

    // when
    const body = receiptOf(log, attempt, 'approval_resolved', 'apv-att-1');

    // then
    expect(body.request_hash).toBe(hashOf((eventPayload(log, 'attempt.awaiting_policy') as { action_request: unknown }).action_request));
    expect(body.policy_result_hash).toBe(hashOf((eventPayload(log, 'policy.evaluated') as { policy_result: unknown }).policy_result));
    expect(body.approval_resolution).toMatchObject({ status: 'granted', resolved_by: 'director-1', resolution_ref: `event:${granted?.event_id}`, resolution_hash: hashOf(granted?.payload) });
    expect(body).toMatchObject({ state_witness_ref: null, attestation: null, rollback_supported: false, rollback: { method: 'none' } });
    expect(body.not_asserted).toEqual(expect.arrayContaining([expect.stringContaining('no state witness was captured'), expect.stringContaining("the attempt's own receipt")]));
  });
});

describe('replay classes by action class (Hermit 18.5)', () => {
  it.each([
    ['read_local', 'idempotent_replay'],
    ['write_local', 'idempotent_replay'],
    ['delete_local', 'idempotent_replay'],
    ['execute_command', 'observe_only'],
    ['network_write', 'observe_only'],
    ['payment', 'observe_only'],
  ] as const)('given %s, then %s', (actionClass, replay) => {
    expect(REPLAY_CLASS[actionClass]).toBe(replay);
  });

  it('given any class, then no receipt claims byte-identical replay', () => {
    expect(Object.values(REPLAY_CLASS)).not.toContain('deterministic_replay');
  });
});

describe('recordedSnapshots', () => {
  it('given file.snapshot and file.preimage artifacts of the task, then they are found by content hash, other kinds are not', () => {
    // given
    const log = new TaskLog();
    story(log, {
      execution: {
        artifacts: [snapshotArtifact('art-a', 'a'), { ...snapshotArtifact('art-pre', 'before'), kind: 'file.preimage' }, { ...snapshotArtifact('art-out', 'stdout'), kind: 'command.transcript' }] as never,
      },
    });

    // when
    const snapshots = recordedSnapshots(log.events);

    // then
    expect(snapshots.get(hex('a'))).toEqual({ artifact_id: 'art-a', byte_size: 1 });
    expect(snapshots.get(hex('before'))).toEqual({ artifact_id: 'art-pre', byte_size: 6 });
    expect(snapshots.has(hex('stdout'))).toBe(false);
  });
});

describe('rollback (Hermit 18.6)', () => {
  /** A write_local that overwrote notes.txt (v1 → v2) and kept v1 as its pre-image, receipted. */
  function overwritten(log: TaskLog): Receipt {
    const { attempt } = story(log, {
      attempt: 'att-0',
      params: { path: 'notes.txt', content: 'v2\n' },
      target: 'notes.txt',
      execution: {
        changed_files: [{ path: 'notes.txt', change: 'modified', before_sha256: hex('v1\n'), after_sha256: hex('v2\n') }],
        artifacts: [{ ...snapshotArtifact('art-pre-v1', 'v1\n'), kind: 'file.preimage' }] as never,
      },
    });
    return { ...receiptOf(log, attempt, 'settled'), receipt_hash: hex('receipt-att-0') } as Receipt;
  }

  it('given a write_local whose pre-image the executor kept as file.preimage, when receipted, then it names one rollback writing the pre-image back', () => {
    // given, when
    const original = overwritten(new TaskLog());

    // then
    expect(original.rollback_supported).toBe(true);
    expect(original.rollback).toMatchObject({
      method: 'compensating_local_actions',
      steps: [{ action_class: 'write_local', path: 'notes.txt', expected_sha256: hex('v2\n'), restore_artifact_ref: 'artifact:art-pre-v1', restore_sha256: hex('v1\n') }],
    });
    expect(original.rollback?.statement).toContain('one governed rollback');
  });

  it('given a rollback of that receipt that ran, when receipted, then its class is rollback, it names the receipt it rolls back (receipt:<id> in input_refs) and its result, and can itself be rolled back', () => {
    // given
    const log = new TaskLog();
    const original = overwritten(log);
    const steps = original.rollback?.steps ?? [];
    const { attempt } = story(log, {
      attempt: 'att-1',
      actionClass: 'rollback',
      params: { receipt_id: original.receipt_id, receipt_hash: original.receipt_hash, steps },
      target: 'notes.txt',
      policy: 'require_approval',
      approval: { outcome: 'granted', witness: true },
      execution: {
        changed_files: [{ path: 'notes.txt', change: 'modified', before_sha256: hex('v2\n'), after_sha256: hex('v1\n') }],
        artifacts: [{ ...snapshotArtifact('art-pre-v2', 'v2\n'), kind: 'file.preimage' }] as never,
      },
    });
    const frozen = JSON.stringify(original);

    // when
    const body = receiptOf(log, attempt, 'settled', undefined, [original]);

    // then
    expect(body.receipt_class).toBe('rollback');
    expect(body.result_code).toBe('succeeded');
    expect(body.input_refs).toContain(`receipt:${original.receipt_id}`);
    expect(body.result_summary).toContain(`rolls back receipt ${original.receipt_id} (tool_execution, succeeded; receipt_hash ${original.receipt_hash})`);
    expect(body.approval_resolution).toMatchObject({ status: 'granted', resolved_by: 'director-1' });
    expect(body.rollback).toMatchObject({ method: 'compensating_local_actions', steps: [{ action_class: 'write_local', path: 'notes.txt', restore_sha256: hex('v2\n'), expected_sha256: hex('v1\n') }] });
    // the original receipt is not touched
    expect(JSON.stringify(original)).toBe(frozen);
  });

  it('given a rollback whose params bind another receipt hash, when receipted, then it names no receipt and says the log does not hold it', () => {
    // given
    const log = new TaskLog();
    const original = overwritten(log);
    const { attempt } = story(log, {
      attempt: 'att-1',
      actionClass: 'rollback',
      params: { receipt_id: original.receipt_id, receipt_hash: hex('forged'), steps: original.rollback?.steps ?? [] },
      target: 'notes.txt',
      execution: { outcome: 'errored', exit_code: null, changed_files: [], error: { code: 'EXECUTOR_ROLLBACK_RECEIPT_MISMATCH', message: 'not backed' } },
    });

    // when
    const body = receiptOf(log, attempt, 'settled', undefined, [original]);

    // then
    expect(body.receipt_class).toBe('rollback');
    expect(body.result_code).toBe('failed');
    expect(body.input_refs.some((ref) => ref.startsWith('receipt:'))).toBe(false);
    expect(body.result_summary).toContain('EXECUTOR_ROLLBACK_RECEIPT_MISMATCH');
    expect(body.result_summary).toContain("which the task's log does not hold");
  });
});
