import type { CellCommand, CellEvent, CellPolicyInput, CellState, CellStatus } from '../src/index.js';
import { cellDecider } from '../src/index.js';
import { meta } from './decider-spec.js';

/** Cell commands at `s` seconds after T0 (`2030-01-01T00:00:00Z`). */
export const cmd = {
  invite: (s: number, participant_id = 'exec-1', role: 'director' | 'executor' | 'observer' | 'guest' = 'executor', extra: { policy?: CellPolicyInput; invited_by?: string; principal_id?: string } = {}): CellCommand => ({
    type: 'invite-participant',
    data: { cell_id: 'cell-1', invited_by: extra.invited_by ?? 'dir-1', participant_id, role, ...(extra.policy ? { policy: extra.policy } : {}), ...(extra.principal_id ? { principal_id: extra.principal_id } : {}) },
    metadata: meta(s),
  }),
  accept: (s: number, participant_id = 'exec-1'): CellCommand => ({ type: 'accept-invitation', data: { participant_id }, metadata: meta(s) }),
  expire: (s: number, participant_id = 'exec-1'): CellCommand => ({ type: 'expire-invitation', data: { participant_id, expired_by: 'writ-executor' }, metadata: meta(s) }),
  prepare: (s: number, backend: 'docker' | 'process' = 'docker'): CellCommand => ({ type: 'prepare-cell', data: { backend, prepared_by: 'writ-executor' }, metadata: meta(s) }),
  activate: (s: number): CellCommand => ({ type: 'activate-cell', data: { spawned_by: 'writ-executor' }, metadata: meta(s) }),
  begin: (s: number, checkpoint_id = 'cp-1', final = false, requested_by = 'dir-1'): CellCommand => ({ type: 'begin-checkpoint', data: { checkpoint_id, requested_by, final }, metadata: meta(s) }),
  complete: (s: number, checkpoint_id = 'cp-1'): CellCommand => ({ type: 'complete-checkpoint', data: { checkpoint_id, sha256: 'a'.repeat(64), artifact_ref: `artifact:${checkpoint_id}` }, metadata: meta(s) }),
  beat: (s: number, participant_id = 'exec-1'): CellCommand => ({ type: 'record-heartbeat', data: { participant_id }, metadata: meta(s) }),
  down: (s: number, participant_id = 'exec-1'): CellCommand => ({ type: 'mark-downed', data: { participant_id }, metadata: meta(s) }),
  revive: (s: number, revived_by = 'exec-1'): CellCommand => ({ type: 'revive-cell', data: { revived_by }, metadata: meta(s) }),
  substitute: (s: number, participant_id = 'sub-1', invited_by = 'dir-1'): CellCommand => ({ type: 'invite-substitute', data: { invited_by, participant_id }, metadata: meta(s) }),
  close: (s: number, reason: 'explicit' | 'ttl_expired' | 'abandoned' | 'failed' = 'explicit', closed_by = 'dir-1'): CellCommand => ({ type: 'close-cell', data: { reason, closed_by }, metadata: meta(s) }),
  renew: (s: number, extend_ms?: number, renewed_by = 'dir-1'): CellCommand => ({ type: 'renew-active-ttl', data: { renewed_by, ...(extend_ms === undefined ? {} : { extend_ms }) }, metadata: meta(s) }),
  resurrect: (s: number, resurrected_by = 'dir-1'): CellCommand => ({ type: 'resurrect-cell', data: { resurrected_by }, metadata: meta(s) }),
  archive: (s: number): CellCommand => ({ type: 'archive-cell', data: { archived_by: 'writ-executor', archive_ref: 'lazarus-archive/2030-01-01/cell-1' }, metadata: meta(s) }),
  /** `cp-1`'s tarball (`complete` stores every checkpoint as 'a' × 64) deleted, nothing kept: the purge of a cell archived with one checkpoint. */
  purge: (s: number, deleted: readonly string[] = ['a'.repeat(64)], kept: readonly string[] = []): CellCommand => ({
    type: 'purge-archive',
    data: { purged_by: 'writ-executor', deleted_sha256: deleted, kept_sha256: kept },
    metadata: meta(s),
  }),
};

/** Runs `commands` through decide → evolve; returns every event, throwing on the first refusal. */
export function run(commands: readonly CellCommand[], history: readonly CellEvent[] = []): CellEvent[] {
  let state: CellState = history.reduce<CellState>((s, e) => cellDecider.evolve(s, e), cellDecider.initialState());
  const events: CellEvent[] = [...history];
  for (const command of commands) {
    const produced = cellDecider.decide(command, state);
    events.push(...produced);
    state = produced.reduce<CellState>((s, e) => cellDecider.evolve(s, e), state);
  }
  return events;
}

/** Timeline (seconds): invite 0 (expires 900), accept 10, prepare 20, activate 30 (TTL to 14 430, heartbeat deadline 120). */
export const PREFIX: Readonly<Record<CellStatus, readonly CellCommand[]>> = {
  IDLE: [],
  INVITED: [cmd.invite(0)],
  PREPARING: [cmd.invite(0), cmd.accept(10), cmd.prepare(20)],
  ACTIVE: [cmd.invite(0), cmd.accept(10), cmd.prepare(20), cmd.activate(30)],
  CHECKPOINTING: [cmd.invite(0), cmd.accept(10), cmd.prepare(20), cmd.activate(30), cmd.begin(40)],
  DOWNED: [cmd.invite(0), cmd.accept(10), cmd.prepare(20), cmd.activate(30), cmd.down(120)],
  CLOSED: [cmd.invite(0), cmd.accept(10), cmd.prepare(20), cmd.activate(30), cmd.close(60)],
  ARCHIVED: [cmd.invite(0), cmd.accept(10), cmd.prepare(20), cmd.activate(30), cmd.close(60), cmd.archive(60 + 1_800)],
};

/** The events that bring a cell to `status` (see PREFIX). */
export const reach = (status: CellStatus): CellEvent[] => run(PREFIX[status]);
