import { describe, expect, it } from 'vitest';
import { cmd, reach, run } from '../../test/cell-flow.js';
import { at, deciderSpec } from '../../test/decider-spec.js';
import { fold } from '../shared/decider.js';
import { cellDecider, type CellRecord } from './cell.decider.js';
import { dueTransitions, nextDueAt } from './cell.due.js';
import { CELL_POLICY_DEFAULTS, CellPolicy } from './cell.policy.js';

const spec = deciderSpec(cellDecider);
const HOUR = 3_600;
const state = (events: readonly unknown[]) => fold(cellDecider, events);

describe('cell policy (Lazarus 4.2)', () => {
  it('given no policy, then the documented defaults: invitation 15 min, active 4 h up to 24 h, grace 30 min, archive 30 days', () => {
    expect(CellPolicy.parse({})).toEqual({
      invitation_ttl_ms: 900_000,
      active_ttl_ms: 14_400_000,
      active_ttl_max_ms: 86_400_000,
      closed_grace_ms: 1_800_000,
      archive_retention_ms: 2_592_000_000,
      heartbeat_timeout_ms: 90_000,
      allow_guest: false,
      allow_substitute: false,
    });
    expect(CellPolicy.parse({})).toEqual(CELL_POLICY_DEFAULTS);
  });

  it('given a configured policy, then the cell uses its TTLs', () => {
    const events = run([cmd.invite(0, 'exec-1', 'executor', { policy: { invitation_ttl_ms: 60_000, closed_grace_ms: 120_000 } })]);
    expect((state(events) as CellRecord).participants[1]?.expires_at).toBe(at(60));
    const closed = run([cmd.close(5)], events);
    expect((state(closed) as CellRecord).closed?.grace_ends_at).toBe(at(125));
  });
});

describe('active TTL renewal (director only, at most 24 h per activation window)', () => {
  it('given an ACTIVE cell, when the director renews by the default, then cell.ttl_renewed extends the window by 4 h', () => {
    spec.given(reach('ACTIVE')).when(cmd.renew(60)).then([
      { type: 'cell.ttl_renewed', data: { renewed_by: 'dir-1', previous_expires_at: at(30 + 4 * HOUR), active_expires_at: at(30 + 8 * HOUR), at: at(60) } },
    ]);
  });

  it('given renewals, when the window would pass 24 h from activation, then CELL_TTL_CAP_EXCEEDED; exactly 24 h is allowed', () => {
    let events = reach('ACTIVE');
    for (let i = 0; i < 4; i += 1) events = run([cmd.renew(60 + i)], events);
    expect((state(events) as CellRecord).active_expires_at).toBe(at(30 + 20 * HOUR));
    spec.given(events).when(cmd.renew(100, 4 * HOUR * 1_000 + 1_000)).thenThrows('CELL_TTL_CAP_EXCEEDED');
    expect(spec.given(events).when(cmd.renew(100)).thenEvents()).toMatchObject([{ data: { active_expires_at: at(30 + 24 * HOUR) } }]);
    spec.given(run([cmd.renew(100)], events)).when(cmd.renew(101, 1_000)).thenThrows('CELL_TTL_CAP_EXCEEDED');
  });

  it('given the active TTL elapsed, when renewed, then CELL_ACTIVE_TTL_EXPIRED; a bad extension is KERNEL_COMMAND_INVALID', () => {
    spec.given(reach('ACTIVE')).when(cmd.renew(30 + 4 * HOUR)).thenThrows('CELL_ACTIVE_TTL_EXPIRED');
    spec.given(reach('ACTIVE')).when(cmd.renew(60, 0)).thenThrows('KERNEL_COMMAND_INVALID');
    spec.given(reach('ACTIVE')).when(cmd.renew(60, 1.5)).thenThrows('KERNEL_COMMAND_INVALID');
  });
});

