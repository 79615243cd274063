import type { PublicEd25519Jwk } from '@writ/contracts';
import { KeySet, generateEd25519Key, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { principalHistory } from '@writ/runtime';
import { beforeEach, describe, expect, it } from 'vitest';
import { APPROVAL, PACKET_HASH, TASK, logWithPendingApproval, orchestratorReaction, type RacingLog } from '../../test/racing-log.js';
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
      history: async (id) =>
        id === 'director-1'
          ? principalHistory(id, [
              {
                event_type: 'principal.registered',
                payload: { principal_id: id, principal_type: 'user', display_name: id, roles: ['director'], keys: [director.publicJwk as PublicEd25519Jwk], registered_by: 'op', at: '2029-12-31T00:00:00.000Z' },
              },
            ])
          : undefined,
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

  const deny = async (packetHash = PACKET_HASH) =>
    signJws(JSON.stringify({ approval_id: APPROVAL, decision: 'deny', packet_hash: packetHash, resolved_by: 'director-1', resolved_at: '2030-01-01T00:09:59.000Z', note: 'no' }), director);

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
      JSON.stringify({ approval_id: APPROVAL, decision: 'grant', packet_hash: PACKET_HASH, resolved_by: 'director-1', resolved_at: '2030-01-01T00:09:58.000Z' }),
      director,
    );
    // when / then
    await expect(handler.resolve({ task_id: TASK, approval_id: APPROVAL, resolution_jws: other })).rejects.toMatchObject({ code: 'APPROVAL_NOT_PENDING' });
  });

  it("given a denial, when resolved, then the event records the director's JWS for whoever acts on it", async () => {
    // given
    const jws = await deny();
    // when
    await handler.resolve({ task_id: TASK, approval_id: APPROVAL, resolution_jws: jws });
    // then
    expect(log.events.find((event) => event.event_type === 'approval.denied')?.payload).toMatchObject({ resolved_by: 'director-1', resolution_jws: jws });
  });

  it('given a resolution signed over another packet than the approval shows, when resolved, then APPROVAL_RESOLUTION_PACKET_STALE and nothing is appended', async () => {
    // given
    const stale = await deny(`sha256:${'f'.repeat(64)}`);
    // when / then
    await expect(handler.resolve({ task_id: TASK, approval_id: APPROVAL, resolution_jws: stale })).rejects.toMatchObject({ code: 'APPROVAL_RESOLUTION_PACKET_STALE' });
    expect(log.events.map((event) => event.event_type)).toEqual(['approval.requested']);
  });

  it('given a resolution signed long before the approval was requested, when resolved, then APPROVAL_RESOLUTION_TIME_INVALID: never recorded for consumers to refuse', async () => {
    // given
    const early = await signJws(
      JSON.stringify({ approval_id: APPROVAL, decision: 'deny', packet_hash: PACKET_HASH, resolved_by: 'director-1', resolved_at: '2029-12-31T12:00:00.000Z' }),
      director,
    );
    // when / then
    await expect(handler.resolve({ task_id: TASK, approval_id: APPROVAL, resolution_jws: early })).rejects.toMatchObject({ code: 'APPROVAL_RESOLUTION_TIME_INVALID' });
    expect(log.events).toHaveLength(1);
  });
});
