import { z } from 'zod';
import { RowCount, RowId, RowInstant, RowRef, RowText, RowVersion } from './row-fields.js';

/** The Lazarus statuses a cell row can show (`status` is null while only execution facts were folded); `GET /v1/cells?status=` takes one. */
export const CELL_ROW_STATUSES = ['INVITED', 'PREPARING', 'ACTIVE', 'CHECKPOINTING', 'DOWNED', 'CLOSED', 'ARCHIVED'] as const;
export const CellRowStatusSchema = z.enum(CELL_ROW_STATUSES);
export type CellRowStatus = z.infer<typeof CellRowStatusSchema>;

/** One seat of a cell. */
export const ParticipantSummarySchema = z.strictObject({
  participant_id: z.string(),
  principal_id: RowRef,
  role: RowText,
  status: z.string(),
});
export type ParticipantSummary = z.infer<typeof ParticipantSummarySchema>;

/**
 * `<root>.proj.cells.<cell_id>`: a Lazarus cell, where actions run (a task's
 * execution cell is named after the task), from its lifecycle events and the
 * task's execution facts.
 */
export const CellRowSchema = z.strictObject({
  cell_id: RowId,
  /** `cell` once a cell event was folded; `execution` while only execution facts were. */
  source: z.enum(['cell', 'execution']),
  task_id: RowRef,
  /** Lazarus status (`INVITED` … `ARCHIVED`); null when unknown. */
  status: RowText,
  director_id: RowRef,
  backend: RowText,
  participants: z.array(ParticipantSummarySchema),
  active_expires_at: RowInstant.nullable(),
  last_heartbeat_at: RowInstant.nullable(),
  checkpoints: RowCount,
  last_checkpoint_id: RowRef,
  last_checkpoint_sha256: RowText,
  closed_reason: RowText,
  container_id: RowText,
  image: RowText,
  image_id: RowText,
  network_mode: RowText,
  /** `execution.completed` events seen for this cell. */
  executions: RowCount,
  last_execution_outcome: RowText,
  /** Sequence of the last cell event folded (in the cell's stream), and of the last execution fact (in the task's). */
  last_cell_seq: z.int().min(0),
  last_task_seq: z.int().min(0),
  last_event_type: z.string(),
  created_at: RowInstant,
  updated_at: RowInstant,
  row_version: RowVersion,
});
export type CellRow = z.infer<typeof CellRowSchema>;
