import { parseReceipt, safeParseRollbackParams, type Receipt } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { rollbackRequest, rollbackRequestId } from './rollback.js';

/*
 * `writ rollback` turns a receipt's rollback metadata (Hermit 18.6) into ONE
 * ActionRequest of class rollback, or refuses when the receipt names no method.
 */

const NOW = new Date('2030-01-01T00:10:00Z');
const h = (seed: string) => sha256Hex(seed);

function receipt(rollback: Receipt['rollback'], overrides: Partial<Receipt> = {}): Receipt {
  return parseReceipt({
    receipt_id: 'rct-1',
    task_id: 'task-1',
    step_id: 'step-1',
    attempt_id: 'att-1',
    receipt_class: 'tool_execution',
    action_request_ref: 'action_request:ar-1',
    input_refs: [],
    environment_ref: null,
    policy_result_ref: null,
    approval_ref: null,
    capability_grant_ref: 'grant:gnt-1',
    output_refs: [],
    result_code: 'succeeded',
    result_summary: 'succeeded: write_local',
    created_at: '2030-01-01T00:05:00Z',
    rollback_supported: rollback?.method !== 'none',
    rollback,
    receipt_hash: h('receipt'),
    prev_receipt_hash: null,
    ...overrides,
  });
}

const steps = [
  { action_class: 'write_local' as const, path: 'notes.txt', expected_sha256: h('v2'), restore_artifact_ref: 'artifact:art-1', restore_sha256: h('v1') },
  { action_class: 'delete_local' as const, path: 'new.txt', expected_sha256: h('new') },
];
const reversible = receipt({ method: 'compensating_local_actions', statement: 'reversible', prerequisites: [], steps });

describe('rollbackRequest', () => {
  it('given a receipt that names a method, then one rollback request of its task: params name the receipt and its steps unchanged, every step path a target', () => {
    const request = rollbackRequest(reversible, 'agent-1', NOW);
    expect(request).toMatchObject({
      action_request_id: rollbackRequestId('rct-1'),
      task_id: 'task-1',
      action_class: 'rollback',
      target_resources: ['notes.txt', 'new.txt'],
      params: { receipt_id: 'rct-1', receipt_hash: h('receipt'), steps },
      reversibility_hint: 'reversible',
      proposed_by: 'agent-1',
      proposed_at: NOW.toISOString(),
      step: { kind: 'rollback' },
    });
    expect(safeParseRollbackParams(request.params).ok).toBe(true);
    expect(request.expected_effects).toEqual([`notes.txt holds its pre-image again (sha256 ${h('v1')})`, 'new.txt is removed (the action added it)']);
  });

  it('given the same receipt twice, then the same request id (ingress dedupes a second submission); --id overrides it', () => {
    expect(rollbackRequest(reversible, 'agent-1', NOW).action_request_id).toBe(rollbackRequest(reversible, 'agent-2', NOW).action_request_id);
    expect(rollbackRequest(reversible, 'agent-1', NOW, { id: 'rb-custom' }).action_request_id).toBe('rb-custom');
  });

  it('given a receipt whose method is none, then CLI_ROLLBACK_UNAVAILABLE with the receipt\'s statement', () => {
    const statement = 'no rollback method: the pre-image of notes.txt was not captured';
    expect(() => rollbackRequest(receipt({ method: 'none', statement, prerequisites: [], steps: [] }), 'agent-1', NOW)).toThrow(
      expect.objectContaining({ code: 'CLI_ROLLBACK_UNAVAILABLE', message: expect.stringContaining(statement) }),
    );
  });

  it('given a receipt without rollback metadata, then CLI_ROLLBACK_UNAVAILABLE', () => {
    expect(() => rollbackRequest(receipt(undefined, { rollback_supported: false }), 'agent-1', NOW)).toThrow(expect.objectContaining({ code: 'CLI_ROLLBACK_UNAVAILABLE' }));
  });

  it('given more paths than one request can target, then CLI_ROLLBACK_UNAVAILABLE says so', () => {
    const many = Array.from({ length: 65 }, (_, i) => ({ action_class: 'delete_local' as const, path: `f${i}.txt`, expected_sha256: h(String(i)) }));
    expect(() => rollbackRequest(receipt({ method: 'compensating_local_actions', statement: 's', prerequisites: [], steps: many }), 'agent-1', NOW)).toThrow(
      expect.objectContaining({ code: 'CLI_ROLLBACK_UNAVAILABLE', message: expect.stringContaining('at most 64') }),
    );
  });
});
