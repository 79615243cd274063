import { z } from 'zod';

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
