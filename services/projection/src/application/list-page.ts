import { LIST_QUERIES, PAGE_CURSOR_MAX, type ListName } from '@writ/contracts';
import { RowKeyset } from '@writ/contracts/projection-rows';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import type { z } from 'zod';
import { ProjectionError } from './projection-errors.js';

/**
 * Keyset pagination of the list endpoints. Each list is ordered by a column
 * that never changes once its row exists and the row's id (the tie-break),
 * so a page starts strictly after the last row of the one before: rows
 * inserted meanwhile never shift a page (no OFFSET), a walk sees every row
 * that existed when it started exactly once, and each page is one index
 * range scan however deep the walk goes.
 */

/** Where a page starts: strictly after (before, in a descending list) this position. */
export interface Keyset {
  /** The list's time column of the last row served, as the row holds it (UTC ISO, milliseconds). */
  readonly at: string;
  readonly id: string;
}

/** The version of the cursor format; a cursor of another version is refused. */
const CURSOR_VERSION = 1;

/** The parsed query of a list: its filters and page. */
export type ListQueryOf<N extends ListName> = z.output<(typeof LIST_QUERIES)[N]>;

/** A list's filters as its cursors commit to them: the query without `limit` and `cursor`. */
export type ListFilterOf<N extends ListName> = Omit<ListQueryOf<N>, 'limit' | 'cursor'>;

/**
 * `req.query` parsed with the list's contract (`@writ/contracts`,
 * `LIST_QUERIES`): an unknown parameter, a repeated one, a value out of its
 * vocabulary or bounds is 400 PROJECTION_REQUEST_INVALID naming the
 * parameter; a `cursor` that is not even shaped like one is
 * PROJECTION_CURSOR_INVALID.
 */
export function parseListQuery<N extends ListName>(list: N, raw: unknown): ListQueryOf<N> {
  const schema = LIST_QUERIES[list] as z.ZodType;
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data as ListQueryOf<N>;
  const issue = parsed.error.issues[0];
  const allowed = Object.keys(LIST_QUERIES[list].shape).join(', ');
  if (issue?.code === 'unrecognized_keys') {
    const [unknown] = issue.keys;
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', `unknown query parameter ${issue.keys.join(', ')}: GET /v1/${list} takes ${allowed}`, {
      details: { parameter: unknown },
    });
  }
  const parameter = String(issue?.path[0] ?? 'query');
  if (parameter === 'cursor') throw cursorInvalid('it is not a cursor this API made');
  const value = (raw as Record<string, unknown> | null | undefined)?.[parameter];
  const why = Array.isArray(value) ? 'give it once' : (issue?.message ?? 'malformed');
  throw new ProjectionError('PROJECTION_REQUEST_INVALID', `query parameter ${parameter}: ${why}`, { details: { parameter } });
}

/**
 * What a cursor commits to besides its position: the list and its filters
 * (SHA-256 of their canonical JSON, 16 hex digits). A cursor replayed with
 * other filters would silently skip or repeat rows; it is refused instead.
 */
export function listFingerprint(list: ListName, filter: Readonly<Record<string, unknown>>): string {
  const defined = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== undefined));
  return sha256Hex(canonicalJson({ list, filter: defined })).slice(0, 16);
}

/** The opaque `next_cursor`: base64url of `{ v, l, f, k: [at, id] }`. */
export function encodeCursor(list: ListName, fingerprint: string, key: Keyset): string {
  return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, l: list, f: fingerprint, k: [key.at, key.id] })).toString('base64url');
}

/** The position a cursor holds, once it proves to be this list's and these filters'; PROJECTION_CURSOR_INVALID otherwise. */
export function decodeCursor(cursor: string, list: ListName, fingerprint: string): Keyset {
  if (cursor.length > PAGE_CURSOR_MAX || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw cursorInvalid('it is not a cursor this API made');
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw cursorInvalid('it is not a cursor this API made');
  }
  const { v, l, f, k } = (typeof body === 'object' && body !== null ? body : {}) as { v?: unknown; l?: unknown; f?: unknown; k?: unknown };
  if (v !== CURSOR_VERSION || !RowKeyset.safeParse(k).success) {
    throw cursorInvalid('it is not a cursor this API made');
  }
  if (l !== list || f !== fingerprint) throw cursorInvalid(`it belongs to another list or other filters than GET /v1/${list} with these`);
  const [at, id] = k as [string, string];
  return { at, id };
}

function cursorInvalid(why: string): ProjectionError {
  return new ProjectionError('PROJECTION_CURSOR_INVALID', `cursor refused: ${why}; pass next_cursor exactly as the previous page gave it, with the same filters, or start again without cursor`, {
    details: { parameter: 'cursor' },
  });
}
