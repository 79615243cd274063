import { z } from 'zod';
import { LIMITS } from './limits.js';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * Any JSON value, with bounded strings, arrays and objects. Used for the open
 * part of otherwise typed objects (extra action params). Wrap the owning
 * object in `withinJsonBounds` so depth and total size are checked before
 * this recursive schema walks the value.
 */
export const JsonValue: z.ZodType<JsonValue> = z
  .lazy(() =>
    z.union([
      z.string().max(LIMITS.jsonString),
      z.number(),
      z.boolean(),
      z.null(),
      z.array(JsonValue).max(LIMITS.jsonItems),
      z
        .record(z.string().max(LIMITS.title), JsonValue)
        .refine((o) => Object.keys(o).length <= LIMITS.jsonItems, `must have at most ${LIMITS.jsonItems} keys`)
        .meta({ maxProperties: LIMITS.jsonItems }),
    ]),
  )
  .meta({ id: 'JsonValue', description: 'Any JSON value (bounded strings, arrays and objects).' });

/**
 * Returns why `value` is too large (deeper than `LIMITS.jsonDepth` or more than
 * `LIMITS.jsonNodes` nodes), or undefined when it is within bounds. Iterative,
 * and stops at the first exceeded bound, so hostile nesting cannot exhaust the stack.
 */
export function jsonBoundsIssue(value: unknown): string | undefined {
  let nodes = 1;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    if (entry.depth > LIMITS.jsonDepth) return `must nest at most ${LIMITS.jsonDepth} levels deep`;
    const current = entry.value;
    if (typeof current !== 'object' || current === null) continue;
    const children = Array.isArray(current) ? current : Object.values(current);
    nodes += children.length;
    if (nodes > LIMITS.jsonNodes) return `must hold at most ${LIMITS.jsonNodes} JSON values`;
    for (const child of children) stack.push({ value: child, depth: entry.depth + 1 });
  }
  return undefined;
}

/**
 * Checks depth and size of the raw input first, then parses it with `schema`.
 * The JSON Schema of the result is `schema`'s.
 */
export function withinJsonBounds<S extends z.ZodType>(schema: S) {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      const reason = jsonBoundsIssue(value);
      if (reason !== undefined) ctx.addIssue({ code: 'custom', message: reason });
    })
    .pipe(schema);
}
