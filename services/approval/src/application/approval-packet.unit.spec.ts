import { RequestApproval, type ActionRequest } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { actionSummary, buildApprovalPacket, packetArtifactRef, packetArtifactSha256, packetDocument, packetDocumentBytes, rollbackAvailable } from './approval-packet.js';

function request(overrides: Partial<ActionRequest>): ActionRequest {
  return {
    action_request_id: 'ar-1',
    task_id: 'task-1',
    action_class: 'execute_command',
    target_resources: ['src'],
    params: { argv: ['make', 'build'] },
    expected_effects: ['a build'],
    reversibility_hint: 'reversible',
    reason: 'build it',
    proposed_by: 'agent-1',
    proposed_at: '2030-01-01T00:00:00Z',
    ...overrides,
  };
}

describe('actionSummary', () => {
  const cases: Array<{ note: string; input: Partial<ActionRequest>; want: string }> = [
    { note: 'a command, words quoted when needed', input: { params: { argv: ['sh', '-c', 'echo hi'], cwd: 'src' } }, want: 'execute_command: sh -c "echo hi" (in src)' },
    { note: 'a file action', input: { action_class: 'write_local', params: { path: 'docs/a.md', content: 'x' } }, want: 'write_local: docs/a.md' },
    {
      note: 'a network action never shows credentials',
      input: { action_class: 'network_write', params: { url: 'https://bot:s3cret@api.example.org/x', method: 'POST' } },
      want: 'network_write: POST https://api.example.org/x',
    },
    { note: 'otherwise the target resources', input: { action_class: 'memory_write', target_resources: ['memory:task'], params: {} }, want: 'memory_write: memory:task' },
  ];
  it.each(cases)('$note', ({ input, want }) => {
    expect(actionSummary(request(input))).toBe(want);
  });
});

describe('rollbackAvailable', () => {
  it('given a class whose pre-images the executor keeps (write_local, delete_local, rollback), then a rollback is offered; a command, a network or any other action is not', () => {
    const offered = (['write_local', 'delete_local', 'rollback', 'execute_command', 'network_write', 'vcs_mutation', 'publication'] as const).filter((cls) => rollbackAvailable(request({ action_class: cls })));
    expect(offered).toEqual(['write_local', 'delete_local', 'rollback']);
  });

  it('given a write_local, when its packet is built, then it says rollback_available: true', () => {
    const command = RequestApproval.parse({
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: 'att-1',
      approval_id: 'apr-1',
      policy_result_id: 'pr-1',
      action_request: request({ action_class: 'write_local', target_resources: ['src/a.ts'], params: { path: 'src/a.ts', content: 'x' } }),
      requested_by: 'agent-1',
      risk_band: 'high',
      reason: 'outside files_owned',
    });
    expect(buildApprovalPacket(command, '2030-01-01T01:00:00.000Z').rollback_available).toBe(true);
  });
});

describe('buildApprovalPacket', () => {
  it('shows the action, its risk, rationale, effects, resources and expiry; its ref is its content hash', () => {
    const command = RequestApproval.parse({
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: 'att-1',
      approval_id: 'apr-1',
      policy_result_id: 'pr-1',
      action_request: request({ target_resources: ['src', 'https://example.org'] }),
      requested_by: 'agent-1',
      risk_band: 'high',
      reason: 'destructive pattern',
    });
    const packet = buildApprovalPacket(command, '2030-01-01T01:00:00.000Z');
    expect(packet).toEqual({
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: 'att-1',
      action_request_id: 'ar-1',
      action_class: 'execute_command',
      action_summary: 'execute_command: make build',
      risk_band: 'high',
      risk_summary: 'risk high: destructive pattern',
      decision_rationale: 'Proposed by agent-1: build it\nPolicy: destructive pattern',
      evidence_refs: [],
      expected_effects: ['a build'],
      impacted_resources: ['src', 'https://example.org'],
      rollback_available: false,
      expires_at: '2030-01-01T01:00:00.000Z',
      policy_result_ref: 'policy_result:pr-1',
    });
  });

  it('stores the packet with its state witness as one canonical document, addressed by its hash', () => {
    const command = RequestApproval.parse({
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: 'att-1',
      approval_id: 'apr-1',
      policy_result_id: 'pr-1',
      action_request: request({}),
      requested_by: 'agent-1',
      risk_band: 'high',
      reason: 'destructive pattern',
    });
    const witness = { ref: `sha256:${'c'.repeat(64)}`, fingerprints: { src: `dir:${'d'.repeat(64)}` }, observed_at: '2030-01-01T00:00:00.000Z' };
    const packet = buildApprovalPacket(command, '2030-01-01T01:00:00.000Z', witness.ref);
    const bytes = packetDocumentBytes(packetDocument(packet, witness));
    // then the bytes are the RFC 8785 form of { format, packet, state_witness }
    expect(new TextDecoder().decode(bytes)).toBe(canonicalJson({ format: 'writ.approval-packet/1', packet, state_witness: witness }));
    // and the ref names the content hash; only such refs name a stored artifact
    const sha = sha256Hex(bytes);
    expect(packetArtifactRef(sha)).toBe(`artifact:sha256:${sha}`);
    expect(packetArtifactSha256(packetArtifactRef(sha))).toBe(sha);
    expect(packetArtifactSha256(`sha256:${sha}`)).toBeUndefined();
    expect(packetArtifactSha256('artifact:sha256:ABC')).toBeUndefined();
    // without a witness the document holds the packet alone
    expect(packetDocument(packet)).toEqual({ format: 'writ.approval-packet/1', packet });
  });
});