describe('closed grace and resurrection (Lazarus 7.1)', () => {
  it('given a CLOSED cell, when resurrected inside the grace, then ok; at or after its end, CELL_GRACE_EXPIRED', () => {
    expect(spec.given(reach('CLOSED')).when(cmd.resurrect(60 + 1_799)).thenEvents()).toMatchObject([{ type: 'cell.resurrected' }]);
    spec.given(reach('CLOSED')).when(cmd.resurrect(60 + 1_800)).thenThrows('CELL_GRACE_EXPIRED');
    spec.given(reach('CLOSED')).when(cmd.resurrect(60 + 86_400)).thenThrows('CELL_GRACE_EXPIRED');
  });

  it('given a resurrected cell, then its checkpoints survive and a new close starts a new grace', () => {
    const events = run([cmd.begin(40), cmd.complete(50), cmd.close(60), cmd.resurrect(100), cmd.close(200)], reach('ACTIVE'));
    const record = state(events) as CellRecord;
    expect(record.checkpoints.map((c) => c.checkpoint_id)).toEqual(['cp-1']);
    expect(record.closed?.grace_ends_at).toBe(at(2_000));
  });
});

describe('dueTransitions and nextDueAt: what an adapter\'s timers apply', () => {
  it('given an INVITED cell, then the invitation falls due at its expiry, and dispatching it closes the cell', () => {
    expect(dueTransitions(state(reach('INVITED')), at(899))).toEqual([]);
    expect(nextDueAt(state(reach('INVITED')))).toBe(at(900));
    expect(dueTransitions(state(reach('INVITED')), at(900))).toEqual([{ kind: 'invitation_expired', command: 'expire-invitation', participant_id: 'exec-1', due_at: at(900) }]);
    expect(state(run([cmd.expire(900)], reach('INVITED'))).status).toBe('CLOSED');
  });

  it('given an ACTIVE cell, then a missed heartbeat falls due at the deadline; once the TTL elapses, closing wins over it', () => {
    const active = state(reach('ACTIVE'));
    expect(nextDueAt(active)).toBe(at(120));
    expect(dueTransitions(active, at(119))).toEqual([]);
    expect(dueTransitions(active, at(120))).toEqual([{ kind: 'heartbeat_missed', command: 'mark-downed', participant_id: 'exec-1', due_at: at(120) }]);
    expect(dueTransitions(active, at(30 + 4 * HOUR))).toEqual([{ kind: 'active_ttl_elapsed', command: 'close-cell', reason: 'ttl_expired', due_at: at(30 + 4 * HOUR) }]);
  });

  it('given several missed heartbeats, then only the earliest is due (the first moves the cell to DOWNED)', () => {
    const events = run([cmd.invite(40, 'exec-2'), cmd.accept(50, 'exec-2')], reach('ACTIVE'));
    expect(dueTransitions(state(events), at(1_000))).toEqual([{ kind: 'heartbeat_missed', command: 'mark-downed', participant_id: 'exec-1', due_at: at(120) }]);
  });

  it('given a DOWNED cell, then it is abandoned when the active window runs out; a CLOSED cell is archived when the grace is over', () => {
    expect(dueTransitions(state(reach('DOWNED')), at(30 + 4 * HOUR))).toEqual([{ kind: 'downed_ttl_elapsed', command: 'close-cell', reason: 'abandoned', due_at: at(30 + 4 * HOUR) }]);
    expect(dueTransitions(state(reach('CLOSED')), at(1_859))).toEqual([]);
    expect(dueTransitions(state(reach('CLOSED')), at(1_860))).toEqual([{ kind: 'grace_over', command: 'archive-cell', due_at: at(1_860) }]);
  });

  it('given a CHECKPOINTING cell, then its TTL and heartbeats wait for the resume; given IDLE, then nothing is ever due', () => {
    expect(dueTransitions(state(reach('CHECKPOINTING')), at(30 + 5 * HOUR))).toEqual([]);
    expect(dueTransitions(state([]), at(10 ** 6))).toEqual([]);
    expect(nextDueAt(state([]))).toBeNull();
  });

  it('given an ARCHIVED cell, then its purge falls due when the archive retention ends (30 days after archiving), and once purged nothing is ever due again', () => {
    const archived = reach('ARCHIVED');
    const retentionEnds = 1_860 + 30 * 86_400;
    expect(nextDueAt(state(archived))).toBe(at(retentionEnds));
    expect(dueTransitions(state(archived), at(retentionEnds - 1))).toEqual([]);
    expect(dueTransitions(state(archived), at(retentionEnds))).toEqual([{ kind: 'retention_over', command: 'purge-archive', due_at: at(retentionEnds) }]);
    const purged = run([cmd.purge(retentionEnds, [])], archived);
    expect(dueTransitions(state(purged), at(retentionEnds + 10 * 86_400))).toEqual([]);
    expect(nextDueAt(state(purged))).toBeNull();
  });
});
