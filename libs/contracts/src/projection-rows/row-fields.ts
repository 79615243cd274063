import { z } from 'zod';

/**
 * The field types the projection's rows share. They describe what a row
 * holds as Postgres hands it back (and as the projector publishes it on
 * `<root>.proj.<view>.<id>`), no stricter: a fold copies ids out of events it
 * does not re-validate (a ref's tail, say), so an id column is a bounded string
 * (varchar(128)) here, not the stricter `Id` of a command.
 */

/** An id column: at most 128 characters (the column's bound). */
export const RowId = z.string().min(1).max(128);

/**
 * A timestamp as the projection stores and serves it: UTC, millisecond
 * precision (`2030-01-01T00:00:02.000Z`), the form `Date#toISOString` gives,
 * whatever offset the event was written with.
 */
export const RowTimestamp = z.iso.datetime();

/** A count or a sequence number. */
export const RowCount = z.int().nonnegative();

/** A JSON object copied from an event (redacted where the view says so). */
export const RowObject = z.record(z.string(), z.unknown());
