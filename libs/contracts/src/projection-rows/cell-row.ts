import { z } from 'zod';
import { RowCount, RowId, RowTimestamp } from './row-fields.js';

/** The Lazarus statuses a cell row can show (null while only execution facts were folded). */
export const CellRowStatus = z.enum(['INVITED', 'PREPARING', 'ACTIVE', 'CHECKPOINTING', 'DOWNED', 'CLOSED', 'ARCHIVED']);
export type CellRowStatus = z.infer<typeof CellRowStatus>;

/** One seat of a cell. */
export const ParticipantSummary = z.strictObject({
  participant_id: RowId,
  principal_id: RowId.nullable(),
  role: z.string().nullable(),
  status: z.string(),
});
export type ParticipantSummary = z.infer<typeof ParticipantSummary>;

/** A cell (Lazarus 4, 7), where actions run: the `cells` view (`GET /v1/cells`, `<root>.proj.cells.<id>`). */
export const CellRow = z
  .strictObject({
    cell_id: RowId,
    source: z.enum(['cell', 'execution']).describe('cell once a cell event was folded; execution while only execution facts were.'),
    task_id: RowId.nullable(),
    status: z.string().nullable().describe('Lazarus status (INVITED … ARCHIVED); null when unknown.'),
    director_id: RowId.nullable(),
    backend: z.string().nullable(),
    participants: z.array(ParticipantSummary),
    active_expires_at: RowTimestamp.nullable(),
    last_heartbeat_at: RowTimestamp.nullable(),
    checkpoints: RowCount,
    last_checkpoint_id: z.string().nullable(),
    last_checkpoint_sha256: z.string().nullable(),
    closed_reason: z.string().nullable(),
    container_id: z.string().nullable(),
    image: z.string().nullable(),
    image_id: z.string().nullable(),
    network_mode: z.string().nullable(),
    executions: RowCount.describe('execution.completed events seen for this cell.'),
    last_execution_outcome: z.string().nullable(),
    last_cell_seq: RowCount.describe("Sequence of the last cell event folded (in the cell's stream)."),
    last_task_seq: RowCount.describe("Sequence of the last execution fact folded (in the task's stream)."),
    last_event_type: z.string(),
    created_at: RowTimestamp,
    updated_at: RowTimestamp,
  })
  .meta({ title: 'CellRow', description: 'A cell where actions run (the cells view).' });
export type CellRow = z.infer<typeof CellRow>;
