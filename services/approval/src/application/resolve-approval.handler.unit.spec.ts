import { KeySet, generateEd25519Key, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { APPROVAL, TASK, logWithPendingApproval, orchestratorReaction, type RacingLog } from '../../test/racing-log.js';
import type { PolicyProfiles, PrincipalDirectory, WorkspaceWitness } from './ports.js';
import { ResolveApprovalHandler } from './resolve-approval.handler.js';

describe('ResolveApprovalHandler', () => {
  let log: RacingLog;
  let director: Ed25519SigningKey;
  let handler: ResolveApprovalHandler;

  beforeEach(async () => {
    log = logWithPendingApproval();
    director = await generateEd25519Key({ kid: 'director-1-k1' });
    const principals: PrincipalDirectory = {
      lookup: async (id) => (id === 'director-1' ? { principal_id: 'director-1', roles: ['director'], principal_type: 'user' } : undefined),
      verificationKeys: async () => KeySet.of([director]),
    };
    const unused = (): never => {
      throw new Error('a denial reads neither the workspace nor the policy bucket');
    };
    handler = new ResolveApprovalHandler({
      log,
      principals,
      clock: () => new Date('2030-01-01T00:10:00.000Z'),
      principalId: 'writ-approval',
      witness: { observe: unused } as unknown as WorkspaceWitness,
      policies: { current: unused } as unknown as PolicyProfiles,
    });
  });

  const deny = async () =>
    signJws(JSON.stringify({ approval_id: APPROVAL, decision: 'deny', resolved_by: 'director-1', resolved_at: '2030-01-01T00:09:59.000Z', note: 'no' }), director);

  it('given the orchestrator reacts between the denial and its decision, when the denial is resolved, then it answers denied and the log holds each once', async () => {
    // given
    log.interleave = orchestratorReaction();
    // when
    const reply = await handler.resolve({ task_id: TASK, approval_id: APPROVAL, resolution_jws: await deny() });
    // then
    expect(reply).toMatchObject({ approval_id: APPROVAL, status: 'denied', resolved_by: 'director-1' });
    expect(log.events.map((event) => event.event_type)).toEqual(['approval.requested', 'approval.denied', 'attempt.approval_denied', 'decision.recorded']);
    expect(log.events[3]?.payload).toMatchObject({ subject_ref: `approval:${APPROVAL}`, outcome_event: 'approval.denied', decision: { decided_by: 'director-1' } });
  });

  it('given the same signed denial sent again (its reply was lost), when resolved, then it answers denied and appends nothing', async () => {
    // given
    const jws = await deny();
    await handler.resolve({ task_id: TASK, approval_id: APPROVAL, resolution_jws: jws });
    const before = log.events.length;
    // when
    const again = await handler.resolve({ task_id: TASK, approval_id: APPROVAL, resolution_jws: jws });
    // then
    expect(again).toMatchObject({ status: 'denied' });
    expect(log.events).toHaveLength(before);
  });

  it('given the approval denied by another signed resolution, when a second one arrives, then it is refused as no longer pending', async () => {
    // given
    await handler.resolve({ task_id: TASK, approval_id: APPROVAL, resolution_jws: await deny() });
    const other = await signJws(
      JSON.stringify({ approval_id: APPROVAL, decision: 'grant', resolved_by: 'director-1', resolved_at: '2030-01-01T00:09:58.000Z' }),
      director,
    );
    // when / then
    await expect(handler.resolve({ task_id: TASK, approval_id: APPROVAL, resolution_jws: other })).rejects.toMatchObject({ code: 'APPROVAL_NOT_PENDING' });
  });
});
