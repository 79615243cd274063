import type { CellIsolation, CellPolicy, CellRole } from './cell.policy.js';

/** The areas of a cell a participant's actions may write (Lazarus 6). `.lazarus/` is the harness's alone. */
export type CellWriteArea = 'own_home' | 'shared' | 'project';

/** What a participant's actions may do inside its cell. */
export interface CellPermissions {
  readonly role: CellRole;
  /** May run tools (commands, file writes, VCS): the action classes the executor runs. */
  readonly execute_tools: boolean;
  /** Areas writable through the participant's actions; an empty list is read-only. */
  readonly write: readonly CellWriteArea[];
  /** Every role reads the cell (project, shared area, cell metadata, own home); nobody reads another home. */
  readonly read: true;
  readonly invite: boolean;
  readonly checkpoint: boolean;
  readonly close: boolean;
  /** Override cell decisions, renew the active TTL, resurrect within grace. */
  readonly override: boolean;
  /** Whether the participant runs and heartbeats (so it can go DOWNED) and owns `home/<id>/`. */
  readonly runs: boolean;
  readonly isolation: CellIsolation;
  /** The cell policy switch the role needs, when it needs one (Lazarus 3.1). */
  readonly requires: 'allow_guest' | 'allow_substitute' | null;
}

const WORKER_WRITES: readonly CellWriteArea[] = Object.freeze(['own_home', 'shared', 'project']);

/**
 * Lazarus 3 as data. Decisions where the seed is open:
 * - director writes only `shared/` (notes it marks PUBLISH, 5.3) and never
 *   runs tools: to execute, the same principal takes a second seat through a
 *   new invitation as `executor` (3.1 "at most one primary role" is per seat;
 *   a seat's role never changes). Its "downgrade to observer" needs no
 *   command: a director's read access already is an observer's.
 * - guest is an executor from outside the fleet, always at `strict` isolation.
 * - substitute is an executor that replaces a DOWNED participant.
 */
const PERMISSIONS: Readonly<Record<CellRole, CellPermissions>> = Object.freeze({
  director: {
    role: 'director',
    execute_tools: false,
    write: Object.freeze(['shared'] as const),
    read: true,
    invite: true,
    checkpoint: true,
    close: true,
    override: true,
    runs: false,
    isolation: 'standard',
    requires: null,
  },
  executor: { role: 'executor', execute_tools: true, write: WORKER_WRITES, read: true, invite: false, checkpoint: false, close: false, override: false, runs: true, isolation: 'standard', requires: null },
  observer: { role: 'observer', execute_tools: false, write: Object.freeze([]), read: true, invite: false, checkpoint: false, close: false, override: false, runs: false, isolation: 'standard', requires: null },
  guest: { role: 'guest', execute_tools: true, write: WORKER_WRITES, read: true, invite: false, checkpoint: false, close: false, override: false, runs: true, isolation: 'strict', requires: 'allow_guest' },
  substitute: {
    role: 'substitute',
    execute_tools: true,
    write: WORKER_WRITES,
    read: true,
    invite: false,
    checkpoint: false,
    close: false,
    override: false,
    runs: true,
    isolation: 'standard',
    requires: 'allow_substitute',
  },
} satisfies Record<CellRole, CellPermissions>);

export const CELL_ROLES: readonly CellRole[] = Object.freeze(['director', 'executor', 'observer', 'guest', 'substitute']);

/** What a participant holding `role` may do inside its cell. */
export function cellPermissions(role: CellRole): CellPermissions {
  return PERMISSIONS[role];
}

/** Whether the cell policy lets `role` join at all. */
export function roleEnabled(role: CellRole, policy: Pick<CellPolicy, 'allow_guest' | 'allow_substitute'>): boolean {
  const { requires } = PERMISSIONS[role];
  return requires === null || policy[requires];
}
