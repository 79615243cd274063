import { z } from 'zod';
import { Id, Timestamp } from '../ids.js';
import { Text } from '../text.js';

/**
 * `writ.qry.executor.resurrect-cell` (request/reply; Lazarus Cell Spec 7.1). A
 * closed cell still in its graveyard (within its closed grace) is brought back
 * to ACTIVE: its stopped container and workspace when the executor holds them,
 * else its last checkpoint restored into a new cell. `resurrection_jws` is a
 * compact EdDSA JWS by a director over CellResurrection; the executor checks
 * the signer (active key, role director, not an agent) and freshness.
 */
export const ResurrectCell = z.strictObject({ cell_id: Id, resurrection_jws: z.string().min(1).max(16 * 1024) });
export type ResurrectCell = z.infer<typeof ResurrectCell>;

/** The payload a director signs to resurrect a closed cell. */
export const CellResurrection = z.strictObject({
  cell_id: Id,
  resurrected_by: Id,
  resurrected_at: Timestamp,
  note: Text.optional(),
});
export type CellResurrection = z.infer<typeof CellResurrection>;

/**
 * The reply: `resurrected` (this request appended `cell.resurrected`), with
 * where the cell came back from: `graveyard` (its stopped container and
 * workspace on this host) or `checkpoint` (its last checkpoint restored).
 */
export const ResurrectCellReply = z.strictObject({
  cell_id: Id,
  status: z.literal('resurrected'),
  restored_from: z.enum(['graveyard', 'checkpoint']),
  checkpoint_id: Id.nullable(),
  resurrected_by: Id,
  active_expires_at: Timestamp,
  event_id: Id,
});
export type ResurrectCellReply = z.infer<typeof ResurrectCellReply>;

/** The ceiling on a cell's activation window, renewals included (Lazarus 4.2: 24 h); a renewal never asks for more. */
const CELL_RENEWAL_MAX_MS = 24 * 60 * 60 * 1000;

/** The JWS `typ` of a signed CellRenewal: a renewal cannot pass for another signed request, nor one for it. */
export const CELL_RENEWAL_JWS_TYPE = 'writ-cell-renew+jws';

/**
 * `writ.qry.executor.renew-cell` (request/reply; Lazarus 4.2: the active TTL is
 * renewable by a director up to 24 h). `renewal_jws` is a compact EdDSA JWS
 * (`typ` CELL_RENEWAL_JWS_TYPE) by a director over CellRenewal; the executor
 * checks the signer (active key, role director, not an agent) and freshness,
 * then the kernel's `renew-active-ttl` (ACTIVE, CHECKPOINTING or DOWNED; within
 * the cell policy's `active_ttl_max_ms` from activation).
 */
export const RenewCell = z.strictObject({ cell_id: Id, renewal_jws: z.string().min(1).max(16 * 1024) });
export type RenewCell = z.infer<typeof RenewCell>;

/** The payload a director signs to push a cell's active expiry later. */
export const CellRenewal = z.strictObject({
  cell_id: Id,
  /** How much later the cell's active window ends; absent: by the cell policy's `active_ttl_ms`. */
  extend_ms: z.int().min(1_000).max(CELL_RENEWAL_MAX_MS).optional(),
  renewed_by: Id,
  renewed_at: Timestamp,
});
export type CellRenewal = z.infer<typeof CellRenewal>;

/**
 * The reply: `renewed` (this request appended `cell.ttl_renewed`) or
 * `already_renewed` (the same signed renewal was applied before: nothing
 * appended, the first renewal's expiries and event). `max_expires_at` is the
 * latest the cell's window may reach by renewals (activation + the policy's
 * `active_ttl_max_ms`).
 */
export const RenewCellReply = z.strictObject({
  cell_id: Id,
  status: z.enum(['renewed', 'already_renewed']),
  renewed_by: Id,
  previous_expires_at: Timestamp,
  active_expires_at: Timestamp,
  max_expires_at: Timestamp,
  event_id: Id,
});
export type RenewCellReply = z.infer<typeof RenewCellReply>;
