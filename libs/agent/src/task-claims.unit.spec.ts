import { ActionRequest, BlockedClaimSubmission, DoneClaimSubmission } from '@writ/contracts';
import { compactVerify, importJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { blockedClaim, brief, doneClaim, firstAction } from '../test/samples.js';
import { buildActionRequest } from './action-request.js';
import { generateAgentKey } from './agent-key.js';
import { briefedTaskRequest } from './task-brief.js';
import { claimSubject, signTaskClaim } from './task-claims.js';

describe('signTaskClaim', () => {
  it('given a done claim, when it is signed, then it verifies under the agent key with typ writ-done-claim+jws and carries a DoneClaimSubmission', async () => {
    // given
    const key = await generateAgentKey({ kid: 'agent-1-k1' });
    const now = new Date('2026-01-15T10:21:00Z');
    // when
    const jws = await signTaskClaim('tsk-1', { kind: 'done', claim: doneClaim }, { principalId: 'agent-1', key, now });
    // then
    const { payload, protectedHeader } = await compactVerify(jws, await importJWK(key.publicJwk, 'EdDSA'), { algorithms: ['EdDSA'] });
    expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: 'agent-1-k1', typ: 'writ-done-claim+jws' });
    expect(DoneClaimSubmission.parse(JSON.parse(new TextDecoder().decode(payload)))).toEqual({
      task_id: 'tsk-1',
      claim: doneClaim,
      claimed_by: 'agent-1',
      claimed_at: '2026-01-15T10:21:00.000Z',
    });
  });

  it('given a blocked claim, when it is signed, then its typ is writ-blocked-claim+jws and it goes to claim-blocked', async () => {
    const key = await generateAgentKey({ kid: 'agent-1-k1' });
    const jws = await signTaskClaim('tsk-1', { kind: 'blocked', claim: blockedClaim }, { principalId: 'agent-1', key });
    const { payload, protectedHeader } = await compactVerify(jws, await importJWK(key.publicJwk, 'EdDSA'));
    expect(protectedHeader.typ).toBe('writ-blocked-claim+jws');
    expect(BlockedClaimSubmission.safeParse(JSON.parse(new TextDecoder().decode(payload))).success).toBe(true);
    expect(claimSubject('blocked', 'writ_e2e')).toBe('writ_e2e.qry.orchestrator.claim-blocked');
    expect(claimSubject('done')).toBe('writ.qry.orchestrator.claim-done');
  });

  it('given a done claim missing its evidence, when it is signed, then AGENT_REQUEST_INVALID names the path and nothing is signed', async () => {
    const key = await generateAgentKey({ kid: 'agent-1-k1' });
    const { evidence: _evidence, ...withoutEvidence } = doneClaim;
    await expect(signTaskClaim('tsk-1', { kind: 'done', claim: withoutEvidence as never }, { principalId: 'agent-1', key })).rejects.toMatchObject({
      code: 'AGENT_REQUEST_INVALID',
      details: { issues: [expect.objectContaining({ path: 'claim.evidence' })] },
    });
  });
});

describe('briefedTaskRequest', () => {
  it('given a brief and a first action, when the task request is built, then its TaskSpec is what writ task create builds and ingress accepts', () => {
    // when
    const fields = briefedTaskRequest(brief, firstAction, { profile: 'local_edit_allowed' });
    const request = buildActionRequest(fields, { principalId: 'agent-1' });
    // then
    expect(ActionRequest.parse(request).task).toEqual({
      title: brief.mission,
      goal: brief.purpose,
      policy_profile: 'local_edit_allowed',
      files_owned: ['src/**'],
      brief,
    });
  });

  it('given a brief with an empty purpose, when the task request is built, then the goal is the done criteria', () => {
    expect(briefedTaskRequest({ ...brief, purpose: '' }, firstAction).task?.goal).toBe(brief.done_criteria);
  });

  it('given a brief missing two sections, when the task request is built, then AGENT_REQUEST_INVALID lists both', () => {
    const { mission: _m, verify_command: _v, ...partial } = brief;
    let thrown: { code?: string; details?: { issues: { path: string }[] } } | undefined;
    try {
      briefedTaskRequest(partial as never, firstAction);
    } catch (error) {
      thrown = error as typeof thrown;
    }
    expect(thrown?.code).toBe('AGENT_REQUEST_INVALID');
    expect(thrown?.details?.issues.map((issue) => issue.path).sort()).toEqual(['mission', 'verify_command']);
  });

  it('given a first action naming a task, when the task request is built, then AGENT_REQUEST_INVALID', () => {
    expect(() => briefedTaskRequest(brief, { ...firstAction, task_id: 'tsk-1' } as never)).toThrow(expect.objectContaining({ code: 'AGENT_REQUEST_INVALID' }));
  });
});
