import { z } from 'zod';

/** Rows a page holds when `limit` is not given. */
export const PAGE_LIMIT_DEFAULT = 200;
/** The most rows a page may hold. */
export const PAGE_LIMIT_MAX = 1_000;
/** The longest cursor the API accepts (a cursor it made is far shorter). */
export const PAGE_CURSOR_MAX = 512;

/** A query string's digits as the number they spell; anything else is left as is, so it fails the integer check with the parameter's name. */
function digitsToInteger(value: unknown): unknown {
  return typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;
}

/** `?limit=`: page size, 1 to PAGE_LIMIT_MAX, PAGE_LIMIT_DEFAULT when absent. */
export const PageLimit = z
  .preprocess(digitsToInteger, z.int().min(1).max(PAGE_LIMIT_MAX))
  .default(PAGE_LIMIT_DEFAULT)
  .describe(`Rows per page: 1 to ${PAGE_LIMIT_MAX}, default ${PAGE_LIMIT_DEFAULT}.`);

/**
 * `?cursor=`: where the next page starts, exactly as the previous page's
 * `next_cursor` gave it. Opaque: base64url of the position in the list's
 * order and a fingerprint of the list and its filters (a cursor is refused
 * with other filters, another list or when altered). It is not a credential:
 * every page applies the caller's scope again.
 */
export const PageCursor = z
  .string()
  .min(1)
  .max(PAGE_CURSOR_MAX)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be a next_cursor this API returned')
  .describe("The previous page's next_cursor, as given (opaque). Absent: the first page.");

/** A page of a list: `items` in the list's order and the cursor of the next page (null on the last page). */
export function pageOf<Item extends z.ZodType>(item: Item) {
  return z.strictObject({
    items: z.array(item),
    next_cursor: PageCursor.nullable().describe('Pass as ?cursor= for the next page (same filters); null when this page is the last.'),
  });
}
