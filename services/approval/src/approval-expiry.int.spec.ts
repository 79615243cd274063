import { DecisionRecorded, hasErrorCode } from '@writ/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalRig } from '../test/approval-rig.js';

/**
 * The expiry timer against the real service and NATS: approvals live 3 s here
 * (WRIT_APPROVAL_TTL_SECONDS) and a timer message is held at most 1 s before it is
 * re-published (WRIT_APPROVAL_EXPIRY_REFRESH_SECONDS), so every path of the timer runs:
 * held, re-published, expired, settled, and carried across a restart. The tests wait for
 * the log (or the timer's report), never for a fixed time.
 */

let rig: ApprovalRig;

beforeAll(async () => {
  rig = await ApprovalRig.start({ ttlSeconds: 3, refreshSeconds: 1 });
});

afterAll(async () => {
  await rig?.stop();
});

describe('approval expiry without anyone resolving', () => {
  it('given nobody resolves a pending approval, then approval.expired is appended by the service when expires_at passes, with its decision, and no grant', async () => {
    const attempt = await rig.seedAttempt();
    const requested = await rig.requestApproval(attempt);
    const expiresAt = (requested.payload as { expires_at: string }).expires_at;

    const expired = await rig.waitForEvent(attempt.taskId, 'approval.expired', 20_000);
    // then it expired on time (never early), by the service's own principal
    expect(Date.parse(expired.occurred_at)).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    expect(expired.payload).toMatchObject({ resolved_by: rig.service.principalId });
    const decision = (await rig.taskEvents(attempt.taskId)).find((event) => event.task_seq === expired.task_seq + 1);
    expect(DecisionRecorded.parse(decision?.payload)).toMatchObject({ outcome_event: 'approval.expired', decision: { decided_by: rig.service.principalId, decision_type: 'safety' } });
    // and the timer was held on the server and carried over by re-publication (refresh 1 s < TTL 3 s);
    // it reports `expired` once its message is acknowledged, a moment after the event landed
    await rig.waitForTimer(attempt.approvalId, 'expired');
    expect(rig.outcomesOf(attempt.approvalId)).toEqual(expect.arrayContaining(['deferred', 'refreshed', 'expired']));
    expect(rig.outcomesOf(attempt.approvalId).at(-1)).toBe('expired');

    // when a director grants after the expiry, then it is refused even though the signature is good
    const before = (await rig.taskEvents(attempt.taskId)).length;
    expect(hasErrorCode(await rig.resolveError(attempt, rig.director, 'grant'), 'APPROVAL_NOT_PENDING')).toBe(true);
    // and a grant asked for anyway is not minted
    const ack = await rig.issueGrant(attempt);
    expect(await rig.deadLetterCode('issue-grant', ack.seq)).toBe('APPROVAL_NOT_GRANTED');
    const events = await rig.taskEvents(attempt.taskId);
    expect(events).toHaveLength(before);
    expect(events.map((event) => event.event_type)).not.toContain('grant.issued');
  });

  it('given a director granted before expires_at, then the timer finds it settled and never expires it', async () => {
    const attempt = await rig.seedAttempt();
    await rig.requestApproval(attempt);
    expect((await rig.resolve(attempt, rig.director, 'grant')).status).toBe('granted');
    // when the timer fires (at the latest when due)
    await rig.waitForTimer(attempt.approvalId, 'settled', 20_000);
    // then the approval is still granted: no expiry after a resolution
    const types = (await rig.taskEvents(attempt.taskId)).map((event) => event.event_type);
    expect(types).toContain('approval.granted');
    expect(types).not.toContain('approval.expired');
  });

  it('given the service stops while an approval is pending, then a restarted service expires it (the timer lives on the server)', async () => {
    const attempt = await rig.seedAttempt();
    await rig.requestApproval(attempt);
    await rig.waitForTimer(attempt.approvalId, 'deferred');
    // when the service goes away before the approval is due, and comes back
    await rig.stopService();
    expect((await rig.taskEvents(attempt.taskId)).map((event) => event.event_type)).not.toContain('approval.expired');
    await rig.startService();
    // then the approval still expires
    const expired = await rig.waitForEvent(attempt.taskId, 'approval.expired', 20_000);
    expect(expired.payload).toMatchObject({ resolved_by: rig.service.principalId });
  });
});
