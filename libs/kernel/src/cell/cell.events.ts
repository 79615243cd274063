import { Id, Ref, Sha256Hex, Text, Timestamp } from '@writ/contracts';
import { z } from 'zod';
import { CellBackend, CellCloseReason, CellIsolation, CellPolicy, CellRole, type CellStatus } from './cell.policy.js';

const at = Timestamp;
/**
 * The host that holds the cell's files (its CELL_HOME and container) from this event on: recorded by
 * `cell.preparing`, `cell.activated`, `cell.revived` and `cell.resurrected`. Optional: events recorded
 * before hosts were (or by an adapter without one) name none, and the holder is then unknown.
 */
const host = Id;

/** A seat in the cell: its id (also its home directory name), the principal holding it, its one role. */
export const CellSeat = z.strictObject({ participant_id: Id, principal_id: Id, role: CellRole, isolation: CellIsolation });
export type CellSeat = z.infer<typeof CellSeat>;

/**
 * The events of the Cell aggregate (Lazarus 4, 7). Every state change is an
 * event; heartbeats are recorded only when they move the participant's
 * deadline by at least half the heartbeat timeout (see `record-heartbeat`),
 * so a steady agent costs about two events per timeout, not one per beat.
 */
export const CellEvent = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('cell.participant_invited'),
    data: z.strictObject({
      cell_id: Id,
      participant: CellSeat,
      invited_by: Id,
      expires_at: Timestamp,
      /** Present on the event that creates the cell: its director seat (accepted at once) and its policy, defaults applied. */
      created: z.strictObject({ director: CellSeat, policy: CellPolicy }).optional(),
      at,
    }),
  }),
  z.strictObject({ type: z.literal('cell.invitation_accepted'), data: z.strictObject({ participant_id: Id, at }) }),
  z.strictObject({ type: z.literal('cell.invitation_expired'), data: z.strictObject({ participant_id: Id, expired_by: Id, at }) }),
  z.strictObject({ type: z.literal('cell.preparing'), data: z.strictObject({ backend: CellBackend, prepared_by: Id, host_id: host.optional(), at }) }),
  z.strictObject({ type: z.literal('cell.activated'), data: z.strictObject({ spawned_by: Id, host_id: host.optional(), active_expires_at: Timestamp, at }) }),
  z.strictObject({ type: z.literal('cell.checkpoint_started'), data: z.strictObject({ checkpoint_id: Id, requested_by: Id, final: z.boolean(), at }) }),
  z.strictObject({
    type: z.literal('cell.checkpoint_completed'),
    data: z.strictObject({ checkpoint_id: Id, sha256: Sha256Hex, artifact_ref: Ref.optional(), final: z.boolean(), at }),
  }),
  z.strictObject({
    type: z.literal('cell.heartbeat_recorded'),
    /** `gap_ms`: time since the participant's previous recorded heartbeat (or since it started running). */
    data: z.strictObject({ participant_id: Id, gap_ms: z.int().min(0), at }),
  }),
  z.strictObject({ type: z.literal('cell.downed'), data: z.strictObject({ participant_id: Id, last_heartbeat_at: Timestamp, deadline: Timestamp, at }) }),
  z.strictObject({
    type: z.literal('cell.revived'),
    /** `revived_by` runs from now on; `replaced` is the downed participant a substitute took over from (null: it came back itself). */
    data: z.strictObject({ revived_by: Id, replaced: Id.nullable(), host_id: host.optional(), at }),
  }),
  z.strictObject({
    type: z.literal('cell.substitute_invited'),
    data: z.strictObject({
      participant: CellSeat.extend({ role: z.literal('substitute') }),
      invited_by: Id,
      replaces: Id,
      /** The cell's last completed checkpoint the substitute resumes from (null: none was taken). */
      inherits_checkpoint_id: Id.nullable(),
      /** Never the predecessor's home (Lazarus 3): recorded so the audit shows it was excluded. */
      inherits_home: z.literal(false),
      expires_at: Timestamp,
      at,
    }),
  }),
  z.strictObject({
    type: z.literal('cell.ttl_renewed'),
    data: z.strictObject({ renewed_by: Id, previous_expires_at: Timestamp, active_expires_at: Timestamp, at }),
  }),
  z.strictObject({
    type: z.literal('cell.closed'),
    data: z.strictObject({ reason: CellCloseReason, closed_by: Id, note: Text.optional(), grace_ends_at: Timestamp, at }),
  }),
  z.strictObject({ type: z.literal('cell.resurrected'), data: z.strictObject({ resurrected_by: Id, host_id: host.optional(), active_expires_at: Timestamp, at }) }),
  z.strictObject({
    type: z.literal('cell.archived'),
    data: z.strictObject({
      archived_by: Id,
      /** Where the checkpoints went (the warm archive tier, `lazarus-archive/<date>/<cell_id>/`). */
      archive_ref: Ref.optional(),
      checkpoint_ids: z.array(Id).max(10_000),
      /** The cell filesystem was recursively deleted before this event (Lazarus 7.1). */
      filesystem_scrubbed: z.literal(true),
      retention_ends_at: Timestamp,
      at,
    }),
  }),
  z.strictObject({
    type: z.literal('cell.archive_purged'),
    /**
     * After the archive retention: the archived objects (checkpoint tarballs, the archive
     * manifest) were deleted from the artifact store (`deleted_sha256`), except those still
     * referenced elsewhere or not stored by this cell (`kept_sha256`). Every archived object is
     * in exactly one of the two lists.
     */
    data: z.strictObject({
      purged_by: Id,
      deleted_sha256: z.array(Sha256Hex).max(10_001),
      kept_sha256: z.array(Sha256Hex).max(10_001),
      at,
    }),
  }),
]);
export type CellEvent = z.infer<typeof CellEvent>;
export type CellEventType = CellEvent['type'];

/**
 * The cell state machine (Lazarus 4.1), plus CLOSED → ACTIVE: a director's
 * resurrect within the closed grace (Lazarus 7.1). ARCHIVED is terminal: its
 * one later fact, `cell.archive_purged`, changes the archive, not the status.
 */
export const CELL_TRANSITIONS: Readonly<Record<CellStatus, readonly CellStatus[]>> = Object.freeze({
  IDLE: ['INVITED'],
  INVITED: ['PREPARING', 'CLOSED'],
  PREPARING: ['ACTIVE', 'CLOSED'],
  ACTIVE: ['CHECKPOINTING', 'CLOSED', 'DOWNED'],
  CHECKPOINTING: ['ACTIVE', 'CLOSED'],
  DOWNED: ['ACTIVE', 'CLOSED'],
  CLOSED: ['ARCHIVED', 'ACTIVE'],
  ARCHIVED: [],
});
