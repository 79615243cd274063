import { hasErrorCode, type EventEnvelope } from '@writ/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalRig, OTHER_PACKET, type Attempt, type User } from '../test/approval-rig.js';

/**
 * DESIGN invariant 9 at the approval service, against the real service and NATS: an
 * `approval.granted` is honoured only for the director's signed resolution it carries.
 * Each case appends a resolution straight to the task's subject, as anyone who can write
 * the log could (claiming to be the approval service), then asks for the grant the way the
 * orchestrator would: nothing is minted, the command is dead-lettered with the stable code,
 * and the approval stays pending for a real director.
 */

let rig: ApprovalRig;

beforeAll(async () => {
  rig = await ApprovalRig.start();
});

afterAll(async () => {
  await rig?.stop();
});

async function pending(): Promise<Attempt> {
  const attempt = await rig.seedAttempt();
  await rig.requestApproval(attempt);
  return attempt;
}

/** Asks for the grant after a forged resolution: the dead letter's code, and whether a grant was minted. */
async function grantAfterForgery(attempt: Attempt): Promise<{ code: string | undefined; minted: boolean }> {
  const ack = await rig.issueGrant(attempt);
  await rig.waitHandled(rig.service.subjects.issueGrant, ack.seq);
  const code = await rig.deadLetterCode('issue-grant', ack.seq);
  const minted = (await rig.taskEvents(attempt.taskId)).some((event) => event.event_type === 'grant.issued');
  return { code, minted };
}

const granted = (user: User, resolutionJws?: string) => ({ resolved_by: user.id, witness_validated: false, ...(resolutionJws === undefined ? {} : { resolution_jws: resolutionJws }) });

function types(events: readonly EventEnvelope[]): string[] {
  return events.map((event) => event.event_type);
}

