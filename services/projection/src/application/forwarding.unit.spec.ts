import { hasErrorCode, MAX_INGRESS_BYTES } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { actionRequest, fakeJws, storyIds } from '../../test/governed-path.fixture.js';
import { Forwarding } from './forwarding.js';
import type { Upstream } from './ports.js';

const subjects = {
  submitAction: 't.qry.ingress.submit-action',
  resolveApproval: 't.qry.approval.resolve',
  revokeGrant: 't.qry.approval.revoke-grant',
  claims: { done: 't.qry.orchestrator.claim-done', blocked: 't.qry.orchestrator.claim-blocked', correction: 't.qry.orchestrator.claim-correction' },
  knowledge: { working_state: 't.qry.orchestrator.revise-working-state', belief: 't.qry.orchestrator.change-belief' },
  submitMessage: 't.qry.ingress.submit-message',
};
const ids = storyIds('fw1');

class RecordingUpstream implements Upstream {
  readonly requests: Array<{ subject: string; payload: unknown }> = [];
  constructor(private readonly reply: unknown = { ingress_id: 'ing-1', status: 'accepted' }) {}
  async request(subject: string, payload: unknown): Promise<unknown> {
    this.requests.push({ subject, payload });
    return this.reply;
  }
}

const code = (c: string) => (error: unknown) => hasErrorCode(error, c);

