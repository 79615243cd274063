import { ActionRequest } from '@writ/contracts';
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { buildActionRequest, ingressSubject, newTaskId, signActionRequest, type ActionRequestFields } from './action-request.js';
import { generateAgentKey } from './agent-key.js';
import { isAgentError } from './agent-errors.js';

const fields: ActionRequestFields = {
  task: { title: 'example', goal: 'write a greeting', policy_profile: 'local_edit_allowed', files_owned: ['**'] },
  step: { kind: 'edit', title: 'write a greeting' },
  action_class: 'execute_command',
  target_resources: ['hello.txt'],
  params: { argv: ['sh', '-c', 'echo hello > hello.txt'] },
  expected_effects: ['hello.txt holds a greeting'],
  reversibility_hint: 'reversible',
  reason: 'example',
};

const segment = (jws: string, index: number): string => jws.split('.')[index] ?? '';

describe('signActionRequest', () => {
  it('given a built request, when it is signed, then the JWS verifies with jose under the public JWK and carries a valid ActionRequest', async () => {
    // given
    const key = await generateAgentKey({ kid: 'agent-1-k1' });
    const request = buildActionRequest(fields, { principalId: 'agent-1', now: new Date('2026-01-15T10:00:00Z') });
    // when
    const signed = await signActionRequest(request, key);
    // then: exactly the form ingress verifies: EdDSA, kid, no typ; the payload the request's JSON
    expect(decodeProtectedHeader(signed.jws)).toEqual({ alg: 'EdDSA', kid: 'agent-1-k1' });
    const verified = await compactVerify(signed.jws, await importJWK(key.publicJwk, 'EdDSA'), { algorithms: ['EdDSA'] });
    const payload: unknown = JSON.parse(new TextDecoder().decode(verified.payload));
    expect(ActionRequest.parse(payload)).toEqual(request);
    expect(payload).toMatchObject({ proposed_by: 'agent-1', proposed_at: '2026-01-15T10:00:00.000Z' });
    expect(signed).toMatchObject({ principalId: 'agent-1', idempotencyKey: request.action_request_id });
    expect(request.action_request_id).toMatch(/^ar-[0-9a-f-]{36}$/);
  });

  it('given a signed request, when its payload is changed, then the signature no longer verifies', async () => {
    // given
    const key = await generateAgentKey({ kid: 'agent-1-k1' });
    const signed = await signActionRequest(buildActionRequest(fields, { principalId: 'agent-1' }), key);
    const tampered = { ...signed.request, params: { argv: ['rm', '-rf', '/'] } };
    const forged = `${segment(signed.jws, 0)}.${Buffer.from(JSON.stringify(tampered)).toString('base64url')}.${segment(signed.jws, 2)}`;
    // when / then
    await expect(compactVerify(forged, await importJWK(key.publicJwk, 'EdDSA'), { algorithms: ['EdDSA'] })).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });

  it('given a signed request, when it is checked under another key, then it does not verify', async () => {
    const signed = await signActionRequest(buildActionRequest(fields, { principalId: 'agent-1' }), await generateAgentKey({ kid: 'agent-1-k1' }));
    const other = await generateAgentKey({ kid: 'agent-1-k1' });
    await expect(compactVerify(signed.jws, await importJWK(other.publicJwk, 'EdDSA'), { algorithms: ['EdDSA'] })).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });
});

describe('buildActionRequest', () => {
  it('given a request that breaks its contract in two places, when it is built, then AGENT_REQUEST_INVALID names both paths', () => {
    // given: no argv for a command, and both task and task_id
    const broken = { ...fields, task_id: 'tsk-1', params: {} } as ActionRequestFields;
    // when
    let thrown: unknown;
    try {
      buildActionRequest(broken, { principalId: 'agent-1' });
    } catch (error) {
      thrown = error;
    }
    // then
    expect(isAgentError(thrown, 'AGENT_REQUEST_INVALID')).toBe(true);
    const paths = ((thrown as { details: { issues: { path: string }[] } }).details.issues ?? []).map((issue) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(['task', 'params.argv']));
  });

  it('given a principal id that is not an Id, when a request is built, then proposed_by is refused', () => {
    expect(() => buildActionRequest(fields, { principalId: 'agent.1' })).toThrow(expect.objectContaining({ code: 'AGENT_REQUEST_INVALID' }));
  });
});

describe('ids and subjects', () => {
  it('given a principal and key, when the new task id is derived, then it is tsk- and 32 hex of SHA-256(principal:key), as ingress derives it', () => {
    // printf 'agent-1:ar-1' | sha256sum
    expect(newTaskId('agent-1', 'ar-1')).toBe('tsk-c3869a487169efb65a83e5f78da2ae67');
    expect(newTaskId('agent-1', 'ar-1')).not.toBe(newTaskId('agent-2', 'ar-1'));
    expect(ingressSubject('agent-1', 'writ_e2e')).toBe('writ_e2e.ingress.action.agent-1');
  });
});
