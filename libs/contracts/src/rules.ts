import type { z } from 'zod';

/** A possibly malformed object: rules run even when field-level parsing failed. */
export type Loose<T> = { readonly [K in keyof T]?: unknown };

/** Reports one offending path of a cross-field rule. */
export type ReportIssue = (path: readonly PropertyKey[], message: string) => void;

/**
 * Adds cross-field rules to an object schema. The rules run even when some
 * fields already failed (so one parse lists every offending path) and
 * therefore see the value as `Loose`: they must check types themselves.
 */
export function withRules<S extends z.ZodType<object>>(schema: S, rules: (value: Loose<z.output<S>>, report: ReportIssue) => void): S {
  return schema.superRefine(
    (value, ctx) => {
      rules(value as Loose<z.output<S>>, (path, message) => ctx.addIssue({ code: 'custom', path: [...path], message }));
    },
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value) },
  ) as S;
}

/** True for anything but undefined and null. */
export function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** The value at `key` of `value` when it is an object, else undefined. */
export function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}
