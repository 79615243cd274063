import { z } from 'zod';
import { WorkingStateEntry, WorkingStateLimits } from '../knowledge/working-state.js';
import { RowCount, RowId, RowInstant, RowRef, RowVersion } from './row-fields.js';

/**
 * `<root>.proj.working_states.<task_id>`: a task's working state as its
 * `working_state.*` events fold (Hermit 13.6 working state view): the current
 * entries, sorted by key, and the revision they are at. An entry marked
 * `sensitivity: secret` is listed with its value withheld (`value_withheld`),
 * never by value (invariant 6).
 */
export const WorkingStateRowSchema = z.strictObject({
  task_id: RowId,
  revision: RowCount,
  limits: WorkingStateLimits,
  // `value` as any JSON (a recursive JsonValue would leave a dangling $ref in the AsyncAPI document).
  entries: z.array(
    WorkingStateEntry.extend({ value: z.unknown(), value_withheld: z.literal(true).optional().describe('The entry is secret: its value is not shown (null).') }),
  ),
  entry_count: RowCount,
  /** The signed request the last revision came from. */
  last_request_id: RowRef,
  /** Who made the last revision or compaction. */
  last_revised_by: RowRef,
  compactions: RowCount,
  opened_at: RowInstant,
  updated_at: RowInstant,
  row_version: RowVersion,
});
export type WorkingStateRow = z.infer<typeof WorkingStateRowSchema>;
