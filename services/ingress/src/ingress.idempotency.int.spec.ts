import { IngressAccepted, IngressRejected, type ActionRequest } from '@writ/contracts';
import { generateEd25519Key, signJws } from '@writ/crypto';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRequest, idsOf, ingressOutcome, publishRaw, registerPrincipal, sign, startTestIngress, taskSubjectCount, type TestAgent, type TestIngress } from '../test/fixtures.js';
import type { IngressReply } from './application/receive-action.handler.js';

/**
 * Idempotency keys belong to the principal that authenticated with them
 * (DESIGN invariant 9), against the real NATS: a request that fails
 * authentication reserves nothing, "duplicate" is answered only for the same
 * bytes, another body under a key already held is an explicit
 * INGRESS_IDEMPOTENCY_CONFLICT, and JetStream's stream-wide msg-id dedupe
 * cannot drop one principal's request because of another's.
 */
let t: TestIngress;
let victim: TestAgent;
let squatter: TestAgent;

beforeAll(async () => {
  t = await startTestIngress();
  victim = await registerPrincipal(t.store);
  squatter = await registerPrincipal(t.store);
});

afterAll(async () => {
  await t?.stop();
});

const subjectOf = (principalId: string) => t.config.subjects.ingressAction(principalId);

async function post(body: string, headers: Record<string, string>): Promise<{ status: number; reply: IngressReply }> {
  const response = await fetch(`${t.ingress.url}/v1/actions`, { method: 'POST', headers: { 'content-type': 'application/jose', ...headers }, body });
  return { status: response.status, reply: (await response.json()) as IngressReply };
}

/** A JWS that claims to be `request` of `principal` but is signed by a key the squatter made under the victim's kid. */
async function forgedAs(principal: TestAgent, request: ActionRequest): Promise<string> {
  return signJws(JSON.stringify(request), await generateEd25519Key({ kid: principal.key.kid }));
}

/** Who holds the key (`ingress.key_claimed` on `idk-…`), if anyone. */
async function keyHolder(principal: string, key: string): Promise<string | undefined> {
  const events = await t.store.readEntity('ingress', idsOf(principal, key, '').keyClaimId);
  return (events[0]?.event.payload as { ingress_id?: string } | undefined)?.ingress_id;
}

describe('HTTP POST /v1/actions: an idempotency key is the authenticated principal’s', () => {
  it("given an unauthenticated POST carrying the victim's idempotency key and principal, when the victim's genuine request arrives under that key, then it is accepted (not a silent duplicate) and the key is the victim's", async () => {
    // given
    const genuine = actionRequest(victim.id);
    const key = genuine.action_request_id;
    const squat = await post(await forgedAs(victim, genuine), { 'idempotency-key': key, 'writ-principal': victim.id });
    expect(squat).toMatchObject({ status: 422, reply: { status: 'rejected', reason_code: 'INGRESS_SIGNATURE_INVALID' } });
    expect(await keyHolder(victim.id, key)).toBeUndefined();
    // when
    const jws = await sign(genuine, victim.key);
    const answer = await post(jws, { 'idempotency-key': key, 'writ-principal': victim.id });
    // then
    const ids = idsOf(victim.id, key, jws);
    expect(answer).toEqual({ status: 202, reply: { ingress_id: ids.ingressId, status: 'accepted', action_request_id: key, task_id: ids.newTaskId } });
    expect(squat.reply.ingress_id).not.toBe(ids.ingressId);
    expect(await keyHolder(victim.id, key)).toBe(ids.ingressId);
  });

  it('given a forged request with no key header naming the victim’s action_request_id, then the genuine one that follows is still accepted', async () => {
    const genuine = actionRequest(victim.id);
    expect((await post(await forgedAs(victim, genuine), {})).reply.reason_code).toBe('INGRESS_SIGNATURE_INVALID');

    const answer = await post(await sign(genuine, victim.key), {});
    expect(answer).toMatchObject({ status: 202, reply: { status: 'accepted', action_request_id: genuine.action_request_id } });
  });

  it('given an accepted request, when the same bytes come again under the key, then it is a duplicate answered from the record; when other bytes of the same principal come under it, then INGRESS_IDEMPOTENCY_CONFLICT (409), recorded, and no second task', async () => {
    // given
    const first = actionRequest(victim.id);
    const key = uniqueName('key');
    const jws = await sign(first, victim.key);
    const accepted = await post(jws, { 'idempotency-key': key });
    expect(accepted.reply.status).toBe('accepted');
    const tasksBefore = await taskSubjectCount(t.nc, t.config);
    // when the same bytes come again
    const again = await post(jws, { 'idempotency-key': key });
    // then
    expect(again).toEqual({ status: 200, reply: { ...accepted.reply, status: 'duplicate' } });
    // when another request of the victim comes under the same key
    const other = await sign(actionRequest(victim.id), victim.key);
    const conflict = await post(other, { 'idempotency-key': key });
    // then
    expect(conflict).toMatchObject({ status: 409, reply: { status: 'rejected', reason_code: 'INGRESS_IDEMPOTENCY_CONFLICT' } });
    expect(conflict.reply.message).toContain(accepted.reply.ingress_id);
    const recorded = await ingressOutcome(t.store, idsOf(victim.id, key, other).ingressId);
    expect(recorded.map((event) => event.event_type)).toEqual(['ingress.received', 'ingress.rejected']);
    expect(IngressRejected.parse(recorded[1]!.payload).reason_code).toBe('INGRESS_IDEMPOTENCY_CONFLICT');
    expect(await taskSubjectCount(t.nc, t.config)).toBe(tasksBefore);
    // and the conflicting request, sent again, is a duplicate of its own refusal, not of the accepted request
    expect((await post(other, { 'idempotency-key': key })).reply).toMatchObject({ status: 'duplicate', reason_code: 'INGRESS_IDEMPOTENCY_CONFLICT' });
  });

  it('given an authenticated request refused after its signature verified (stale), then it holds its key: a corrected request under that key is a conflict, not a duplicate of the refusal', async () => {
    const key = uniqueName('key');
    const stale = await post(await sign(actionRequest(victim.id, { proposed_at: new Date(Date.now() - 3_600_000).toISOString() }), victim.key), { 'idempotency-key': key });
    expect(stale.reply).toMatchObject({ status: 'rejected', reason_code: 'INGRESS_STALE' });
    expect(await keyHolder(victim.id, key)).toBe(stale.reply.ingress_id);

    const corrected = await post(await sign(actionRequest(victim.id), victim.key), { 'idempotency-key': key });
    expect(corrected.reply).toMatchObject({ status: 'rejected', reason_code: 'INGRESS_IDEMPOTENCY_CONFLICT' });
  });

  it("given two principals using the same key, then each holds its own: keys are scoped to the principal", async () => {
    const key = uniqueName('shared');
    const a = await post(await sign(actionRequest(squatter.id), squatter.key), { 'idempotency-key': key });
    const b = await post(await sign(actionRequest(victim.id), victim.key), { 'idempotency-key': key });
    expect([a.reply.status, b.reply.status]).toEqual(['accepted', 'accepted']);
    expect(a.reply.task_id).not.toBe(b.reply.task_id);
  });
});