describe('Forwarding.submitAction', () => {
  const jws = fakeJws(actionRequest(ids));

  it('forwards the raw JWS with the action_request_id as the default idempotency key', async () => {
    const upstream = new RecordingUpstream();
    const outcome = await new Forwarding(upstream, subjects).submitAction({ body: `${jws}\n`, idempotencyKey: undefined });
    expect(outcome).toEqual({ kind: 'accepted', reply: { ingress_id: 'ing-1', status: 'accepted' } });
    expect(upstream.requests).toEqual([{ subject: subjects.submitAction, payload: { jws, idempotency_key: ids.actionRequest } }]);
  });

  it('takes SubmitAction JSON documents, the Idempotency-Key header first and Writ-Principal', async () => {
    const upstream = new RecordingUpstream();
    const forwarding = new Forwarding(upstream, subjects);
    await forwarding.submitAction({ body: { jws }, idempotencyKey: 'key-42', principalId: ids.principal });
    await forwarding.submitAction({ body: { jws, idempotency_key: 'doc-key', principal_id: 'agent-2' }, idempotencyKey: undefined });
    expect(upstream.requests.map((r) => r.payload)).toEqual([
      { jws, idempotency_key: 'key-42', principal_id: ids.principal },
      { jws, idempotency_key: 'doc-key', principal_id: 'agent-2' },
    ]);
  });

  it('forwards what only ingress can judge: an unreadable JWS (keyed by its digest) and an oversized one', async () => {
    const upstream = new RecordingUpstream();
    const forwarding = new Forwarding(upstream, subjects);
    await forwarding.submitAction({ body: 'a.b.c', idempotencyKey: undefined });
    const huge = 'x'.repeat(MAX_INGRESS_BYTES + 1);
    await forwarding.submitAction({ body: huge, idempotencyKey: 'k' });
    expect(upstream.requests.map((r) => (r.payload as { idempotency_key: string }).idempotency_key)).toEqual([`sha256:${sha256Hex('a.b.c')}`, 'k']);
  });

  it('refuses a body without a JWS and unusable headers, without forwarding', async () => {
    const upstream = new RecordingUpstream();
    const forwarding = new Forwarding(upstream, subjects);
    await expect(forwarding.submitAction({ body: {}, idempotencyKey: undefined })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(forwarding.submitAction({ body: '  ', idempotencyKey: undefined })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(forwarding.submitAction({ body: jws, idempotencyKey: 'bad\nkey' })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(forwarding.submitAction({ body: jws, idempotencyKey: undefined, principalId: 'not an id' })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    expect(upstream.requests).toEqual([]);
  });

  it('reports a duplicate as such, and turns a rejection in the reply into its code', async () => {
    const duplicate = new RecordingUpstream({ ingress_id: 'ing-1', status: 'duplicate' });
    expect((await new Forwarding(duplicate, subjects).submitAction({ body: jws, idempotencyKey: undefined })).kind).toBe('duplicate');
    const rejected = new RecordingUpstream({ ingress_id: 'ing-1', status: 'rejected', reason_code: 'INGRESS_STALE', message: 'too old' });
    await expect(new Forwarding(rejected, subjects).submitAction({ body: jws, idempotencyKey: undefined })).rejects.toSatisfy(code('INGRESS_STALE'));
  });

  it('refuses a reply that is not an object', async () => {
    const upstream = new RecordingUpstream('ok');
    await expect(new Forwarding(upstream, subjects).submitAction({ body: jws, idempotencyKey: undefined })).rejects.toSatisfy(code('PROJECTION_UPSTREAM_INVALID_REPLY'));
  });
});

describe('Forwarding.resolveApproval', () => {
  const resolution = (decision: string, approval = 'approval-1') =>
    fakeJws({ approval_id: approval, decision, resolved_by: 'director-1', resolved_at: '2030-01-01T00:00:00Z' }, 'director-k1');

  it('forwards {approval_id, task_id, resolution_jws} as the contract spells it', async () => {
    const upstream = new RecordingUpstream({ approval_id: 'approval-1', task_id: 'task-1', status: 'granted' });
    const jws = resolution('grant');
    const reply = await new Forwarding(upstream, subjects).resolveApproval({ approvalId: 'approval-1', decision: 'grant', body: { task_id: 'task-1', resolution_jws: jws } });
    expect(reply).toEqual({ approval_id: 'approval-1', task_id: 'task-1', status: 'granted' });
    expect(upstream.requests).toEqual([{ subject: subjects.resolveApproval, payload: { approval_id: 'approval-1', task_id: 'task-1', resolution_jws: jws } }]);
  });

  it('refuses a URL that contradicts the signed decision or approval, or a body without its task, without forwarding', async () => {
    const upstream = new RecordingUpstream();
    const forwarding = new Forwarding(upstream, subjects);
    const body = (jws: string) => ({ task_id: 'task-1', resolution_jws: jws });
    await expect(forwarding.resolveApproval({ approvalId: 'approval-1', decision: 'grant', body: body(resolution('deny')) })).rejects.toSatisfy(code('PROJECTION_DECISION_MISMATCH'));
    await expect(forwarding.resolveApproval({ approvalId: 'approval-1', decision: 'deny', body: body(resolution('deny', 'approval-2')) })).rejects.toSatisfy(
      code('PROJECTION_DECISION_MISMATCH'),
    );
    await expect(forwarding.resolveApproval({ approvalId: 'approval-1', decision: 'deny', body: { resolution_jws: resolution('deny') } })).rejects.toSatisfy(
      code('PROJECTION_REQUEST_INVALID'),
    );
    await expect(forwarding.resolveApproval({ approvalId: 'approval-1', decision: 'deny', body: { task_id: 'bad id', resolution_jws: resolution('deny') } })).rejects.toSatisfy(
      code('PROJECTION_REQUEST_INVALID'),
    );
    await expect(forwarding.resolveApproval({ approvalId: 'approval.1', decision: 'deny', body: body(resolution('deny')) })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(forwarding.resolveApproval({ approvalId: 'approval-1', decision: 'deny', body: 'text' })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    expect(upstream.requests).toEqual([]);
  });
});

describe('Forwarding.revokeGrant', () => {
  const revocation = (grant = 'grant-1', task = 'task-1') =>
    fakeJws({ grant_id: grant, task_id: task, reason: 'stop', revoked_by: 'director-1', revoked_at: '2030-01-01T00:00:00Z' }, 'director-k1');

  it('given a signed revocation, when it is posted to its grant, then {grant_id, task_id, revocation_jws} goes to the approval service and its answer comes back', async () => {
    // given
    const upstream = new RecordingUpstream({ grant_id: 'grant-1', task_id: 'task-1', status: 'revoked', revoked_by: 'director-1', revoked_at: '2030-01-01T00:00:00Z' });
    const jws = revocation();
    // when
    const reply = await new Forwarding(upstream, subjects).revokeGrant({ grantId: 'grant-1', body: { task_id: 'task-1', revocation_jws: jws } });
    // then
    expect(reply['status']).toBe('revoked');
    expect(upstream.requests).toEqual([{ subject: subjects.revokeGrant, payload: { grant_id: 'grant-1', task_id: 'task-1', revocation_jws: jws } }]);
  });

  it('given a revocation of another grant or task, a malformed id or body, when it is posted, then it is refused with its code and nothing is forwarded', async () => {
    // given
    const upstream = new RecordingUpstream();
    const forwarding = new Forwarding(upstream, subjects);
    // when / then
    await expect(forwarding.revokeGrant({ grantId: 'grant-2', body: { task_id: 'task-1', revocation_jws: revocation() } })).rejects.toSatisfy(code('PROJECTION_REQUEST_MISMATCH'));
    await expect(forwarding.revokeGrant({ grantId: 'grant-1', body: { task_id: 'task-2', revocation_jws: revocation() } })).rejects.toSatisfy(code('PROJECTION_REQUEST_MISMATCH'));
    await expect(forwarding.revokeGrant({ grantId: 'not an id', body: { task_id: 'task-1', revocation_jws: revocation() } })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(forwarding.revokeGrant({ grantId: 'grant-1', body: { revocation_jws: revocation() } })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(forwarding.revokeGrant({ grantId: 'grant-1', body: 'text' })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    expect(upstream.requests).toEqual([]);
  });

  it("given the approval service's refusal in the reply, when it comes back, then it is that code", async () => {
    const refused = new RecordingUpstream({ status: 'rejected', code: 'APPROVAL_SIGNER_NOT_ALLOWED', message: 'not a director' });
    await expect(new Forwarding(refused, subjects).revokeGrant({ grantId: 'grant-1', body: { task_id: 'task-1', revocation_jws: revocation() } })).rejects.toSatisfy(
      code('APPROVAL_SIGNER_NOT_ALLOWED'),
    );
  });
});

describe('Forwarding.submitClaim', () => {
  const claim = (task = 'task-1') => fakeJws({ task_id: task, claim: { status: 'done_clean' }, claimed_by: 'agent-1', claimed_at: '2030-01-01T00:00:00Z' }, 'agent-k1');

  it('given a signed claim of each kind, when it is posted to its task, then {task_id, claim_jws} goes to that kind\'s subject', async () => {
    // given
    const upstream = new RecordingUpstream({ task_id: 'task-1', claim_id: 'dcl-1', kind: 'done', status: 'verifying' });
    const forwarding = new Forwarding(upstream, subjects);
    const jws = claim();
    // when
    for (const kind of ['done', 'blocked', 'correction']) await forwarding.submitClaim({ taskId: 'task-1', kind, body: { claim_jws: jws } });
    // then
    expect(upstream.requests).toEqual(
      (['done', 'blocked', 'correction'] as const).map((kind) => ({ subject: subjects.claims[kind], payload: { task_id: 'task-1', claim_jws: jws } })),
    );
  });

  it('given an unknown kind, a claim about another task or no claim, when it is posted, then it is refused with its code and nothing is forwarded', async () => {
    // given
    const upstream = new RecordingUpstream();
    const forwarding = new Forwarding(upstream, subjects);
    // when / then
    await expect(forwarding.submitClaim({ taskId: 'task-1', kind: 'finished', body: { claim_jws: claim() } })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(forwarding.submitClaim({ taskId: 'task-2', kind: 'done', body: { claim_jws: claim() } })).rejects.toSatisfy(code('PROJECTION_REQUEST_MISMATCH'));
    await expect(forwarding.submitClaim({ taskId: 'task-1', kind: 'done', body: {} })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(forwarding.submitClaim({ taskId: '../x', kind: 'done', body: { claim_jws: claim() } })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    expect(upstream.requests).toEqual([]);
  });
});

describe('Forwarding.submitKnowledge', () => {
  const request = (task = 'task-1') => fakeJws({ task_id: task, request_id: 'req-1', expected_revision: 0, set: [], remove: [], revised_by: 'agent-1', revised_at: '2030-01-01T00:00:00Z' }, 'agent-k1');

  it('given a signed working state revision and a belief change, when posted to their task, then {task_id, request_jws} goes to each kind\'s subject', async () => {
    // given
    const upstream = new RecordingUpstream({ task_id: 'task-1', request_id: 'req-1', status: 'accepted', revision: 1, duplicate: false });
    const forwarding = new Forwarding(upstream, subjects);
    const jws = request();
    // when
    await forwarding.submitKnowledge({ taskId: 'task-1', kind: 'working_state', body: { request_jws: jws } });
    await forwarding.submitKnowledge({ taskId: 'task-1', kind: 'belief', body: { request_jws: jws } });
    // then
    expect(upstream.requests).toEqual([
      { subject: subjects.knowledge.working_state, payload: { task_id: 'task-1', request_jws: jws } },
      { subject: subjects.knowledge.belief, payload: { task_id: 'task-1', request_jws: jws } },
    ]);
  });

  it('given a request about another task, no request or a bad task id, when posted, then it is refused with its code and nothing is forwarded', async () => {
    const upstream = new RecordingUpstream();
    const forwarding = new Forwarding(upstream, subjects);
    await expect(forwarding.submitKnowledge({ taskId: 'task-2', kind: 'working_state', body: { request_jws: request() } })).rejects.toSatisfy(code('PROJECTION_REQUEST_MISMATCH'));
    await expect(forwarding.submitKnowledge({ taskId: 'task-1', kind: 'belief', body: { jws: request() } })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(forwarding.submitKnowledge({ taskId: '../x', kind: 'belief', body: { request_jws: request() } })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    expect(upstream.requests).toEqual([]);
  });
});

describe('Forwarding.submitMessage', () => {
  const message = fakeJws({ message_id: 'm-1', conversation_id: 'c-1', kind: 'note', text: 'use staging', sent_by: 'agent-1', sent_at: '2030-01-01T00:00:00Z' }, 'agent-k1');

  it('given a signed message, when posted, then {message_jws} goes to ingress and its answer comes back; a refusal in the answer is its error', async () => {
    const upstream = new RecordingUpstream({ ingress_id: 'msg-1', resolution: 'chat_only', duplicate: false });
    await expect(new Forwarding(upstream, subjects).submitMessage({ message_jws: message })).resolves.toMatchObject({ ingress_id: 'msg-1' });
    expect(upstream.requests).toEqual([{ subject: subjects.submitMessage, payload: { message_jws: message } }]);
    const refused = new RecordingUpstream({ status: 'rejected', code: 'INGRESS_MESSAGE_TASK_UNKNOWN', message: 'no task' });
    await expect(new Forwarding(refused, subjects).submitMessage({ message_jws: message })).rejects.toSatisfy(code('INGRESS_MESSAGE_TASK_UNKNOWN'));
  });

  it('given no message_jws, when posted, then PROJECTION_REQUEST_INVALID and nothing is forwarded', async () => {
    const upstream = new RecordingUpstream();
    await expect(new Forwarding(upstream, subjects).submitMessage({ jws: message })).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    await expect(new Forwarding(upstream, subjects).submitMessage('not json')).rejects.toSatisfy(code('PROJECTION_REQUEST_INVALID'));
    expect(upstream.requests).toEqual([]);
  });
});
