import { hasErrorCode, IssueReceipt, type ActionRequest, type EventEnvelope } from '@writ/contracts';
import { canonicalJson, generateEd25519Key, KeySet, sha256Hex, signJws } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { approvalFacts, attemptFacts } from './attempt-facts.js';
import { buildReceiptBody, receiptIdFor, type ReceiptBodyInput } from './build-receipt.js';
import { RECEIPT_JWS_TYPE, sealReceipt } from './receipt-seal.js';
import { verifyReceipt } from './verify-receipt.js';

/**
 * `approval_resolved` (Hermit 18.1 `approval_resolution`): every resolution of
 * an approval — granted, denied, expired, cancelled, invalidated — gets its own
 * receipt, bound to the approval, its packet and witness, the resolver and how
 * it resolved, and the attempt; apart from the receipt that ends the attempt.
 */

const T0 = '2030-01-01T00:00:00Z';
const request: ActionRequest = {
  action_request_id: 'ar-1',
  task_id: 'task-1',
  action_class: 'execute_command',
  target_resources: ['build'],
  params: { argv: ['rm', '-rf', 'build'] },
  expected_effects: ['build removed'],
  reversibility_hint: 'irreversible',
  reason: 'clean',
  proposed_by: 'agent-1',
  proposed_at: T0,
};

