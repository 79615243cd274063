import { field, idField, instant, isObject, occurredAt, text, type ProjectedEvent } from '../projected-event.js';
import { patch, type Locator, type View, type Folded } from './view.js';
import type { CellRow, ParticipantSummary } from '@writ/contracts/projection-rows';

/**
 * Cells (Lazarus 4, 7): where actions run, one row per cell. The executor
 * names a task's cell after the task (cell id = task id), so two sources
 * meet in one row:
 *
 * - the cell aggregate, `<root>.evt.cell.<cell_id>` (the kernel's
 *   `CellEvent`s). The mapping is deliberately tolerant, so that the
 *   executor's lifecycle can grow without stalling or rewriting this view:
 *   every `cell.*` event creates the row if it is missing and records itself
 *   as `last_event_type`; the events of `CELL_STATUS_BY_EVENT` set the status;
 *   fields are read when present and left alone when not; an event type not
 *   listed changes nothing else. It follows the log, not the kernel's
 *   transition checks (the executor enforces those before it appends).
 * - the task stream's execution facts (`execution.started`: the container;
 *   `execution.completed`: the environment actually applied, the outcome),
 *   folded into the row of the task's cell. A row that has only these has
 *   `source: 'execution'` and no status (no lifecycle event seen yet).
 */

export type { CellRow, ParticipantSummary };

/** The status each cell event moves to (Lazarus 4.1). `cell.checkpoint_completed` is ACTIVE unless final. */
export const CELL_STATUS_BY_EVENT: Readonly<Record<string, string>> = {
  'cell.participant_invited': 'INVITED',
  'cell.preparing': 'PREPARING',
  'cell.activated': 'ACTIVE',
  'cell.checkpoint_started': 'CHECKPOINTING',
  'cell.checkpoint_completed': 'ACTIVE',
  'cell.downed': 'DOWNED',
  'cell.revived': 'ACTIVE',
  'cell.closed': 'CLOSED',
  'cell.resurrected': 'ACTIVE',
  'cell.archived': 'ARCHIVED',
};

const EXECUTION_EVENTS = new Set(['execution.started', 'execution.completed']);

/** The cell a task's executions ran in: the executor names it after the task. */
export function executionCellId(taskId: string): string {
  return taskId;
}

function locate(event: ProjectedEvent): Locator | undefined {
  const type = event.envelope.event_type;
  if (event.aggregate.type === 'cell' && type.startsWith('cell.')) return { cell_id: event.aggregate.id };
  if (event.aggregate.type === 'task' && EXECUTION_EVENTS.has(type)) return { cell_id: executionCellId(event.aggregate.id) };
  return undefined;
}

function emptyRow(cellId: string, source: CellRow['source'], taskId: string | null, at: string): Folded<CellRow> {
  return {
    cell_id: cellId,
    source,
    task_id: taskId,
    status: null,
    director_id: null,
    backend: null,
    participants: [],
    active_expires_at: null,
    last_heartbeat_at: null,
    checkpoints: 0,
    last_checkpoint_id: null,
    last_checkpoint_sha256: null,
    closed_reason: null,
    container_id: null,
    image: null,
    image_id: null,
    network_mode: null,
    executions: 0,
    last_execution_outcome: null,
    last_cell_seq: 0,
    last_task_seq: 0,
    last_event_type: '',
    created_at: at,
    updated_at: at,
  };
}

function seat(value: unknown, status: string): ParticipantSummary | undefined {
  const participantId = idField(value, 'participant_id');
  if (participantId === null) return undefined;
  return { participant_id: participantId, principal_id: idField(value, 'principal_id'), role: text(value, 'role'), status };
}

/** The participants with `next` added (or its status set when it is there already). */
function withSeat(participants: readonly ParticipantSummary[], next: ParticipantSummary | undefined): ParticipantSummary[] {
  if (next === undefined) return [...participants];
  const index = participants.findIndex((p) => p.participant_id === next.participant_id);
  return index === -1 ? [...participants, next] : participants.map((p, i) => (i === index ? { ...p, status: next.status } : p));
}

function withStatus(participants: readonly ParticipantSummary[], participantId: string | null, status: string): ParticipantSummary[] {
  return participantId === null ? [...participants] : participants.map((p) => (p.participant_id === participantId ? { ...p, status } : p));
}

