import { hasErrorCode, MAX_INGRESS_BYTES } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { actionRequest, fakeJws, storyIds } from '../../test/governed-path.fixture.js';
import { Forwarding } from './forwarding.js';
import type { Upstream } from './ports.js';

const subjects = { submitAction: 't.qry.ingress.submit-action', resolveApproval: 't.qry.approval.resolve' };
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
