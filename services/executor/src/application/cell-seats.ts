import { sha256Hex } from '@writ/crypto';
import { cellPermissions, type CellParticipant, type CellRecord, type CellRole, type CellState } from '@writ/kernel';
import { CELL_GID, CELL_SEAT_UID_BASE, CELL_UID_MAX, type CellUser } from '../outbound/cells/cell-config.js';
import { ExecutorError } from './executor-errors.js';

/**
 * Seats of a task's cell (Lazarus 3). A cell is created by the first action of its
 * task with a director seat for the task's principal (`owner_principal_id` of
 * `task.created`), whose seat id is that principal id; every principal whose actions
 * run in the cell holds a working seat (`executor`, or `substitute` when it took over a
 * downed one), and that seat's id names its home: `home/<seat>/`.
 */

/** Roles whose seats run actions (and own a home). */
const WORKING_ROLES: readonly CellRole[] = ['executor', 'guest', 'substitute'];

/** The seat a principal's actions run under, and whether it still has to join. */
export interface WorkingSeat {
  readonly participant_id: string;
  /** The seat as the cell records it; undefined when the principal has none yet (a new seat is `participant_id`). */
  readonly seat: CellParticipant | undefined;
}

const MAX_ID = 128;

/** A seat id that is a valid Id: the candidate itself, or a hash of it when too long. */
function fit(candidate: string): string {
  return candidate.length <= MAX_ID ? candidate : `seat-${sha256Hex(candidate).slice(0, 40)}`;
}

/**
 * The working seat of `principalId`: the one it holds (accepted before invited; never a
 * replaced or expired one), else a new id nobody in the cell holds: the principal id, or
 * `<principal>-exec`, `<principal>-exec-2`, … when that is taken (the task's principal holds
 * the director seat under its own id, and a seat's role never changes).
 */
export function workingSeatFor(state: CellState, principalId: string): WorkingSeat {
  const participants = state.status === 'IDLE' ? [] : state.participants;
  const held = participants.filter((p) => p.principal_id === principalId && WORKING_ROLES.includes(p.role) && (p.status === 'accepted' || p.status === 'invited'));
  const seat = held.find((p) => p.status === 'accepted') ?? held[0];
  if (seat !== undefined) return { participant_id: seat.participant_id, seat };
  const taken = new Set(participants.map((p) => p.participant_id));
  for (let n = 1; ; n += 1) {
    const candidate = fit(n === 1 ? principalId : n === 2 ? `${principalId}-exec` : `${principalId}-exec-${n - 1}`);
    if (!taken.has(candidate)) return { participant_id: candidate, seat: undefined };
  }
}

/** The seat a creating cell gives its first worker when the director seat takes the principal's own id. */
export function firstWorkingSeat(ownerPrincipalId: string, principalId: string): string {
  return ownerPrincipalId === principalId ? fit(`${principalId}-exec`) : principalId;
}

/**
 * Who a seat's execs run as in its cell (`docker exec` `User: uid:gid`): uid
 * `CELL_SEAT_UID_BASE + <the seat's ordinal in the cell's participant list>`. Deterministic:
 * participants are only ever appended (an expired or replaced seat keeps its place), so every
 * executor folding the cell's stream, on any host, gives a seat the same uid; a restore
 * elsewhere gives each home back to it, and a substitute (a new seat) never gets its
 * predecessor's. Nothing is allocated or recorded beyond the events the cell already has.
 *
 * gid: the cell group (`CELL_GID`) for a role that writes the project (executor, guest,
 * substitute; they write `shared/` too, per the kernel's role table), so it writes both;
 * its own uid for any other role (observer; a director, which never runs tools): read-only
 * everywhere it can read. The group cannot express "`shared/` but not the project": a
 * director that did run would be read-only.
 */
export function seatUser(state: CellRecord, participantId: string): CellUser {
  const ordinal = state.participants.findIndex((p) => p.participant_id === participantId);
  const seat = state.participants[ordinal];
  if (seat === undefined) {
    throw new ExecutorError('EXECUTOR_INTERNAL', `cell ${state.cell_id} has no seat ${participantId} to run as`, { details: { cell_id: state.cell_id, participant_id: participantId } });
  }
  const uid = CELL_SEAT_UID_BASE + ordinal;
  if (uid > CELL_UID_MAX) {
    throw new ExecutorError('EXECUTOR_INTERNAL', `cell ${state.cell_id} has more seats than uids for them`, { details: { cell_id: state.cell_id, participant_id: participantId } });
  }
  return { uid, gid: cellPermissions(seat.role).write.includes('project') ? CELL_GID : uid };
}