function foldCellEvent(row: Folded<CellRow>, event: ProjectedEvent, at: string): Folded<CellRow> {
  const { envelope } = event;
  const type = envelope.event_type;
  const data = envelope.payload;
  const changes: { -readonly [K in keyof CellRow]?: CellRow[K] } = { source: 'cell', last_cell_seq: envelope.task_seq, last_event_type: type };
  const status = CELL_STATUS_BY_EVENT[type];
  if (status !== undefined) changes.status = status;
  switch (type) {
    case 'cell.participant_invited': {
      const created = field(data, 'created');
      let participants = row.participants;
      if (isObject(created)) {
        participants = withSeat(participants, seat(created['director'], 'accepted'));
        changes.director_id = idField(data, 'invited_by') ?? idField(created['director'], 'principal_id');
      } else if (row.status !== null) {
        // Inviting into an existing cell does not move it.
        delete changes.status;
      }
      changes.participants = withSeat(participants, seat(field(data, 'participant'), 'invited'));
      break;
    }
    case 'cell.substitute_invited':
      changes.participants = withSeat(row.participants, seat(field(data, 'participant'), 'invited'));
      break;
    case 'cell.invitation_accepted':
      changes.participants = withStatus(row.participants, idField(data, 'participant_id'), 'accepted');
      break;
    case 'cell.invitation_expired':
      changes.participants = withStatus(row.participants, idField(data, 'participant_id'), 'expired');
      break;
    case 'cell.preparing':
      changes.backend = text(data, 'backend') ?? row.backend;
      break;
    case 'cell.activated':
    case 'cell.resurrected':
      changes.active_expires_at = instant(data['active_expires_at']) ?? row.active_expires_at;
      changes.closed_reason = null;
      break;
    case 'cell.ttl_renewed':
      changes.active_expires_at = instant(data['active_expires_at']) ?? row.active_expires_at;
      break;
    case 'cell.heartbeat_recorded':
      changes.last_heartbeat_at = instant(data['at']) ?? at;
      break;
    case 'cell.checkpoint_completed':
      // A final checkpoint keeps the cell CHECKPOINTING until the cell.closed appended with it.
      if (data['final'] === true) delete changes.status;
      changes.checkpoints = row.checkpoints + 1;
      changes.last_checkpoint_id = idField(data, 'checkpoint_id');
      changes.last_checkpoint_sha256 = text(data, 'sha256');
      break;
    case 'cell.revived': {
      const replaced = idField(data, 'replaced');
      if (replaced !== null) changes.participants = withStatus(row.participants, replaced, 'replaced');
      break;
    }
    case 'cell.closed':
      changes.closed_reason = text(data, 'reason');
      break;
    default:
      break;
  }
  return patch(row, changes, at);
}

function foldExecution(row: Folded<CellRow>, event: ProjectedEvent, at: string): Folded<CellRow> {
  const data = event.envelope.payload;
  const changes: { -readonly [K in keyof CellRow]?: CellRow[K] } = { task_id: event.aggregate.id, last_task_seq: event.envelope.task_seq, last_event_type: event.envelope.event_type };
  if (event.envelope.event_type === 'execution.started') {
    changes.container_id = text(data, 'container_id') ?? row.container_id;
  } else {
    const environment = field(data, 'environment');
    changes.executions = row.executions + 1;
    changes.last_execution_outcome = text(data, 'outcome');
    if (isObject(environment)) {
      changes.image = text(environment, 'image');
      changes.image_id = text(environment, 'image_id');
      changes.network_mode = text(environment, 'network_mode');
    }
  }
  return patch(row, changes, at);
}

function fold(row: Folded<CellRow> | undefined, event: ProjectedEvent, locator: Locator | undefined = locate(event)): Folded<CellRow> | undefined {
  const at = occurredAt(event);
  const cellId = locator?.['cell_id'];
  if (typeof cellId !== 'string') return row;
  const fromCell = event.aggregate.type === 'cell';
  // An event at or below the last one folded from its stream (a duplicate in the log) changes nothing.
  if (row !== undefined && event.envelope.task_seq <= (fromCell ? row.last_cell_seq : row.last_task_seq)) return row;
  if (fromCell) return foldCellEvent(row ?? emptyRow(cellId, 'cell', null, instant(event.envelope.payload['at']) ?? at), event, at);
  return foldExecution(row ?? emptyRow(cellId, 'execution', event.aggregate.id, at), event, at);
}

export const cellsView: View<CellRow> = {
  name: 'cells',
  primaryKey: ['cell_id'],
  published: true,
  topicId: (row) => row.cell_id,
  locate,
  fold,
};
