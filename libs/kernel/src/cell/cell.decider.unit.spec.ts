import { describe, expect, it } from 'vitest';
import { cmd, reach, run } from '../../test/cell-flow.js';
import { at, deciderSpec } from '../../test/decider-spec.js';
import { fold } from '../shared/decider.js';
import { archivedObjects, cellDecider, type CellRecord } from './cell.decider.js';
import { CELL_POLICY_DEFAULTS } from './cell.policy.js';

const spec = deciderSpec(cellDecider);
const record = (events: readonly unknown[]) => fold(cellDecider, events) as CellRecord;
const grace = (s: number) => at(s + 1_800);

describe('cell decider: every valid transition (Lazarus 4.1)', () => {
  it('given no cell, when a director invites an executor, then cell.participant_invited creates the cell with the policy defaults (IDLE → INVITED)', () => {
    spec.given([]).when(cmd.invite(0)).then([
      {
        type: 'cell.participant_invited',
        data: {
          cell_id: 'cell-1',
          participant: { participant_id: 'exec-1', principal_id: 'exec-1', role: 'executor', isolation: 'standard' },
          invited_by: 'dir-1',
          expires_at: at(900),
          created: { director: { participant_id: 'dir-1', principal_id: 'dir-1', role: 'director', isolation: 'standard' }, policy: { ...CELL_POLICY_DEFAULTS } },
          at: at(0),
        },
      },
    ]);
    const state = record(run([cmd.invite(0)]));
    expect(state.status).toBe('INVITED');
    expect(state.participants.map((p) => [p.participant_id, p.role, p.status])).toEqual([
      ['dir-1', 'director', 'accepted'],
      ['exec-1', 'executor', 'invited'],
    ]);
  });

  it('given an accepted invitation, when prepare-cell, then cell.preparing (INVITED → PREPARING)', () => {
    spec.given(run([cmd.invite(0), cmd.accept(10)])).when(cmd.prepare(20)).then([{ type: 'cell.preparing', data: { backend: 'docker', prepared_by: 'writ-executor', at: at(20) } }]);
  });

  it('given an invitation nobody accepted, when it expires, then cell.invitation_expired and cell.closed ttl_expired (INVITED → CLOSED)', () => {
    spec.given(reach('INVITED')).when(cmd.expire(900)).then([
      { type: 'cell.invitation_expired', data: { participant_id: 'exec-1', expired_by: 'writ-executor', at: at(900) } },
      { type: 'cell.closed', data: { reason: 'ttl_expired', closed_by: 'writ-executor', grace_ends_at: grace(900), at: at(900) } },
    ]);
  });

  it('given an INVITED cell, when its director revokes it, then cell.closed explicit (INVITED → CLOSED)', () => {
    spec.given(reach('INVITED')).when(cmd.close(5)).then([{ type: 'cell.closed', data: { reason: 'explicit', closed_by: 'dir-1', grace_ends_at: grace(5), at: at(5) } }]);
  });

  it('given a PREPARING cell, when it spawns, then cell.activated with the active TTL (PREPARING → ACTIVE) and the runners\' heartbeat clocks start', () => {
    spec.given(reach('PREPARING')).when(cmd.activate(30)).then([{ type: 'cell.activated', data: { spawned_by: 'writ-executor', active_expires_at: at(30 + 4 * 3_600), at: at(30) } }]);
    expect(record(reach('ACTIVE')).running).toEqual([{ participant_id: 'exec-1', last_heartbeat_at: at(30), deadline: at(120) }]);
  });

  it('given a PREPARING cell, when the spawn fails, then cell.closed failed (PREPARING → CLOSED)', () => {
    spec.given(reach('PREPARING')).when(cmd.close(25, 'failed', 'writ-executor')).then([
      { type: 'cell.closed', data: { reason: 'failed', closed_by: 'writ-executor', grace_ends_at: grace(25), at: at(25) } },
    ]);
  });

  it('given an ACTIVE cell, when the director triggers a checkpoint, then cell.checkpoint_started (ACTIVE → CHECKPOINTING)', () => {
    spec.given(reach('ACTIVE')).when(cmd.begin(40)).then([{ type: 'cell.checkpoint_started', data: { checkpoint_id: 'cp-1', requested_by: 'dir-1', final: false, at: at(40) } }]);
  });

  it('given a checkpoint in progress, when it completes, then cell.checkpoint_completed and the cell resumes (CHECKPOINTING → ACTIVE)', () => {
    const events = spec.given(reach('CHECKPOINTING')).when(cmd.complete(50)).then([
      { type: 'cell.checkpoint_completed', data: { checkpoint_id: 'cp-1', sha256: 'a'.repeat(64), artifact_ref: 'artifact:cp-1', final: false, at: at(50) } },
    ]);
    const state = record([...reach('CHECKPOINTING'), ...events]);
    expect(state.status).toBe('ACTIVE');
    expect(state.checkpoints).toMatchObject([{ checkpoint_id: 'cp-1', completed_at: at(50) }]);
  });

  it('given a final checkpoint in progress, when it completes, then checkpoint_completed and cell.closed explicit (CHECKPOINTING → CLOSED)', () => {
    const history = run([cmd.begin(40, 'cp-final', true)], reach('ACTIVE'));
    spec.given(history).when(cmd.complete(50, 'cp-final')).then([
      { type: 'cell.checkpoint_completed', data: { checkpoint_id: 'cp-final', sha256: 'a'.repeat(64), artifact_ref: 'artifact:cp-final', final: true, at: at(50) } },
      { type: 'cell.closed', data: { reason: 'explicit', closed_by: 'dir-1', grace_ends_at: grace(50), at: at(50) } },
    ]);
  });

  it('given an ACTIVE cell, when the director closes it, then cell.closed explicit (ACTIVE → CLOSED)', () => {
    spec.given(reach('ACTIVE')).when(cmd.close(60)).then([{ type: 'cell.closed', data: { reason: 'explicit', closed_by: 'dir-1', grace_ends_at: grace(60), at: at(60) } }]);
  });

  it('given an ACTIVE cell past its active TTL, when closed as ttl_expired, then cell.closed (ACTIVE → CLOSED); before the TTL, CELL_TTL_NOT_ELAPSED', () => {
    const history = run([cmd.beat(14_400)], reach('ACTIVE'));
    expect(spec.given(history).when(cmd.close(14_430, 'ttl_expired', 'writ-executor')).thenEvents()).toMatchObject([{ type: 'cell.closed', data: { reason: 'ttl_expired' } }]);
    spec.given(history).when(cmd.close(14_429, 'ttl_expired', 'writ-executor')).thenThrows('CELL_TTL_NOT_ELAPSED');
  });

  it('given a participant past its heartbeat deadline, when mark-downed, then cell.downed (ACTIVE → DOWNED); before it, CELL_HEARTBEAT_NOT_MISSED', () => {
    spec.given(reach('ACTIVE')).when(cmd.down(120)).then([{ type: 'cell.downed', data: { participant_id: 'exec-1', last_heartbeat_at: at(30), deadline: at(120), at: at(120) } }]);
    spec.given(reach('ACTIVE')).when(cmd.down(119)).thenThrows('CELL_HEARTBEAT_NOT_MISSED');
  });

  it('given a DOWNED cell, when the downed participant comes back, then cell.revived with nobody replaced (DOWNED → ACTIVE)', () => {
    const events = spec.given(reach('DOWNED')).when(cmd.revive(200)).then([{ type: 'cell.revived', data: { revived_by: 'exec-1', replaced: null, at: at(200) } }]);
    const state = record([...reach('DOWNED'), ...events]);
    expect(state.status).toBe('ACTIVE');
    expect(state.running).toEqual([{ participant_id: 'exec-1', last_heartbeat_at: at(200), deadline: at(290) }]);
  });

  it('given a DOWNED cell nobody revives, when the director abandons it, then cell.closed abandoned (DOWNED → CLOSED)', () => {
    spec.given(reach('DOWNED')).when(cmd.close(300, 'abandoned')).then([{ type: 'cell.closed', data: { reason: 'abandoned', closed_by: 'dir-1', grace_ends_at: grace(300), at: at(300) } }]);
    spec.given(reach('DOWNED')).when(cmd.close(300, 'abandoned', 'writ-executor')).thenThrows('CELL_TTL_NOT_ELAPSED');
    expect(spec.given(reach('DOWNED')).when(cmd.close(14_430, 'abandoned', 'writ-executor')).thenEvents()).toMatchObject([{ type: 'cell.closed', data: { reason: 'abandoned' } }]);
  });

  it('given a CLOSED cell past its grace, when archived, then cell.archived records the scrub, the archived checkpoints and the retention (CLOSED → ARCHIVED)', () => {
    const history = run([cmd.begin(40), cmd.complete(50), cmd.close(60)], reach('ACTIVE'));
    spec.given(history).when(cmd.archive(1_860)).then([
      {
        type: 'cell.archived',
        data: {
          archived_by: 'writ-executor',
          archive_ref: 'lazarus-archive/2030-01-01/cell-1',
          checkpoint_ids: ['cp-1'],
          filesystem_scrubbed: true,
          retention_ends_at: at(1_860 + 30 * 86_400),
          at: at(1_860),
        },
      },
    ]);
    spec.given(history).when(cmd.archive(1_859)).thenThrows('CELL_GRACE_NOT_OVER');
  });

  describe('purge-archive: the archived objects leave the artifact store after the retention (Lazarus 7.2)', () => {
    const manifest = 'b'.repeat(64);
    const tarball = 'a'.repeat(64);
    const retentionEnds = 1_860 + 30 * 86_400;
    // One checkpoint (its tarball 'a' × 64), archived under a manifest whose ref names its hash.
    const archived = () => {
      const history = run([cmd.begin(40), cmd.complete(50), cmd.close(60)], reach('ACTIVE'));
      return run([{ type: 'archive-cell', data: { archived_by: 'writ-executor', archive_ref: `nats-obj://WRIT_ARTIFACTS/sha256-${manifest}` }, metadata: cmd.archive(1_860).metadata }], history);
    };

    it('given an archived cell past its retention, when purged, then cell.archive_purged lists what was deleted and what was kept, the status stays ARCHIVED, and the archive records it', () => {
      const events = spec.given(archived()).when(cmd.purge(retentionEnds, [tarball], [manifest])).then([
        { type: 'cell.archive_purged', data: { purged_by: 'writ-executor', deleted_sha256: [tarball], kept_sha256: [manifest], at: at(retentionEnds) } },
      ]);
      const state = record([...archived(), ...events]);
      expect(state.status).toBe('ARCHIVED');
      expect(state.archived?.purged).toEqual({ at: at(retentionEnds), purged_by: 'writ-executor', deleted_sha256: [tarball], kept_sha256: [manifest] });
      expect(state.anomalies).toEqual([]);
    });

    it('given an archived cell, then its archived objects are the completed checkpoints and the manifest its ref names, each once', () => {
      expect(archivedObjects(record(archived()))).toEqual([tarball, manifest]);
      // a ref that names no content hash (an older adapter's path) adds nothing
      expect(archivedObjects(record(reach('ARCHIVED')))).toEqual([]);
      expect(archivedObjects(record(reach('CLOSED')))).toEqual([]);
    });

    it('given an archived cell within its retention, when purged, then CELL_RETENTION_NOT_OVER; exactly at its end it may', () => {
      spec.given(archived()).when(cmd.purge(retentionEnds - 1, [tarball, manifest])).thenThrows('CELL_RETENTION_NOT_OVER');
      expect(spec.given(archived()).when(cmd.purge(retentionEnds, [tarball, manifest])).thenEvents()).toHaveLength(1);
    });

    it('given a purged archive, when purged again, then CELL_ARCHIVE_PURGED (one purge per cell)', () => {
      const purged = run([cmd.purge(retentionEnds, [tarball, manifest])], archived());
      spec.given(purged).when(cmd.purge(retentionEnds + 60, [tarball, manifest])).thenThrows('CELL_ARCHIVE_PURGED');
    });

    it('given lists that miss an archived object, name a foreign one, or name one twice, then CELL_PURGE_OBJECTS_MISMATCH; a hash that is not sha256 hex is KERNEL_COMMAND_INVALID', () => {
      spec.given(archived()).when(cmd.purge(retentionEnds, [tarball])).thenThrows('CELL_PURGE_OBJECTS_MISMATCH');
      spec.given(archived()).when(cmd.purge(retentionEnds, [tarball, 'c'.repeat(64)])).thenThrows('CELL_PURGE_OBJECTS_MISMATCH');
      spec.given(archived()).when(cmd.purge(retentionEnds, [tarball, manifest], [tarball])).thenThrows('CELL_PURGE_OBJECTS_MISMATCH');
      spec.given(reach('ARCHIVED')).when(cmd.purge(retentionEnds, ['not-a-hash'])).thenThrows('CELL_PURGE_OBJECTS_MISMATCH');
      spec.given(reach('ARCHIVED')).when({ ...cmd.purge(retentionEnds, []), data: { purged_by: 'writ-executor', deleted_sha256: 'x', kept_sha256: [] } } as never).thenThrows('KERNEL_COMMAND_INVALID');
    });

    it('given a closed (not archived) cell, when purged, then CELL_TRANSITION_INVALID: only an archive is purged', () => {
      spec.given(reach('CLOSED')).when(cmd.purge(retentionEnds, [])).thenThrows('CELL_TRANSITION_INVALID');
    });

    it('given a cell.archive_purged out of place (not archived, or purged already), then evolve records an anomaly and changes nothing', () => {
      const event = { type: 'cell.archive_purged', data: { purged_by: 'writ-executor', deleted_sha256: [], kept_sha256: [], at: at(10) } };
      const closed = fold(cellDecider, [...reach('CLOSED'), event]);
      expect(closed.anomalies.map((a) => a.event_type)).toEqual(['cell.archive_purged']);
      const twice = fold(cellDecider, [...reach('ARCHIVED'), event, event]) as CellRecord;
      expect(twice.anomalies.map((a) => a.event_type)).toEqual(['cell.archive_purged']);
      expect(twice.archived?.purged?.at).toBe(at(10));
    });
  });

  it('given a CLOSED cell within its grace, when the director resurrects it, then cell.resurrected with a new active window (CLOSED → ACTIVE)', () => {
    const events = spec.given(reach('CLOSED')).when(cmd.resurrect(1_859)).then([
      { type: 'cell.resurrected', data: { resurrected_by: 'dir-1', active_expires_at: at(1_859 + 4 * 3_600), at: at(1_859) } },
    ]);
    const state = record([...reach('CLOSED'), ...events]);
    expect([state.status, state.activated_at, state.closed]).toEqual(['ACTIVE', at(1_859), null]);
    expect(state.running).toEqual([{ participant_id: 'exec-1', last_heartbeat_at: at(1_859), deadline: at(1_859 + 90) }]);
  });
});

