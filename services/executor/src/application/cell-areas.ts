import { CELL_DIRS, CELL_FILES, cellPermissions, type CellRole, type CellWriteArea } from '@writ/kernel';

/**
 * What a file action may touch in its cell, by the role of the seat it runs under
 * (Lazarus 3 and 6; `cellPermissions` of the kernel). Paths are relative to CELL_HOME,
 * already checked lexically (`workspacePath`): the project is CELL_HOME's root, so a
 * path is in one of four areas by its first segment:
 *
 * | first segment | area | write | read |
 * |---|---|---|---|
 * | `.lazarus` | the harness's | never | `cell.json`, `spawn.log`, `decisions.jsonl` |
 * | `home/<own seat>/…` | own home | if the role writes `own_home` | if the role runs |
 * | `home/<other>/…`, `home` | another's home | never | never |
 * | `shared/…` | shared area | if the role writes `shared` | always |
 * | anything else | project | if the role writes `project` | always |
 *
 * `home/<seat>` and `shared` themselves (the directories the harness made) are never
 * written: an action writes below them.
 */

export type CellAccess = 'read' | 'write';
export type CellArea = 'harness' | 'own_home' | 'other_home' | 'shared' | 'project';

export type CellAccessCheck =
  | { readonly ok: true; readonly area: CellArea }
  | { readonly ok: false; readonly code: 'EXECUTOR_CELL_WRITE_REFUSED' | 'EXECUTOR_CELL_READ_REFUSED'; readonly area: CellArea; readonly message: string };

const HARNESS = CELL_DIRS.lazarus.replace(/\/$/, '');
const HOME = CELL_DIRS.home.replace(/\/$/, '');
const SHARED = CELL_DIRS.shared.replace(/\/$/, '');
const HARNESS_READABLE: ReadonlySet<string> = new Set([CELL_FILES.metadata, CELL_FILES.spawn_log, CELL_FILES.decisions]);

/** The area of a CELL_HOME-relative path for the seat `participantId`. */
export function cellAreaOf(relative: string, participantId: string): CellArea {
  const segments = relative.split('/');
  if (segments[0] === HARNESS) return 'harness';
  if (segments[0] === HOME) return segments[1] === participantId && segments.length >= 2 ? 'own_home' : 'other_home';
  if (segments[0] === SHARED) return 'shared';
  return 'project';
}

/** May the seat `participantId` holding `role` read or write `relative`? Pure; a refusal says why, by code. */
export function checkCellAccess(relative: string, access: CellAccess, seat: { readonly participant_id: string; readonly role: CellRole }): CellAccessCheck {
  const area = cellAreaOf(relative, seat.participant_id);
  const permissions = cellPermissions(seat.role);
  const segments = relative.split('/');
  const refuse = (why: string): CellAccessCheck => ({
    ok: false,
    code: access === 'write' ? 'EXECUTOR_CELL_WRITE_REFUSED' : 'EXECUTOR_CELL_READ_REFUSED',
    area,
    message: `${seat.participant_id} (${seat.role}) may not ${access} ${relative}: ${why}`,
  });
  if (access === 'read') {
    if (area === 'harness') return HARNESS_READABLE.has(relative) ? { ok: true, area } : refuse('only the harness reads .lazarus/ beyond cell.json, spawn.log and decisions.jsonl');
    if (area === 'other_home') return refuse("another participant's home is private to it (Lazarus 5.2)");
    if (area === 'own_home' && !permissions.runs) return refuse('the role has no home');
    return { ok: true, area };
  }
  if (area === 'harness') return refuse('.lazarus/ is written by the harness only');
  if (area === 'other_home') return refuse("a participant writes only its own home, never another's");
  const needed: CellWriteArea = area === 'own_home' ? 'own_home' : area === 'shared' ? 'shared' : 'project';
  if (!permissions.write.includes(needed)) return refuse(`the role does not write the ${needed === 'own_home' ? 'own home' : needed} area`);
  // The directories the harness made stay: an action writes below them.
  if ((area === 'own_home' && segments.length < 3) || (area === 'shared' && segments.length < 2)) return refuse(`${relative} is a directory of the cell layout; write below it`);
  return { ok: true, area };
}
