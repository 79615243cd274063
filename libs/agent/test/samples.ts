import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { BlockedClaim, Brief, DoneClaim } from '@writ/contracts';
import { CompactSign, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import type { FirstActionFields } from '../src/task-brief.js';

/**
 * Documents the SDK's tests sign and check. Receipts are sealed here exactly as
 * the receipt service seals them (services/receipt, receipt-seal.ts): the RFC
 * 8785 body without receipt_hash and signature, SHA-256 of it, a compact EdDSA
 * JWS (typ writ-receipt+jws) over it, and the same JWS detached as `signature`.
 * Keys are generated at test time; none is stored in the repository.
 */

export const brief: Brief = {
  id: 'brief-01',
  mission: 'Write the greeting.',
  purpose: 'The app greets its users.',
  context: {},
  whats_done: [],
  current_task: 'src/greeting.txt holds "hello"',
  done_criteria: 'src/greeting.txt holds exactly "hello"',
  verify_command: ['sh', '-c', 'test "$(cat src/greeting.txt)" = hello'],
  key_decisions: [],
  spec: { scope: { files_owned: ['src/**'] } },
  relevant_memories: [],
  ship: false,
  audit_gates: [],
  lifecycle: 'ephemeral',
};

export const firstAction: FirstActionFields = {
  step: { kind: 'edit', title: 'write the greeting' },
  action_class: 'execute_command',
  target_resources: ['src/greeting.txt'],
  params: { argv: ['sh', '-c', 'mkdir -p src && echo hello > src/greeting.txt'] },
  expected_effects: ['src/greeting.txt holds hello'],
  reversibility_hint: 'reversible',
  reason: 'the brief asks for the greeting',
};

export const doneClaim: DoneClaim = {
  agent: 'agent-1',
  status: 'done_clean',
  started_at: '2026-01-15T10:00:00Z',
  finished_at: '2026-01-15T10:20:00Z',
  mission: 'Write the greeting.',
  evidence: { verify_command: ['sh', '-c', 'test "$(cat src/greeting.txt)" = hello'], verify_exit_code: 0, verify_stdout: '', verify_stderr: '', artefacts: [] },
  regressions: [],
  pending_actions: [],
};

export const blockedClaim: BlockedClaim = {
  session: 'agent-1',
  blocked_at: '2026-01-15T10:05:00Z',
  reason: 'semantic_ambiguity',
  question: 'The brief says "greeting" and the mock-up shows "Hello!"; which text is meant?',
  best_guess: 'hello, as the done criteria say',
  fallback_action: 'Writing "hello", the text the done criteria check.',
  can_resume_without_answer: true,
  human_required_for: null,
};

/** A receipt service's signing key: the private key and its public JWK as GET /v1/keys lists it. */
export interface ServiceKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly jwk: Record<string, unknown>;
}

export async function serviceKey(kid: string): Promise<ServiceKey> {
  const { privateKey, publicKey } = await generateKeyPair('Ed25519');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' } };
}

/** A receipt body of `task` for `actionRequestId`, chained after `prev` (null: the task's first). */
export function receiptBody(overrides: { receiptId: string; taskId: string; actionRequestId: string; prev: string | null; signerRef: string }): Record<string, unknown> {
  return {
    receipt_id: overrides.receiptId,
    task_id: overrides.taskId,
    step_id: 'stp-1',
    attempt_id: 'att-1',
    receipt_class: 'command_execution',
    action_request_ref: `action_request:${overrides.actionRequestId}`,
    input_refs: [],
    environment_ref: 'artifact:env-1',
    policy_result_ref: 'policy_result:pr-1',
    approval_ref: null,
    capability_grant_ref: 'grant:grt-1',
    output_refs: ['artifact:out-1'],
    result_code: 'succeeded',
    result_summary: 'exited 0',
    created_at: '2026-01-15T10:00:00Z',
    verifiability: 'signed',
    signer_ref: overrides.signerRef,
    prev_receipt_hash: overrides.prev,
  };
}

/** Seals a body as the receipt service does: `{ receipt (with receipt_hash, signature), jws }`. */
export async function sealReceipt(body: Record<string, unknown>, key: ServiceKey, typ = 'writ-receipt+jws'): Promise<{ receipt: Record<string, unknown>; jws: string }> {
  const canonical = canonicalize(body) as string;
  const jws = await new CompactSign(new TextEncoder().encode(canonical)).setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ }).sign(key.privateKey);
  const [header, , signature] = jws.split('.');
  return { receipt: { ...body, receipt_hash: createHash('sha256').update(canonical).digest('hex'), signature: `${header}..${signature}` }, jws };
}
