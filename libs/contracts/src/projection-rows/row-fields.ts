import { z } from 'zod';
import { Id, Timestamp } from '../ids.js';

/**
 * The column types the projection's rows share. The rows are derived data
 * (what the log said when the projection folded it), so the schemas describe
 * what a fold writes: a primary key is a Writ `Id` (it is the last token of
 * the row's `<root>.proj.<view>.<id>` subject), other ids are the bounded
 * strings their columns hold, timestamps are canonical ISO instants.
 */

/** A row's own id: one NATS subject token. */
export const RowId = Id;

/** An id another row or object carries (varchar(128) in its table); null when the log has not said it yet. */
export const RowRef = z.string().min(1).max(128).nullable();

/** Free text the log carried (a code, a class, a title); null when absent. */
export const RowText = z.string().nullable();

export const RowInstant = Timestamp;

export const RowCount = z.int().min(0);

/**
 * The log sequence (JetStream stream sequence of the event log) of the last
 * event that changed this row. It only grows; every published message and
 * every change of `GET /v1/changes` carries it, and a dashboard resumes after
 * the highest one it holds (docs/dashboard-contract.md).
 */
export const RowVersion = z
  .int()
  .min(1)
  .max(Number.MAX_SAFE_INTEGER)
  .describe('the log sequence of the last event applied to this row: it only grows; resume after the highest one you hold');

/** A jsonb object column. */
export const RowObject = z.record(z.string(), z.unknown());

/**
 * The position a list cursor holds (`GET /v1/tasks|actions|approvals|receipts|cells`,
 * inside the opaque `next_cursor`): the list's time column of the last row
 * served, as the row holds it, and that row's id (the tie-break; any id its
 * column holds).
 */
export const RowKeyset = z.tuple([RowInstant, z.string().min(1).max(128)]);
