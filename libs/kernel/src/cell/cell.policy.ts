import { z } from 'zod';

/** The lifecycle states of a cell, with the seed's names (Lazarus Cell Spec 4.1). */
export const CellStatus = z.enum(['IDLE', 'INVITED', 'PREPARING', 'ACTIVE', 'CHECKPOINTING', 'DOWNED', 'CLOSED', 'ARCHIVED']);
export type CellStatus = z.infer<typeof CellStatus>;

/** The five canonical roles (Lazarus 3). A participant holds exactly one, fixed at invitation. */
export const CellRole = z.enum(['director', 'executor', 'observer', 'guest', 'substitute']);
export type CellRole = z.infer<typeof CellRole>;

/** Where CELL_HOME is realised (Lazarus 6.1). Only `docker` gives the strict isolation a guest needs. */
export const CellBackend = z.enum(['docker', 'process', 'venv', 'remote']);
export type CellBackend = z.infer<typeof CellBackend>;

/** `strict`: the guest level (Lazarus 3: "stricter backend isolation"); everyone else runs `standard`. */
export const CellIsolation = z.enum(['standard', 'strict']);
export type CellIsolation = z.infer<typeof CellIsolation>;

/** Why a cell closed: a director's decision, a TTL, a DOWNED cell nobody revived, or a failed spawn / checkpoint. */
export const CellCloseReason = z.enum(['explicit', 'ttl_expired', 'abandoned', 'failed']);
export type CellCloseReason = z.infer<typeof CellCloseReason>;

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** The seed's ceiling on an activation window, renewals included (Lazarus 4.2). */
export const CELL_ACTIVE_TTL_CEILING_MS = DAY_MS;

/** Defaults of `CellPolicy` (Lazarus 4.2, 7.1; heartbeat: Mission Cell spec). */
export const CELL_POLICY_DEFAULTS = Object.freeze({
  invitation_ttl_ms: 15 * MINUTE_MS,
  active_ttl_ms: 4 * HOUR_MS,
  active_ttl_max_ms: 24 * HOUR_MS,
  closed_grace_ms: 30 * MINUTE_MS,
  archive_retention_ms: 30 * DAY_MS,
  heartbeat_timeout_ms: 90_000,
  allow_guest: false,
  allow_substitute: false,
});

const duration = (max: number) => z.int().min(1_000).max(max);

/**
 * The TTLs and role switches of one cell, fixed when the cell is created (the
 * first `invite-participant`) and recorded in full in its first event, so a
 * replay never depends on today's defaults. Durations are milliseconds.
 */
export const CellPolicy = z
  .strictObject({
    /** An invitation not accepted within this auto-revokes. */
    invitation_ttl_ms: duration(DAY_MS).default(CELL_POLICY_DEFAULTS.invitation_ttl_ms),
    /** Length of an activation window (from spawn or resurrection). */
    active_ttl_ms: duration(CELL_ACTIVE_TTL_CEILING_MS).default(CELL_POLICY_DEFAULTS.active_ttl_ms),
    /** A director may renew until the window reaches this length; never more than 24 h. */
    active_ttl_max_ms: duration(CELL_ACTIVE_TTL_CEILING_MS).default(CELL_POLICY_DEFAULTS.active_ttl_max_ms),
    /** After close the filesystem stays recoverable (resurrect) this long, then it is scrubbed. */
    closed_grace_ms: duration(30 * DAY_MS).default(CELL_POLICY_DEFAULTS.closed_grace_ms),
    /** How long archived checkpoints stay in the warm archive tier. */
    archive_retention_ms: duration(3_650 * DAY_MS).default(CELL_POLICY_DEFAULTS.archive_retention_ms),
    /** A running participant silent this long is missed: the cell goes DOWNED. Beat at least every half of it. */
    heartbeat_timeout_ms: duration(HOUR_MS).default(CELL_POLICY_DEFAULTS.heartbeat_timeout_ms),
    /** `guest` participants must be enabled explicitly (Lazarus 3.1). */
    allow_guest: z.boolean().default(CELL_POLICY_DEFAULTS.allow_guest),
    /** `substitute` participants must be enabled explicitly (Lazarus 3.1). */
    allow_substitute: z.boolean().default(CELL_POLICY_DEFAULTS.allow_substitute),
  })
  .refine((policy) => policy.active_ttl_ms <= policy.active_ttl_max_ms, {
    message: 'active_ttl_ms must not exceed active_ttl_max_ms',
    path: ['active_ttl_ms'],
  });
export type CellPolicy = z.infer<typeof CellPolicy>;
export type CellPolicyInput = z.input<typeof CellPolicy>;
