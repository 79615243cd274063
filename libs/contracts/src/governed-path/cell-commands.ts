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