describe('cell decider: what stays in the same state', () => {
  it('given a running participant, when it beats within half a timeout, then nothing is recorded; after half a timeout, cell.heartbeat_recorded with the gap', () => {
    spec.given(reach('ACTIVE')).when(cmd.beat(74)).then([]);
    spec.given(reach('ACTIVE')).when(cmd.beat(75)).then([{ type: 'cell.heartbeat_recorded', data: { participant_id: 'exec-1', gap_ms: 45_000, at: at(75) } }]);
    const state = record(run([cmd.beat(75)], reach('ACTIVE')));
    expect(state.running).toEqual([{ participant_id: 'exec-1', last_heartbeat_at: at(75), deadline: at(165) }]);
  });

  it('given an agent beating every timeout/2, then it is never missed and the log holds one heartbeat per half timeout', () => {
    const beats = Array.from({ length: 20 }, (_, i) => cmd.beat(30 + 45 * (i + 1)));
    const events = run(beats, reach('ACTIVE'));
    expect(events.filter((e) => e.type === 'cell.heartbeat_recorded')).toHaveLength(20);
    spec.given(events).when(cmd.down(30 + 45 * 20 + 89)).thenThrows('CELL_HEARTBEAT_NOT_MISSED');
  });

  it('given an ACTIVE cell, when the director invites an observer who accepts, then the cell stays ACTIVE and the observer does not run', () => {
    const events = run([cmd.invite(40, 'obs-1', 'observer'), cmd.accept(41, 'obs-1')], reach('ACTIVE'));
    const state = record(events);
    expect(state.status).toBe('ACTIVE');
    expect(state.running.map((r) => r.participant_id)).toEqual(['exec-1']);
  });

  it('given an ACTIVE cell, when a second executor accepts, then its heartbeat clock starts at acceptance', () => {
    const state = record(run([cmd.invite(40, 'exec-2'), cmd.accept(50, 'exec-2')], reach('ACTIVE')));
    expect(state.running).toContainEqual({ participant_id: 'exec-2', last_heartbeat_at: at(50), deadline: at(140) });
  });

  it('given a checkpoint resumed after the deadline would have run out, then nobody is held to a deadline that ran while frozen', () => {
    const state = record(run([cmd.begin(40), cmd.complete(500)], reach('ACTIVE')));
    expect(state.running).toEqual([{ participant_id: 'exec-1', last_heartbeat_at: at(30), deadline: at(590) }]);
  });
});

