import { headers as natsHeaders } from '@nats-io/transport-node';
import type { EvaluatePolicyDryRunReply } from '@writ/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRig, disposeRig, startApp, type Rig } from '../../test/rig.js';
import { commandRequest, taskIds, writeRequest } from '../../test/task-fixtures.js';

/**
 * The dry-run responder answers from a subscription callback, synchronously as
 * the client parses each request: these check what that path must keep from
 * the bus (one reply per request, to its own requester; traced requests;
 * error replies with their code header), on the real NATS.
 */

let rig: Rig;
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

beforeAll(async () => {
  rig = await createRig('dry-run');
  await startApp(rig);
});

afterAll(async () => {
  await disposeRig(rig);
});

describe('DryRunResponder', () => {
  it('given many requests in flight at once, when each is answered, then every reply is the evaluation of its own request', async () => {
    const requests = Array.from({ length: 64 }, (_, i) => ({ ...writeRequest(taskIds(`conc-${i}`)), action_request_id: `ar-conc-${i}` }));
    const replies = await Promise.all(
      requests.map((action_request) => rig.bus.request<EvaluatePolicyDryRunReply>(rig.config.subjects.evaluateDryRun, { action_request, profile_id: 'readonly_analysis', files_owned: ['**'] })),
    );
    replies.forEach((reply, i) => {
      expect(reply.outcome).toBe('downgrade');
      expect(reply.downgrade?.action_request.action_request_id).toBe(`ar-conc-${i}-dg`);
    });
  });

  it('given a request carrying W3C trace context, then it is answered like one without', async () => {
    const payload = JSON.stringify({ action_request: commandRequest(taskIds('traced'), ['rm', '-rf', 'build']), profile_id: 'local_edit_allowed', files_owned: ['**'] });
    const headers = natsHeaders();
    headers.set('traceparent', TRACEPARENT);
    const traced = await rig.nc.request(rig.config.subjects.evaluateDryRun, payload, { timeout: 5_000, headers });
    const plain = await rig.nc.request(rig.config.subjects.evaluateDryRun, payload, { timeout: 5_000 });
    expect(traced.headers?.get('Writ-Error-Code') ?? '').toBe('');
    expect(traced.string()).toBe(plain.string());
    expect(traced.json<EvaluatePolicyDryRunReply>()).toMatchObject({ outcome: 'require_approval', matched_rules: ['destructive_command'] });
  });

  it('given a traced request that is refused, then the refusal carries its code in the header and the body', async () => {
    const headers = natsHeaders();
    headers.set('traceparent', TRACEPARENT);
    const payload = JSON.stringify({ action_request: commandRequest(taskIds('traced-bad'), ['true']), profile_id: 'no_such_profile', files_owned: [] });
    const reply = await rig.nc.request(rig.config.subjects.evaluateDryRun, payload, { timeout: 5_000, headers });
    expect(reply.headers?.get('Writ-Error-Code')).toBe('POLICY_PROFILE_UNKNOWN');
    expect(reply.json()).toMatchObject({ code: 'POLICY_PROFILE_UNKNOWN' });
  });

  it('given a malformed request among valid ones, then only it is refused and the responder keeps answering', async () => {
    const bad = rig.nc.request(rig.config.subjects.evaluateDryRun, '{"action_request":', { timeout: 5_000 });
    const good = rig.bus.request<EvaluatePolicyDryRunReply>(rig.config.subjects.evaluateDryRun, { action_request: commandRequest(taskIds('after-bad'), ['true']), profile_id: 'local_edit_allowed', files_owned: ['**'] });
    expect((await bad).headers?.get('Writ-Error-Code')).toBe('BUS_PAYLOAD_INVALID');
    expect((await good).outcome).toBe('allow');
  });
});
