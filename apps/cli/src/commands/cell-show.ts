import { Id, parseContract } from '@writ/contracts';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { connectNats } from '../event-log.js';
import { cell, fields } from '../format.js';
import { readCell } from './cell-common.js';

/** A cell as `writ cell show` reports it: the kernel's fold of its stream, and the stream itself. */
export interface CellView {
  readonly cell_id: string;
  readonly status: string;
  readonly director: string;
  readonly backend: string | null;
  readonly policy: Readonly<Record<string, unknown>>;
  readonly activated_at: string | null;
  readonly active_expires_at: string | null;
  readonly participants: readonly { participant_id: string; principal_id: string; role: string; status: string; replaces: string | null }[];
  readonly running: readonly { participant_id: string; last_heartbeat_at: string; deadline: string }[];
  readonly downed: { participant_id: string; at: string } | null;
  readonly checkpoints: readonly { checkpoint_id: string; final: boolean; sha256: string | null; artifact_ref: string | null; completed_at: string | null }[];
  readonly closed: { reason: string; closed_by: string; at: string; grace_ends_at: string } | null;
  readonly archived: { at: string; archive_ref: string | null; retention_ends_at: string } | null;
  readonly events: readonly { task_seq: number; event_type: string; occurred_at: string; actor_id: string }[];
}

/**
 * `writ cell show <cell_id> [--json]`: the cell as its stream says now (folded with the
 * kernel's cell decider): status, seats and roles, TTLs, heartbeats, checkpoints, graveyard
 * and archive, then every event. CLI_CELL_NOT_FOUND when the log holds no event of it.
 */
export async function cellShow(cellIdArg: string, options: { json?: boolean }, conn: Connection, io: CliIo): Promise<CellView> {
  const cellId = parseContract('cell id', Id, cellIdArg);
  const nc = await connectNats(conn);
  let folded;
  try {
    folded = await readCell(nc, conn, cellId);
  } finally {
    await nc.drain().catch(() => undefined);
  }
  const state = folded.state;
  if (state.status === 'IDLE') throw new CliError('CLI_CELL_NOT_FOUND', `the log holds no cell ${cellId} (a cell is created by its task's first action)`, { details: { cell_id: cellId } });
  const view: CellView = {
    cell_id: cellId,
    status: state.status,
    director: state.director_id,
    backend: state.backend,
    policy: state.policy,
    activated_at: state.activated_at,
    active_expires_at: state.active_expires_at,
    participants: state.participants.map((p) => ({ participant_id: p.participant_id, principal_id: p.principal_id, role: p.role, status: p.status, replaces: p.replaces })),
    running: state.running.map((r) => ({ ...r })),
    downed: state.downed,
    checkpoints: state.checkpoints.map((c) => ({ checkpoint_id: c.checkpoint_id, final: c.final, sha256: c.sha256, artifact_ref: c.artifact_ref, completed_at: c.completed_at })),
    closed: state.closed,
    archived: state.archived === null ? null : { at: state.archived.at, archive_ref: state.archived.archive_ref, retention_ends_at: state.archived.retention_ends_at },
    events: folded.events.map((event) => ({ task_seq: event.task_seq, event_type: event.event_type, occurred_at: event.occurred_at, actor_id: event.actor_id })),
  };
  if (options.json === true) {
    io.stdout(JSON.stringify(view));
    return view;
  }
  io.stdout(`cell ${cell(cellId)} ${view.status}`);
  for (const line of fields([
    ['director', view.director],
    ['backend', view.backend],
    ['activated', view.activated_at],
    ['active until', view.active_expires_at],
    ['downed', view.downed === null ? null : `${view.downed.participant_id} at ${view.downed.at}`],
    ['closed', view.closed === null ? null : `${view.closed.reason} by ${view.closed.closed_by} at ${view.closed.at}; grace until ${view.closed.grace_ends_at}`],
    ['archived', view.archived === null ? null : `at ${view.archived.at}; retained until ${view.archived.retention_ends_at}`],
  ])) {
    io.stdout(line);
  }
  io.stdout('seats:');
  for (const p of view.participants) io.stdout(`  ${cell(p.participant_id)}  ${p.role}  ${p.status}  (principal ${cell(p.principal_id)}${p.replaces === null ? '' : `, replaces ${cell(p.replaces)}`})`);
  if (view.checkpoints.length > 0) io.stdout('checkpoints:');
  for (const c of view.checkpoints) io.stdout(`  ${cell(c.checkpoint_id)}${c.final ? ' (final)' : ''}  ${cell(c.completed_at)}  ${cell(c.sha256, 20)}`);
  io.stdout('events:');
  for (const event of view.events) io.stdout(`  ${event.task_seq}  ${event.event_type}  ${cell(event.occurred_at)}  ${cell(event.actor_id)}`);
  return view;
}