describe('cell decider: refusals', () => {
  it('given a cell, when someone who is not an accepted director invites, checkpoints, closes, renews or resurrects, then CELL_NOT_DIRECTOR', () => {
    spec.given(reach('ACTIVE')).when(cmd.invite(40, 'exec-2', 'executor', { invited_by: 'exec-1' })).thenThrows('CELL_NOT_DIRECTOR');
    spec.given(reach('ACTIVE')).when(cmd.begin(40, 'cp-1', false, 'exec-1')).thenThrows('CELL_NOT_DIRECTOR');
    spec.given(reach('ACTIVE')).when(cmd.close(40, 'explicit', 'exec-1')).thenThrows('CELL_NOT_DIRECTOR');
    spec.given(reach('ACTIVE')).when(cmd.renew(40, undefined, 'exec-1')).thenThrows('CELL_NOT_DIRECTOR');
    spec.given(reach('CLOSED')).when(cmd.resurrect(70, 'exec-1')).thenThrows('CELL_NOT_DIRECTOR');
    // An invited, not yet accepted director seat has no authority either.
    const pending = run([cmd.invite(40, 'dir-2', 'director')], reach('ACTIVE'));
    spec.given(pending).when(cmd.close(41, 'explicit', 'dir-2')).thenThrows('CELL_NOT_DIRECTOR');
  });

  it('given a seat, when the same participant id is invited again (with any role), then CELL_PARTICIPANT_EXISTS: a role is immutable', () => {
    spec.given(reach('ACTIVE')).when(cmd.invite(40, 'exec-1', 'observer')).thenThrows('CELL_PARTICIPANT_EXISTS');
    spec.given(reach('ACTIVE')).when(cmd.invite(40, 'dir-1', 'executor')).thenThrows('CELL_PARTICIPANT_EXISTS');
    spec.given([]).when(cmd.invite(0, 'dir-1')).thenThrows('CELL_PARTICIPANT_EXISTS');
  });

  it('given a cell, when invited with another cell id or a second policy, then CELL_ID_MISMATCH / CELL_POLICY_INVALID; an invalid policy at creation is CELL_POLICY_INVALID', () => {
    spec.given(reach('INVITED')).when({ ...cmd.invite(1, 'exec-2'), data: { ...(cmd.invite(1, 'exec-2').data as object), cell_id: 'cell-2' } } as never).thenThrows('CELL_ID_MISMATCH');
    spec.given(reach('INVITED')).when(cmd.invite(1, 'exec-2', 'executor', { policy: {} })).thenThrows('CELL_POLICY_INVALID');
    spec.given([]).when(cmd.invite(0, 'exec-1', 'executor', { policy: { active_ttl_ms: 5 * 3_600_000, active_ttl_max_ms: 4 * 3_600_000 } })).thenThrows('CELL_POLICY_INVALID');
    spec.given([]).when(cmd.invite(0, 'exec-1', 'executor', { policy: { active_ttl_max_ms: 25 * 3_600_000 } })).thenThrows('CELL_POLICY_INVALID');
  });

  it('given an invitation, when accepted at or after its expiry, then CELL_INVITATION_EXPIRED; expired before it, CELL_INVITATION_NOT_EXPIRED; twice, CELL_INVITATION_NOT_PENDING', () => {
    spec.given(reach('INVITED')).when(cmd.accept(900)).thenThrows('CELL_INVITATION_EXPIRED');
    spec.given(reach('INVITED')).when(cmd.expire(899)).thenThrows('CELL_INVITATION_NOT_EXPIRED');
    spec.given(run([cmd.accept(10)], reach('INVITED'))).when(cmd.accept(11)).thenThrows('CELL_INVITATION_NOT_PENDING');
    spec.given(reach('INVITED')).when(cmd.accept(10, 'nobody')).thenThrows('CELL_PARTICIPANT_UNKNOWN');
  });

  it('given two invitations, when the first expires, then the cell stays INVITED; when the last expires, it closes', () => {
    const two = run([cmd.invite(100, 'exec-2')], reach('INVITED'));
    const first = run([cmd.expire(900)], two);
    expect(record(first).status).toBe('INVITED');
    expect(spec.given(first).when(cmd.expire(1_000, 'exec-2')).thenEvents().map((e) => e.type)).toEqual(['cell.invitation_expired', 'cell.closed']);
  });

  it('given only an accepted observer, when prepare-cell, then CELL_NO_RUNNING_PARTICIPANT', () => {
    spec.given(run([cmd.invite(0, 'obs-1', 'observer'), cmd.accept(1, 'obs-1')])).when(cmd.prepare(2)).thenThrows('CELL_NO_RUNNING_PARTICIPANT');
  });

  it('given a checkpoint in progress, when another checkpoint id completes, then CELL_CHECKPOINT_MISMATCH; a reused id is CELL_CHECKPOINT_EXISTS', () => {
    spec.given(reach('CHECKPOINTING')).when(cmd.complete(50, 'cp-2')).thenThrows('CELL_CHECKPOINT_MISMATCH');
    spec.given(run([cmd.begin(40), cmd.complete(50)], reach('ACTIVE'))).when(cmd.begin(60)).thenThrows('CELL_CHECKPOINT_EXISTS');
  });

  it('given a close reason that does not fit the state, then CELL_CLOSE_REASON_INVALID', () => {
    spec.given(reach('ACTIVE')).when(cmd.close(60, 'abandoned')).thenThrows('CELL_CLOSE_REASON_INVALID');
    spec.given(reach('DOWNED')).when(cmd.close(200, 'explicit')).thenThrows('CELL_CLOSE_REASON_INVALID');
    spec.given(reach('INVITED')).when(cmd.close(5, 'failed', 'writ-executor')).thenThrows('CELL_CLOSE_REASON_INVALID');
  });

  it('given a heartbeat or mark-downed for someone not running, then CELL_PARTICIPANT_NOT_RUNNING', () => {
    spec.given(reach('ACTIVE')).when(cmd.beat(40, 'dir-1')).thenThrows('CELL_PARTICIPANT_NOT_RUNNING');
    spec.given(reach('ACTIVE')).when(cmd.down(400, 'nobody')).thenThrows('CELL_PARTICIPANT_NOT_RUNNING');
  });

  it('given a DOWNED cell, when someone else revives it, then CELL_REVIVER_INVALID; after the active TTL, CELL_ACTIVE_TTL_EXPIRED', () => {
    spec.given(reach('DOWNED')).when(cmd.revive(200, 'dir-1')).thenThrows('CELL_REVIVER_INVALID');
    spec.given(reach('DOWNED')).when(cmd.revive(14_430)).thenThrows('CELL_ACTIVE_TTL_EXPIRED');
  });

  it('given a cell closed before it ever ran, when resurrected, then CELL_TRANSITION_INVALID', () => {
    spec.given(run([cmd.close(5)], reach('INVITED'))).when(cmd.resurrect(10)).thenThrows('CELL_TRANSITION_INVALID');
  });

  it('given an unknown command or a malformed clock, then KERNEL_COMMAND_INVALID', () => {
    spec.given(reach('ACTIVE')).when({ type: 'fly-cell', data: {}, metadata: { now: at(1) } } as never).thenThrows('KERNEL_COMMAND_INVALID');
    spec.given(reach('ACTIVE')).when({ ...cmd.beat(1), metadata: { now: 'yesterday' } }).thenThrows('KERNEL_COMMAND_INVALID');
    spec.given([]).when(cmd.invite(0, 'bad id/..')).thenThrows('KERNEL_COMMAND_INVALID');
  });
});
