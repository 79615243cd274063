import { z } from 'zod';
import { LIMITS } from './limits.js';

/**
 * Identifiers travel inside NATS subjects (`writ.evt.task.<task_id>`), so they
 * must be a single subject token: no dots, spaces, wildcards or `>`.
 */
export const Id = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be 1-128 characters of A-Z, a-z, 0-9, "_" or "-" (usable as a NATS subject token)');
export type Id = z.infer<typeof Id>;

/** Lowercase hex SHA-256 digest. */
export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256 digest');
export type Sha256Hex = z.infer<typeof Sha256Hex>;

/** RFC 3339 timestamp with an explicit offset. */
export const Timestamp = z.iso.datetime({ offset: true });
export type Timestamp = z.infer<typeof Timestamp>;

/**
 * A pointer to another durable object: a bare id, `<kind>:<id>`
 * (`artifact:01J...`, `receipt:01J...`), `sha256:<hex>`, or a URI.
 * No whitespace or control characters.
 */
export const Ref = z
  .string()
  .min(1)
  .max(LIMITS.ref)
  .regex(/^[^\s\x00-\x1f\x7f]+$/, 'must not contain whitespace or control characters');
export type Ref = z.infer<typeof Ref>;

/**
 * A lowercase machine name: `local_edit_allowed`, `context.pack`, `run_tests`.
 * Used for open vocabularies the spec only suggests (kinds, channels, profiles).
 */
export const Name = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-z][a-z0-9_]*(?:[.-][a-z0-9_]+)*$/, 'must be a lowercase name like "local_edit_allowed" or "context.pack"');
export type Name = z.infer<typeof Name>;

/** Caller-chosen key that makes a retried submission recognisable as the same one. */
export const IdempotencyKey = z.string().min(1).max(256);
export type IdempotencyKey = z.infer<typeof IdempotencyKey>;