let seq = 0;
const envelope = (eventType: string, entity: [EventEnvelope['entity_type'], string], payload: Record<string, unknown>, attemptId?: string): EventEnvelope => ({
  event_id: `evt-${++seq}-${eventType}`,
  schema_version: 1,
  event_type: eventType,
  entity_type: entity[0],
  entity_id: entity[1],
  ...(attemptId === undefined ? {} : { attempt_id: attemptId }),
  occurred_at: T0,
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

const requested = (approvalId: string, attemptId = 'att-1', witness = true) =>
  envelope(
    'approval.requested',
    ['approval', approvalId],
    {
      approval_id: approvalId,
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: attemptId,
      approval_type: 'action',
      requested_action_ref: 'action_request:ar-1',
      approval_packet_ref: `sha256:${'b'.repeat(64)}`,
      requested_by: 'agent-1',
      policy_result_ref: 'policy_result:pr-1',
      expires_at: '2030-01-01T01:00:00Z',
      ...(witness ? { state_witness: { ref: `state_witness:${approvalId}`, fingerprints: { build: 'sha256:aa' }, observed_at: T0 } } : {}),
      at: T0,
    },
    attemptId,
  );

function log(...resolution: EventEnvelope[]): EventEnvelope[] {
  return [envelope('attempt.awaiting_policy', ['attempt', 'att-1'], { action_request: request, at: T0 }, 'att-1'), requested('apv-1'), ...resolution];
}

const command = (approvalId = 'apv-1', attemptId = 'att-1'): IssueReceipt => ({
  task_id: 'task-1',
  step_id: 'step-1',
  attempt_id: attemptId,
  cause: 'approval_resolved',
  approval_id: approvalId,
});

function input(events: EventEnvelope[], cmd = command(), prevReceiptHash: string | null = null): ReceiptBodyInput {
  return {
    command: cmd,
    facts: attemptFacts(events, cmd.attempt_id),
    createdAt: '2030-01-01T00:05:00Z',
    prevReceiptHash,
    signerRef: 'receipt-k1',
    approval: approvalFacts(events, cmd.approval_id!),
  };
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return hasErrorCode(error) ? error.code : 'untyped';
  }
  return undefined;
}

describe('IssueReceipt: approval_resolved', () => {
  it('requires approval_id exactly for approval_resolved', () => {
    expect(IssueReceipt.safeParse(command()).success).toBe(true);
    expect(IssueReceipt.safeParse({ ...command(), approval_id: undefined }).success).toBe(false);
    expect(IssueReceipt.safeParse({ ...command(), cause: 'settled' }).success).toBe(false);
  });
});

describe('approvalFacts', () => {
  it('gathers the request and the first resolution of one approval, ignoring the others', () => {
    const events = [
      ...log(envelope('approval.granted', ['approval', 'apv-1'], { resolved_by: 'director-1', witness_validated: true, at: T0 })),
      requested('apv-2', 'att-2'),
      envelope('approval.denied', ['approval', 'apv-2'], { resolved_by: 'director-2', at: T0 }),
    ];
    const facts = approvalFacts(events, 'apv-1');
    expect(facts).toMatchObject({
      approval_id: 'apv-1',
      attempt_id: 'att-1',
      requested: { approval_packet_ref: `sha256:${'b'.repeat(64)}`, policy_result_ref: 'policy_result:pr-1', requested_by: 'agent-1', state_witness_ref: 'state_witness:apv-1' },
      resolution: { status: 'granted', resolved_by: 'director-1', witness_validated: true, invalidation_cause: null },
    });
    expect(approvalFacts(events, 'apv-2').resolution).toMatchObject({ status: 'denied', resolved_by: 'director-2' });
    expect(approvalFacts(events, 'apv-9')).toMatchObject({ requested: null, resolution: null });
  });
});

describe('buildReceiptBody: approval_resolved', () => {
  it('given a granted approval, then an approval_resolution receipt binds the approval, its packet and witness, the resolver, the revalidated witness and the attempt', () => {
    const granted = envelope('approval.granted', ['approval', 'apv-1'], { resolved_by: 'director-1', witness_validated: true, at: T0 });
    const events = log(granted);
    const body = buildReceiptBody(input(events, command(), 'c'.repeat(64)));
    expect(body).toMatchObject({
      receipt_id: receiptIdFor(command(), 'succeeded'),
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: 'att-1',
      receipt_class: 'approval_resolution',
      action_request_ref: 'action_request:ar-1',
      approval_ref: 'approval:apv-1',
      policy_result_ref: 'policy_result:pr-1',
      capability_grant_ref: null,
      environment_ref: null,
      result_code: 'succeeded',
      replay_class: 'explain_only',
      prev_receipt_hash: 'c'.repeat(64),
    });
    expect(body.input_refs).toEqual([`sha256:${'b'.repeat(64)}`, `event:${events[1]!.event_id}`, 'state_witness:apv-1']);
    expect(body.output_refs).toEqual([`event:${granted.event_id}`, `sha256:${sha256Hex(canonicalJson(granted.payload))}`]);
    expect(body.result_summary).toBe('succeeded: approval apv-1 granted by director-1; state witness revalidated');
  });

  it.each([
    ['denied', envelope('approval.denied', ['approval', 'apv-1'], { resolved_by: 'director-1', note: 'not now', at: T0 }), 'refused', 'approval apv-1 denied by director-1; not now'],
    ['expired', envelope('approval.expired', ['approval', 'apv-1'], { resolved_by: 'writ-approval', at: T0 }), 'cancelled', 'approval apv-1 expired by writ-approval'],
    ['cancelled', envelope('approval.cancelled', ['approval', 'apv-1'], { resolved_by: 'writ-orchestrator', reason: 'the task ended', at: T0 }), 'cancelled', 'approval apv-1 cancelled by writ-orchestrator; the task ended'],
    [
      'invalidated by a newly bound input',
      envelope('approval.invalidated', ['approval', 'apv-1'], { resolved_by: 'writ-orchestrator', cause: 'input_drift', note: 'superseded by ar-2', at: T0 }),
      'cancelled',
      'approval apv-1 invalidated (input_drift) by writ-orchestrator; superseded by ar-2',
    ],
    [
      'invalidated by witness drift',
      envelope('approval.invalidated', ['approval', 'apv-1'], { resolved_by: 'director-1', cause: 'witness_drift', drifted_resources: ['build'], at: T0 }),
      'cancelled',
      'approval apv-1 invalidated (witness_drift: build) by director-1',
    ],
  ] as const)('given an approval %s, then it is receipted as %s with how and by whom', (_how, resolution, result, summary) => {
    const body = buildReceiptBody(input(log(resolution)));
    expect(body).toMatchObject({ receipt_class: 'approval_resolution', result_code: result, approval_ref: 'approval:apv-1', receipt_id: receiptIdFor(command(), result) });
    expect(body.result_summary).toBe(`${result}: ${summary}`);
  });

  it('given a grant that did not revalidate a captured witness, then the receipt says so', () => {
    const body = buildReceiptBody(input(log(envelope('approval.granted', ['approval', 'apv-1'], { resolved_by: 'director-1', witness_validated: false, at: T0 }))));
    expect(body.result_summary).toContain('state witness NOT revalidated');
  });

  it('derives one receipt id per approval: two approvals of the same attempt never share one, and the same command always finds its own', () => {
    expect(receiptIdFor(command('apv-1'), 'succeeded')).toBe(receiptIdFor(command('apv-1'), 'succeeded'));
    expect(receiptIdFor(command('apv-1'), 'succeeded')).not.toBe(receiptIdFor(command('apv-2'), 'succeeded'));
    expect(receiptIdFor(command('apv-1'), 'refused')).not.toBe(receiptIdFor({ ...command(), cause: 'approval_denied', approval_id: undefined }, 'refused'));
  });

  it.each([
    ['an unknown approval', log(envelope('approval.granted', ['approval', 'apv-1'], { resolved_by: 'd', witness_validated: true, at: T0 })), command('apv-9')],
    ['a pending approval', log(), command()],
    ['an approval of another attempt', [...log(), requested('apv-2', 'att-2'), envelope('approval.denied', ['approval', 'apv-2'], { resolved_by: 'd', at: T0 })], command('apv-2')],
  ])('given %s, then RECEIPT_APPROVAL_NOT_FOUND', (_case, events, cmd) => {
    expect(codeOf(() => buildReceiptBody(input(events, cmd)))).toBe('RECEIPT_APPROVAL_NOT_FOUND');
  });

  it('given the body sealed by the receipt key, then it is a valid signed receipt that verifies', async () => {
    const key = await generateEd25519Key({ kid: 'receipt-k1' });
    const body = buildReceiptBody(input(log(envelope('approval.denied', ['approval', 'apv-1'], { resolved_by: 'director-1', at: T0 }))));
    const sealed = await sealReceipt(body, { kid: key.kid, sign: (canonical) => signJws(canonical, key, { typ: RECEIPT_JWS_TYPE }) });
    expect(await verifyReceipt(sealed.receipt, sealed.jws, KeySet.of([key]))).toMatchObject({ ok: true, kid: 'receipt-k1' });
  });
});
