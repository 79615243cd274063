import type { ActionRequest, CapabilityGrantClaims } from '@writ/contracts';

export const T0_SECONDS = Date.parse('2030-01-01T00:00:00Z') / 1000;

/** A valid ActionRequest; tests copy what they change. */
export function request(overrides: Partial<ActionRequest> = {}): ActionRequest {
  return {
    action_request_id: 'ar-1',
    task_id: 'task-1',
    action_class: 'write_local',
    target_resources: ['src/a.ts'],
    params: { path: 'src/a.ts', content: 'export {};\n' },
    expected_effects: ['src/a.ts rewritten'],
    reversibility_hint: 'reversible',
    reason: 'Fix the bug.',
    proposed_by: 'agent-1',
    proposed_at: '2030-01-01T00:00:00Z',
    ...overrides,
  } as ActionRequest;
}

/** An execute_command request running `argv`. */
export function command(argv: readonly string[], overrides: Partial<ActionRequest> = {}): ActionRequest {
  return request({ action_class: 'execute_command', target_resources: ['.'], params: { argv: [...argv] }, ...overrides });
}

export function claims(overrides: Partial<CapabilityGrantClaims> = {}): CapabilityGrantClaims {
  return {
    iss: 'writ-approval',
    sub: 'executor-1',
    aud: 'writ-executor',
    jti: 'grant-1',
    iat: T0_SECONDS,
    exp: T0_SECONDS + 300,
    task_id: 'task-1',
    step_id: 'step-1',
    attempt_id: 'attempt-1',
    action_class: 'write_local',
    resource_scope: { paths: ['src'], hosts: [] },
    max_uses: 1,
    issued_by_principal_id: 'policy-engine',
    policy_result_ref: 'policy_result:pr-1',
    ...overrides,
  };
}
