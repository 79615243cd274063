import { Id } from '@writ/contracts';
import { CellError } from './cell.errors.js';
import type { CellRole } from './cell.policy.js';
import { cellPermissions } from './cell.roles.js';

/** The files of the contract. `.lazarus/` is written by the harness only; participants read it. */
export const CELL_FILES = Object.freeze({
  metadata: '.lazarus/cell.json',
  spawn_log: '.lazarus/spawn.log',
  decisions: '.lazarus/decisions.jsonl',
  scratchpad: 'shared/scratchpad.md',
});
export const CELL_DIRS = Object.freeze({
  lazarus: '.lazarus/',
  checkpoints: '.lazarus/checkpoints/',
  project: 'project/',
  shared: 'shared/',
  artifacts: 'shared/artifacts/',
  home: 'home/',
});

export interface CellLayoutParticipant {
  readonly participant_id: string;
  readonly role: CellRole;
}

/**
 * The directory contract of one cell (Lazarus 6), relative to its root: the
 * adapter picks the root (`/tmp/lazarus-cells/<root>/`, a volume per cell) and
 * creates exactly this. Only running roles get a home.
 */
export interface CellLayout {
  /** The cell's directory name under the adapter's cells root. */
  readonly root: string;
  readonly directories: readonly string[];
  readonly files: readonly string[];
  /** participant id → its home directory. */
  readonly homes: Readonly<Record<string, string>>;
}

function checkedId(value: string, what: string): string {
  if (!Id.safeParse(value).success) throw new CellError('CELL_ID_INVALID', `${what} ${JSON.stringify(value)} is not a valid id (it becomes a path segment)`, { details: { field: what } });
  return value;
}

/** `home/<id>/`, for a participant id that is safe as one path segment. */
export function homePath(participantId: string): string {
  return `${CELL_DIRS.home}${checkedId(participantId, 'participant_id')}/`;
}

export function cellLayout(cellId: string, participants: readonly CellLayoutParticipant[]): CellLayout {
  const root = checkedId(cellId, 'cell_id');
  const homes: Record<string, string> = {};
  for (const participant of [...participants].sort((a, b) => (a.participant_id < b.participant_id ? -1 : a.participant_id > b.participant_id ? 1 : 0))) {
    if (cellPermissions(participant.role).runs) homes[participant.participant_id] = homePath(participant.participant_id);
  }
  return Object.freeze({
    root,
    directories: Object.freeze([CELL_DIRS.lazarus, CELL_DIRS.checkpoints, CELL_DIRS.project, CELL_DIRS.shared, CELL_DIRS.artifacts, CELL_DIRS.home, ...Object.values(homes)]),
    files: Object.freeze([CELL_FILES.metadata, CELL_FILES.spawn_log, CELL_FILES.decisions, CELL_FILES.scratchpad]),
    homes: Object.freeze(homes),
  });
}

/**
 * What the participant's actions may write, relative to the cell root: its
 * own home, the shared area and the project, as its role allows. Never
 * another participant's home, never `.lazarus/`; an observer writes nothing.
 */
export function writablePaths(role: CellRole, participantId: string): readonly string[] {
  const home = homePath(participantId);
  return Object.freeze(
    cellPermissions(role).write.map((area) => (area === 'own_home' ? home : area === 'shared' ? CELL_DIRS.shared : CELL_DIRS.project)),
  );
}

/** What the participant may read: the cell minus every home but its own (home memory is private, Lazarus 5.2). */
export function readablePaths(role: CellRole, participantId: string): readonly string[] {
  const own = cellPermissions(role).runs ? [homePath(participantId)] : [];
  return Object.freeze([CELL_FILES.metadata, CELL_FILES.spawn_log, CELL_FILES.decisions, CELL_DIRS.project, CELL_DIRS.shared, ...own]);
}