describe('NATS writ.ingress.action.<principal_id>: a squatter cannot make the genuine message a duplicate', () => {
  it("given a squatter publishing on its own subject with the victim's key as Nats-Msg-Id, when the victim publishes its request under that key in Writ-Idempotency-Key, then JetStream stores it and ingress accepts it", async () => {
    // given
    const genuine = actionRequest(victim.id);
    const key = genuine.action_request_id;
    const squatted = await publishRaw(t.nc, subjectOf(squatter.id), await sign(actionRequest(squatter.id), squatter.key), key, 'msg-id');
    expect(squatted.duplicate).toBe(false);
    // when
    const jws = await sign(genuine, victim.key);
    const ack = await publishRaw(t.nc, subjectOf(victim.id), jws, key);
    // then
    expect(ack).toMatchObject({ duplicate: false });
    expect(ack.seq).toBeGreaterThan(squatted.seq);
    const events = await ingressOutcome(t.store, idsOf(victim.id, key, jws).ingressId);
    expect(IngressAccepted.parse(events[1]!.payload)).toMatchObject({ principal_id: victim.id, action_request_id: key, task_id: idsOf(victim.id, key, jws).newTaskId });
    // and the squatter's message was its own request under its own key
    await waitFor(async () => ((await keyHolder(squatter.id, key)) === undefined ? undefined : true), { what: "the squatter's own key claim" });
    expect(await keyHolder(victim.id, key)).toBe(idsOf(victim.id, key, jws).ingressId);
  });

  it("given a squatter's Nats-Msg-Id on its own subject, when an older client of the victim publishes under that same Nats-Msg-Id, then JetStream drops it only within the ingress stream's 100 ms duplicate window, and the request then stored is accepted", async () => {
    // given
    const genuine = actionRequest(victim.id);
    const key = genuine.action_request_id;
    await publishRaw(t.nc, subjectOf(squatter.id), await sign(actionRequest(squatter.id), squatter.key), key, 'msg-id');
    // when the victim's client publishes (and, seeing a duplicate it did not send, publishes again)
    const jws = await sign(genuine, victim.key);
    const stored = await waitFor(
      async () => {
        const ack = await publishRaw(t.nc, subjectOf(victim.id), jws, key, 'msg-id');
        return ack.duplicate ? undefined : ack;
      },
      { what: 'the victim stored under the squatted msg id', timeoutMs: 5_000, intervalMs: 50 },
    );
    // then
    expect(stored.duplicate).toBe(false);
    const events = await ingressOutcome(t.store, idsOf(victim.id, key, jws).ingressId);
    expect(events.map((event) => event.event_type)).toEqual(['ingress.received', 'ingress.accepted']);
  });

  it("given a forged request published on the victim's subject under the victim's key, then it is refused and reserves nothing: the genuine one under that key is accepted", async () => {
    const genuine = actionRequest(victim.id);
    const key = uniqueName('key');
    const forged = await forgedAs(victim, genuine);
    await publishRaw(t.nc, subjectOf(victim.id), forged, key);
    const refused = await ingressOutcome(t.store, idsOf(victim.id, key, forged).ingressId);
    expect(IngressRejected.parse(refused[1]!.payload).reason_code).toBe('INGRESS_SIGNATURE_INVALID');

    const jws = await sign(genuine, victim.key);
    await publishRaw(t.nc, subjectOf(victim.id), jws, key);
    const events = await ingressOutcome(t.store, idsOf(victim.id, key, jws).ingressId);
    expect(events.map((event) => event.event_type)).toEqual(['ingress.received', 'ingress.accepted']);
  });
});
