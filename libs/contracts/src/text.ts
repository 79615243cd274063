import { z } from 'zod';
import { LIMITS } from './limits.js';

/** A one-line human title or display name. */
export const Title = z.string().min(1).max(LIMITS.title);

/** A reason, summary or short explanation. */
export const Text = z.string().min(1).max(LIMITS.text);

/** A goal or rationale: free-form, bounded. */
export const LongText = z.string().min(1).max(LIMITS.longText);

/** A filesystem path or path pattern; no NUL or other control characters. */
export const FilePath = z
  .string()
  .min(1)
  .max(LIMITS.path)
  .regex(/^[^\x00-\x1f\x7f]+$/, 'must not contain control characters');

/** A resource an action touches: a path, URL, `repo:<name>@<ref>`, `memory:<scope>`. */
export const ResourceName = z
  .string()
  .min(1)
  .max(LIMITS.path)
  .regex(/^[^\x00-\x1f\x7f]+$/, 'must not contain control characters');

/** An absolute http(s) URL. */
export const HttpUrl = z.url({ protocol: /^https?$/ }).max(LIMITS.url);

/** `text` cut to at most `max` characters (an ellipsis marking the cut), so a derived title or summary fits its contract's bound. */
export function clipText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A probability-like score in [0, 1]. */
export const UnitInterval = z.number().min(0).max(1);

/**
 * A string-to-string map with bounded keys, values and size (`maxProperties`
 * is also published in the JSON Schema).
 */
export function boundedRecord(key: z.ZodString, value: z.ZodString, maxKeys: number) {
  return z
    .record(key, value)
    .refine((record) => Object.keys(record).length <= maxKeys, `must have at most ${maxKeys} entries`)
    .meta({ maxProperties: maxKeys });
}
