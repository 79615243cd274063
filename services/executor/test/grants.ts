import type { ActionRequest, RunAction } from '@writ/contracts';
import { signClaims, type Ed25519SigningKey } from '@writ/crypto';
import type { RunActionSettings } from '../src/application/run-action.handler.js';

/** The settings of a RunActionHandler built by a test itself (short bounds, the default service principals). */
export const HANDLER_SETTINGS: RunActionSettings = {
  executorId: 'executor-unit',
  principalId: 'writ-executor',
  grantIssuer: 'writ-approval',
  grantAudience: 'writ-executor',
  actionTimeoutMs: 60_000,
  outputCapBytes: 1024,
  hostGraceMs: 5_000,
  claimGraceMs: 10_000,
  claimPollMs: 1_000,
  artifactFileMaxBytes: 1024,
  artifactFilesMax: 8,
};

/** Fixed ids and instants for pure tests (no clock is read). */
export const T0 = new Date('2030-01-01T00:00:00Z');
export const IDS = { task_id: 'task-1', step_id: 'step-1', attempt_id: 'attempt-1' } as const;

export function sampleRequest(overrides: Partial<ActionRequest> = {}): ActionRequest {
  return {
    action_request_id: 'ar-1',
    task_id: IDS.task_id,
    action_class: 'execute_command',
    target_resources: ['out.txt'],
    params: { argv: ['sh', '-c', 'echo hello > out.txt'] },
    expected_effects: ['out.txt'],
    reversibility_hint: 'reversible',
    reason: 'test',
    proposed_by: 'agent-1',
    proposed_at: T0.toISOString(),
    ...overrides,
  };
}

export interface SampleGrant {
  readonly grantId?: string;
  readonly claims?: Record<string, unknown>;
  readonly issuer?: string;
  readonly audience?: string;
  readonly typ?: string;
  readonly issuedAt?: Date;
  readonly expiresAt?: Date;
}

/** Signs sample grant claims with the real crypto: task-1 / step-1 / attempt-1, execute_command on `.`, one use, 5 minutes from T0. */
export async function signSampleGrant(key: Ed25519SigningKey, spec: SampleGrant = {}): Promise<string> {
  const claims = {
    task_id: IDS.task_id,
    step_id: IDS.step_id,
    attempt_id: IDS.attempt_id,
    action_class: 'execute_command',
    resource_scope: { paths: ['.'], hosts: [] },
    max_uses: 1,
    issued_by_principal_id: 'writ-policy',
    policy_result_ref: 'policy_result:pr-1',
    ...spec.claims,
  };
  return signClaims(claims, key, {
    issuer: spec.issuer ?? 'writ-approval',
    audience: spec.audience ?? 'writ-executor',
    subject: 'writ-executor',
    jwtId: spec.grantId ?? 'grant-1',
    issuedAt: spec.issuedAt ?? T0,
    expiresAt: spec.expiresAt ?? new Date(T0.getTime() + 300_000),
    typ: spec.typ ?? 'writ-grant+jwt',
  });
}

export function sampleRunAction(jws: string, overrides: Partial<RunAction> = {}): RunAction {
  return { ...IDS, grant_id: 'grant-1', grant_jws: jws, action_request: sampleRequest(), ...overrides };
}
