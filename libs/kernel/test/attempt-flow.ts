import type { ActionRequest } from '@writ/contracts';
import { at } from './decider-spec.js';
import { request } from './samples.js';
import type { AttemptCommand, ReplacedGrant } from '../src/attempt/attempt.decider.js';
import type { PolicyDecision } from '../src/attempt/attempt.events.js';

/** Builders of attempt commands at `seconds` after T0. */
export const A = {
  create: (s = 0): AttemptCommand => ({
    type: 'create-attempt',
    data: { attempt_id: 'attempt-1', task_id: 'task-1', step_id: 'step-1', attempt_no: 1, idempotency_key: 'idem-1' },
    metadata: { now: at(s) },
  }),
  lease: (s = 1): AttemptCommand => ({ type: 'lease-workspace', data: { workspace_lease_ref: 'lease:l-1' }, metadata: { now: at(s) } }),
  compile: (s = 2): AttemptCommand => ({ type: 'compile-context', data: {}, metadata: { now: at(s) } }),
  reason: (s = 3): AttemptCommand => ({ type: 'start-reasoning', data: { context_pack_ref: 'artifact:ctx-1' }, metadata: { now: at(s) } }),
  submit: (s = 4, req: ActionRequest = request()): AttemptCommand => ({ type: 'submit-action', data: { action_request: req }, metadata: { now: at(s) } }),
  policy: (s: number, policy: Partial<PolicyDecision> & Pick<PolicyDecision, 'outcome'>, extra: object = {}): AttemptCommand => ({
    type: 'record-policy-result',
    data: {
      policy: { policy_result_id: 'pr-1', risk_band: 'moderate', profile_id: 'local_edit_allowed', policy_version: '1', witness_required: false, ...policy },
      ...extra,
    },
    metadata: { now: at(s) },
  }),
  resolve: (s: number, data: object): AttemptCommand => ({ type: 'record-approval-resolution', data: { approval_id: 'approval-1', ...data }, metadata: { now: at(s) } }) as AttemptCommand,
  drift: (s: number, data: object): AttemptCommand => ({ type: 'report-drift', data, metadata: { now: at(s) } }) as AttemptCommand,
  grant: (s: number, grant_id = 'grant-1', expiresIn = 300): AttemptCommand => ({ type: 'attach-grant', data: { grant_id, expires_at: at(s + expiresIn) }, metadata: { now: at(s) } }),
  execute: (s: number, grant_id = 'grant-1'): AttemptCommand => ({ type: 'start-execution', data: { grant_id }, metadata: { now: at(s) } }),
  /** A renewal `grant_id` in place of `replaces` (the held grant), whose uses stand as `uses` say. */
  renew: (s: number, grant_id = 'grant-2', replaces: Partial<ReplacedGrant> = {}, expiresIn = 600): AttemptCommand => ({
    type: 'attach-renewal',
    data: { grant_id, expires_at: at(s + expiresIn), replaces: { grant_id: 'grant-1', revoked: false, uses: [{ use_no: 1, settlement: 'not_run' }], ...replaces } },
    metadata: { now: at(s) },
  }),
  outcome: (s: number, outcome: 'completed' | 'errored' | 'unknown'): AttemptCommand => ({
    type: 'report-execution-outcome',
    data: { outcome, output_refs: ['artifact:out-1'] },
    metadata: { now: at(s) },
  }),
  unknownReceipt: (s: number): AttemptCommand => ({ type: 'record-unknown-outcome-receipt', data: { receipt_ref: 'receipt:unknown-1' }, metadata: { now: at(s) } }),
  settle: (s: number, result_code: 'succeeded' | 'failed', evidence_refs: string[] = []): AttemptCommand => ({
    type: 'settle-observation',
    data: { result_code, evidence_refs },
    metadata: { now: at(s) },
  }),
  receipt: (s: number): AttemptCommand => ({ type: 'record-receipt', data: { receipt_ref: 'receipt:r-1' }, metadata: { now: at(s) } }),
  cancel: (s: number): AttemptCommand => ({ type: 'cancel-attempt', data: { reason: 'stop' }, metadata: { now: at(s) } }),
  fail: (s: number): AttemptCommand => ({ type: 'fail-attempt', data: { reason_code: 'lease_lost', reason: 'the lease was lost' }, metadata: { now: at(s) } }),
  supersede: (s: number): AttemptCommand => ({ type: 'supersede-attempt', data: { superseded_by_attempt_id: 'attempt-2' }, metadata: { now: at(s) } }),
};
