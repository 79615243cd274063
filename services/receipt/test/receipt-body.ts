import type { ReceiptBody } from '../src/application/build-receipt.js';

/** A settled command's receipt body (before sealing) signed by `signerRef`, for the pure tests of sealing, verification and admission. */
export const receiptBody = (signerRef: string, overrides: Partial<ReceiptBody> = {}): ReceiptBody => ({
  receipt_id: 'rct-1',
  task_id: 'task-1',
  step_id: 'step-1',
  attempt_id: 'att-1',
  receipt_class: 'command_execution',
  action_request_ref: 'action_request:ar-1',
  input_refs: [],
  environment_ref: null,
  policy_result_ref: 'policy_result:pr-1',
  approval_ref: null,
  capability_grant_ref: 'grant:gnt-1',
  output_refs: [],
  result_code: 'succeeded',
  result_summary: 'succeeded: exited 0',
  created_at: '2030-01-01T00:00:00Z',
  verifiability: 'signed',
  signer_ref: signerRef,
  prev_receipt_hash: null,
  ...overrides,
});