describe('a forged approval.granted mints no grant', () => {
  it('given an approval.granted with no signature, when a grant is asked for, then APPROVAL_RESOLUTION_UNSIGNED and nothing is minted', async () => {
    // given
    const attempt = await pending();
    await rig.appendForged(attempt, 'approval.granted', granted(rig.director));
    // when
    const { code, minted } = await grantAfterForgery(attempt);
    // then
    expect(code).toBe('APPROVAL_RESOLUTION_UNSIGNED');
    expect(minted).toBe(false);
  });

  it('given an approval.granted signed by a principal without the director role, then APPROVAL_RESOLUTION_NOT_DIRECTOR and nothing is minted', async () => {
    // given
    const attempt = await pending();
    await rig.appendForged(attempt, 'approval.granted', granted(rig.observer, await rig.resolutionJws(rig.observer, attempt.approvalId, 'grant')));
    // when
    const { code, minted } = await grantAfterForgery(attempt);
    // then
    expect(code).toBe('APPROVAL_RESOLUTION_NOT_DIRECTOR');
    expect(minted).toBe(false);
  });

  it('given an approval.granted signed by a "director" registered without an operator’s signature (appended with a bus credential), then APPROVAL_RESOLUTION_NOT_DIRECTOR and nothing is minted', async () => {
    // given: its signature, its role, its key window and the packet all hold; its registration chains to no operator
    const rogue = await rig.registerUser(['director'], 'user', { unauthorized: true });
    const attempt = await pending();
    await rig.appendForged(attempt, 'approval.granted', granted(rogue, await rig.resolutionJws(rogue, attempt.approvalId, 'grant')));
    // when
    const { code, minted } = await grantAfterForgery(attempt);
    // then
    expect(code).toBe('APPROVAL_RESOLUTION_NOT_DIRECTOR');
    expect(minted).toBe(false);
  });

  it('given `writ approve` by a "director" registered without an operator’s signature, then it is refused APPROVAL_RESOLUTION_NOT_DIRECTOR and nothing is appended', async () => {
    const rogue = await rig.registerUser(['director'], 'user', { unauthorized: true });
    const attempt = await pending();
    const before = types(await rig.taskEvents(attempt.taskId));
    const error = await rig.resolveError(attempt, rogue, 'grant');
    expect(hasErrorCode(error, 'APPROVAL_RESOLUTION_NOT_DIRECTOR')).toBe(true);
    expect(types(await rig.taskEvents(attempt.taskId))).toEqual(before);
    // and a director the operator registered still grants it
    expect(await rig.resolve(attempt, rig.director, 'grant')).toMatchObject({ status: 'granted' });
  });

  it('given an approval.granted signed by the requester itself, then APPROVAL_RESOLUTION_BY_REQUESTER and nothing is minted', async () => {
    // given: the agent that proposed the action holds the director role, and signs its own approval
    const attempt = await pending();
    await rig.appendForged(attempt, 'approval.granted', granted(rig.agent, await rig.resolutionJws(rig.agent, attempt.approvalId, 'grant')));
    // when
    const { code, minted } = await grantAfterForgery(attempt);
    // then
    expect(code).toBe('APPROVAL_RESOLUTION_BY_REQUESTER');
    expect(minted).toBe(false);
  });

  it('given an approval.granted signed with a director key revoked before the approval, even backdated, then APPROVAL_RESOLUTION_KEY_NOT_VALID and nothing is minted', async () => {
    // given a director whose key was revoked (compromised), then an approval
    const compromised = await rig.registerUser(['director']);
    await rig.revokeKey(compromised);
    const attempt = await pending();
    const backdated = new Date(Date.now() - 60_000).toISOString();
    await rig.appendForged(attempt, 'approval.granted', granted(compromised, await rig.resolutionJws(compromised, attempt.approvalId, 'grant', { resolved_at: backdated })));
    // when
    const { code, minted } = await grantAfterForgery(attempt);
    // then
    expect(code).toBe('APPROVAL_RESOLUTION_KEY_NOT_VALID');
    expect(minted).toBe(false);
  });

  it("given a director's genuine resolution of another approval replayed on this one, then APPROVAL_RESOLUTION_MISMATCH and nothing is minted", async () => {
    // given a resolution the director really signed, recorded on the approval it was for
    const other = await pending();
    await rig.resolve(other, rig.director, 'grant');
    const genuine = (await rig.taskEvents(other.taskId)).find((event) => event.event_type === 'approval.granted')?.payload['resolution_jws'];
    expect(typeof genuine).toBe('string');
    // and copied onto a forged grant of this approval
    const attempt = await pending();
    await rig.appendForged(attempt, 'approval.granted', granted(rig.director, genuine as string));
    // when
    const { code, minted } = await grantAfterForgery(attempt);
    // then
    expect(code).toBe('APPROVAL_RESOLUTION_MISMATCH');
    expect(minted).toBe(false);
  });

  it("given an approval.granted carrying a director's resolution over a stale packet hash, then APPROVAL_RESOLUTION_PACKET_STALE and nothing is minted", async () => {
    // given
    const attempt = await pending();
    await rig.appendForged(attempt, 'approval.granted', granted(rig.director, await rig.resolutionJws(rig.director, attempt.approvalId, 'grant', { packet_hash: OTHER_PACKET })));
    // when
    const { code, minted } = await grantAfterForgery(attempt);
    // then
    expect(code).toBe('APPROVAL_RESOLUTION_PACKET_STALE');
    expect(minted).toBe(false);
  });

  it('given a forged approval.granted, when a real director then grants, then the approval was still pending and the grant is minted on the real resolution', async () => {
    // given
    const attempt = await pending();
    await rig.appendForged(attempt, 'approval.granted', granted(rig.director));
    // when
    const reply = await rig.resolve(attempt, rig.secondDirector, 'grant');
    const ack = await rig.issueGrant(attempt, ':after-real-grant');
    // then
    expect(reply).toMatchObject({ status: 'granted', resolved_by: rig.secondDirector.id });
    const issued = await rig.waitForEvent(attempt.taskId, 'grant.issued');
    expect(issued.payload['claims']).toMatchObject({ attempt_id: attempt.attemptId, issued_by_principal_id: rig.secondDirector.id });
    await rig.waitHandled(rig.service.subjects.issueGrant, ack.seq);
    expect(types(await rig.taskEvents(attempt.taskId)).filter((type) => type === 'approval.granted')).toHaveLength(2);
  });
});

describe('a resolution request over a stale packet', () => {
  it('given a director who signed another packet than the approval shows, when the resolution is sent, then APPROVAL_RESOLUTION_PACKET_STALE and nothing is appended', async () => {
    // given
    const attempt = await pending();
    const before = (await rig.taskEvents(attempt.taskId)).length;
    const stale = await rig.resolutionJws(rig.director, attempt.approvalId, 'grant', { packet_hash: OTHER_PACKET });
    // when
    const error = await rig.bus.request(rig.service.subjects.resolve, { approval_id: attempt.approvalId, task_id: attempt.taskId, resolution_jws: stale }).then(
      () => new Error('the resolution was accepted'),
      (caught: unknown) => caught,
    );
    // then
    expect(hasErrorCode(error, 'APPROVAL_RESOLUTION_PACKET_STALE')).toBe(true);
    expect(await rig.taskEvents(attempt.taskId)).toHaveLength(before);
  });

  it("given a director's grant over the current packet, when resolved, then approval.granted carries the director's JWS and the grant is minted", async () => {
    // given
    const attempt = await pending();
    const jws = await rig.resolutionJws(rig.director, attempt.approvalId, 'grant');
    // when
    await rig.bus.request(rig.service.subjects.resolve, { approval_id: attempt.approvalId, task_id: attempt.taskId, resolution_jws: jws });
    await rig.issueGrant(attempt);
    // then
    expect((await rig.waitForEvent(attempt.taskId, 'approval.granted')).payload['resolution_jws']).toBe(jws);
    expect((await rig.waitForEvent(attempt.taskId, 'grant.issued')).payload['claims']).toMatchObject({ issued_by_principal_id: rig.director.id });
  });
});
