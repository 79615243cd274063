import type { Anomaly, Command, Decider } from '../shared/decider.js';
import { totalEvolve } from '../shared/decider.js';
import { emit } from '../shared/events.js';
import { commandNowMs, instantMs, unknownCommand } from '../shared/instant.js';
import { KernelError, type KernelCommandErrorCode } from '../shared/kernel-error.js';
import { CellError } from './cell.errors.js';
import { CellEvent, type CellSeat } from './cell.events.js';
import { CellPolicy, type CellBackend, type CellCloseReason, type CellPolicyInput, type CellRole, type CellStatus } from './cell.policy.js';
import { cellPermissions, roleEnabled } from './cell.roles.js';

/**
 * Commands of the Cell aggregate (Lazarus Cell Spec 4, 7). Actors are
 * participant ids of the cell (directors for director-only commands) or the
 * id of the service reporting a fact (`writ-executor` for spawn, failure,
 * heartbeat gaps). The clock is `metadata.now`.
 */
export type CellCommand =
  | Command<
      'invite-participant',
      {
        readonly cell_id: string;
        /** The director seat inviting. On the first invitation it creates the cell and becomes its director. */
        readonly invited_by: string;
        readonly participant_id: string;
        /** The principal holding the seat; defaults to `participant_id`. One principal may hold several seats. */
        readonly principal_id?: string;
        readonly role: Exclude<CellRole, 'substitute'>;
        /** Only on the first invitation: the cell policy (defaults applied). */
        readonly policy?: CellPolicyInput;
      }
    >
  | Command<'accept-invitation', { readonly participant_id: string }>
  | Command<'expire-invitation', { readonly participant_id: string; readonly expired_by: string }>
  | Command<'prepare-cell', { readonly backend: CellBackend; readonly prepared_by: string; /** The host that will hold the cell's files (see `CellRecord.host_id`). */ readonly host_id?: string }>
  | Command<'activate-cell', { readonly spawned_by: string; readonly host_id?: string }>
  | Command<'begin-checkpoint', { readonly checkpoint_id: string; readonly requested_by: string; readonly final?: boolean }>
  | Command<'complete-checkpoint', { readonly checkpoint_id: string; readonly sha256: string; readonly artifact_ref?: string }>
  | Command<'record-heartbeat', { readonly participant_id: string }>
  | Command<'mark-downed', { readonly participant_id: string }>
  | Command<'revive-cell', { readonly revived_by: string; /** The host the cell runs on from now on. */ readonly host_id?: string }>
  | Command<'invite-substitute', { readonly invited_by: string; readonly participant_id: string; readonly principal_id?: string }>
  | Command<'close-cell', { readonly reason: CellCloseReason; readonly closed_by: string; readonly note?: string }>
  | Command<'renew-active-ttl', { readonly renewed_by: string; /** Defaults to the policy's `active_ttl_ms`. */ readonly extend_ms?: number }>
  | Command<'resurrect-cell', { readonly resurrected_by: string; /** The host the cell runs on from now on. */ readonly host_id?: string }>
  | Command<'archive-cell', { readonly archived_by: string; readonly archive_ref?: string }>
  | Command<
      'purge-archive',
      {
        readonly purged_by: string;
        /** Archived objects (sha256) the adapter deleted from the artifact store, or found gone. */
        readonly deleted_sha256: readonly string[];
        /** Archived objects it kept: still referenced elsewhere, or not stored by this cell. */
        readonly kept_sha256: readonly string[];
      }
    >;

export type CellCommandType = CellCommand['type'];

/**
 * Where each command is valid and the state it leads to (null: the state
 * stays). Anything else is CELL_TRANSITION_INVALID. `complete-checkpoint`
 * leads to CLOSED when the checkpoint is final; `expire-invitation` closes
 * an INVITED cell whose last invitation lapses; `invite-participant` creates
 * the cell from IDLE.
 */
export const CELL_COMMANDS: Readonly<Record<CellCommandType, { readonly from: readonly CellStatus[]; readonly to: CellStatus | null }>> = Object.freeze({
  'invite-participant': { from: ['IDLE', 'INVITED', 'PREPARING', 'ACTIVE'], to: null },
  'accept-invitation': { from: ['INVITED', 'PREPARING', 'ACTIVE', 'CHECKPOINTING', 'DOWNED'], to: null },
  'expire-invitation': { from: ['INVITED', 'PREPARING', 'ACTIVE', 'CHECKPOINTING', 'DOWNED'], to: null },
  'prepare-cell': { from: ['INVITED'], to: 'PREPARING' },
  'activate-cell': { from: ['PREPARING'], to: 'ACTIVE' },
  'begin-checkpoint': { from: ['ACTIVE'], to: 'CHECKPOINTING' },
  'complete-checkpoint': { from: ['CHECKPOINTING'], to: 'ACTIVE' },
  'record-heartbeat': { from: ['ACTIVE', 'CHECKPOINTING'], to: null },
  'mark-downed': { from: ['ACTIVE'], to: 'DOWNED' },
  'revive-cell': { from: ['DOWNED'], to: 'ACTIVE' },
  'invite-substitute': { from: ['DOWNED'], to: null },
  'close-cell': { from: ['INVITED', 'PREPARING', 'ACTIVE', 'CHECKPOINTING', 'DOWNED'], to: 'CLOSED' },
  'renew-active-ttl': { from: ['ACTIVE', 'CHECKPOINTING', 'DOWNED'], to: null },
  'resurrect-cell': { from: ['CLOSED'], to: 'ACTIVE' },
  'archive-cell': { from: ['CLOSED'], to: 'ARCHIVED' },
  'purge-archive': { from: ['ARCHIVED'], to: null },
});

/** Which close reasons fit which state (Lazarus 4.1: expiry/revoke, failure, close/timeout, final checkpoint, abandoned). */
export const CELL_CLOSE_REASONS: Readonly<Partial<Record<CellStatus, readonly CellCloseReason[]>>> = Object.freeze({
  INVITED: ['explicit', 'ttl_expired'],
  PREPARING: ['explicit', 'failed'],
  ACTIVE: ['explicit', 'ttl_expired', 'failed'],
  CHECKPOINTING: ['explicit', 'failed'],
  DOWNED: ['abandoned'],
});

export interface CellParticipant extends CellSeat {
  /** `replaced`: a substitute revived the cell in its place. */
  readonly status: 'invited' | 'accepted' | 'expired' | 'replaced';
  readonly invited_by: string;
  readonly invited_at: string;
  readonly expires_at: string;
  readonly accepted_at: string | null;
  /** For a substitute: the downed participant it replaces, and the checkpoint it resumes from. */
  readonly replaces: string | null;
  readonly inherits_checkpoint_id: string | null;
}

/** A participant running in the cell, with its heartbeat deadline. */
export interface RunningParticipant {
  readonly participant_id: string;
  readonly last_heartbeat_at: string;
  readonly deadline: string;
}

export interface CellCheckpoint {
  readonly checkpoint_id: string;
  readonly requested_by: string;
  readonly final: boolean;
  readonly started_at: string;
  readonly sha256: string | null;
  readonly artifact_ref: string | null;
  readonly completed_at: string | null;
}

export interface NoCell {
  readonly status: 'IDLE';
  readonly anomalies: readonly Anomaly[];
}

export interface CellRecord {
  readonly status: Exclude<CellStatus, 'IDLE'>;
  readonly cell_id: string;
  readonly director_id: string;
  readonly policy: CellPolicy;
  readonly created_at: string;
  readonly participants: readonly CellParticipant[];
  readonly backend: CellBackend | null;
  /**
   * The host holding the cell's files (CELL_HOME, container, graveyard): the one the last
   * `cell.preparing`, `cell.activated`, `cell.revived` or `cell.resurrected` named. Absent when
   * that event names none (recorded before hosts were) or the cell was never prepared: the
   * holder is then unknown. An adapter routes a cell's work to this host.
   */
  readonly host_id?: string;
  /** Start and end of the current activation window (spawn or resurrection); null before spawn. */
  readonly activated_at: string | null;
  readonly active_expires_at: string | null;
  readonly running: readonly RunningParticipant[];
  /** Completed checkpoints, oldest first, then the one in progress (completed_at null) if any. */
  readonly checkpoints: readonly CellCheckpoint[];
  readonly downed: { readonly participant_id: string; readonly at: string } | null;
  readonly closed: { readonly reason: CellCloseReason; readonly closed_by: string; readonly at: string; readonly grace_ends_at: string } | null;
  readonly archived: {
    readonly at: string;
    readonly archive_ref: string | null;
    readonly checkpoint_ids: readonly string[];
    readonly retention_ends_at: string;
    /** Set once the archive retention ended and the archived objects were deleted (`cell.archive_purged`). */
    readonly purged: { readonly at: string; readonly purged_by: string; readonly deleted_sha256: readonly string[]; readonly kept_sha256: readonly string[] } | null;
  } | null;
  readonly anomalies: readonly Anomaly[];
}

export type CellState = NoCell | CellRecord;

export function initialState(): CellState {
  return { status: 'IDLE', anomalies: [] };
}

/** ARCHIVED is the one terminal state. */
export function isCellTerminal(state: CellState): boolean {
  return state.status === 'ARCHIVED';
}

/** RFC 3339 (UTC, whole seconds without a fraction) of an epoch-millisecond instant. */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
}

const ms = (instant: string) => instantMs(instant, 'instant');
const addMs = (instant: string, delta: number) => isoAt(ms(instant) + delta);

/** `…/sha256-<hex>` at the end of an artifact ref: the content hash it names, if it names one. */
const REF_SHA256 = /(?:^|\/)sha256-([0-9a-f]{64})$/;

/**
 * The objects an archived cell keeps in the artifact store (the warm archive tier): each
 * completed checkpoint's tarball and the archive manifest `archive_ref` names, as sha256,
 * once each, in that order. Empty before the cell is archived.
 */
export function archivedObjects(state: CellRecord): readonly string[] {
  if (state.archived === null) return [];
  const hashes = state.checkpoints.filter((c) => c.completed_at !== null && c.sha256 !== null).map((c) => c.sha256 as string);
  const manifest = state.archived.archive_ref === null ? undefined : REF_SHA256.exec(state.archived.archive_ref)?.[1];
  return [...new Set([...hashes, ...(manifest === undefined ? [] : [manifest])])];
}

/** The last completed checkpoint, if any. */
export function lastCheckpoint(state: CellRecord): CellCheckpoint | null {
  return [...state.checkpoints].reverse().find((c) => c.completed_at !== null) ?? null;
}

/**
 * The host that holds the cell's files now, or null: none yet (IDLE, INVITED), none any more
 * (ARCHIVED: scrubbed), or unknown (the placing event named no host).
 */
export function cellHolder(state: CellState): string | null {
  if (state.status === 'IDLE' || state.status === 'INVITED' || state.status === 'ARCHIVED') return null;
  return state.host_id ?? null;
}

export function participantOf(state: CellRecord, participantId: string): CellParticipant | undefined {
  return state.participants.find((p) => p.participant_id === participantId);
}

function refuseTransition(command: CellCommand, from: CellStatus, reason?: string): never {
  const to = CELL_COMMANDS[command.type].to ?? (from === 'IDLE' && command.type === 'invite-participant' ? 'INVITED' : from);
  throw new CellError('CELL_TRANSITION_INVALID', `${command.type} is not valid in ${from}${reason ? ` (${reason})` : ''}`, { details: { command: command.type, from, to } });
}

function requireDirector(state: CellRecord, actor: string, command: string): void {
  const seat = participantOf(state, actor);
  if (seat === undefined || seat.role !== 'director' || seat.status !== 'accepted') {
    throw new CellError('CELL_NOT_DIRECTOR', `${command} needs an accepted director of cell ${state.cell_id}; ${JSON.stringify(actor)} is not one`, { details: { actor } });
  }
}

function requireNewParticipant(state: CellRecord, participantId: string): void {
  if (participantOf(state, participantId) !== undefined) {
    throw new CellError('CELL_PARTICIPANT_EXISTS', `participant ${participantId} already holds a seat in cell ${state.cell_id}; a seat's role never changes (invite a new seat)`, {
      details: { participant_id: participantId },
    });
  }
}

function requireGuestIsolation(role: CellRole, backend: CellBackend | null): void {
  if (role === 'guest' && backend !== null && backend !== 'docker') {
    throw new CellError('CELL_ISOLATION_INSUFFICIENT', `a guest needs strict isolation (the docker backend), and the cell runs on ${backend}`, { details: { backend } });
  }
}

function requireRoleEnabled(policy: CellPolicy, role: CellRole): void {
  if (!roleEnabled(role, policy)) {
    throw new CellError('CELL_ROLE_NOT_ENABLED', `the cell policy does not enable the ${role} role (${cellPermissions(role).requires})`, { details: { role } });
  }
}

function seat(participantId: string, principalId: string | undefined, role: CellRole): CellSeat {
  return { participant_id: participantId, principal_id: principalId ?? participantId, role, isolation: cellPermissions(role).isolation };
}

/** True when no seat but the creating director's is live: every other invitation lapsed (or is past its expiry) and none was accepted. */
function noLiveInvitation(state: CellRecord, nowMs: number): boolean {
  return state.participants.every(
    (p) => p.participant_id === state.director_id || p.status === 'expired' || p.status === 'replaced' || (p.status === 'invited' && nowMs >= ms(p.expires_at)),
  );
}

function running(state: CellRecord, participantId: string): RunningParticipant {
  const entry = state.running.find((r) => r.participant_id === participantId);
  if (entry === undefined) {
    throw new CellError('CELL_PARTICIPANT_NOT_RUNNING', `participant ${participantId} is not running in cell ${state.cell_id}`, { details: { participant_id: participantId } });
  }
  return entry;
}

function decideClose(command: Extract<CellCommand, { type: 'close-cell' }>, state: CellRecord, nowMs: number, at: string): CellEvent[] {
  const { reason, closed_by: closedBy, note } = command.data;
  if (!(CELL_CLOSE_REASONS[state.status] ?? []).includes(reason)) {
    throw new CellError('CELL_CLOSE_REASON_INVALID', `a ${state.status} cell cannot close as ${reason}; valid: ${(CELL_CLOSE_REASONS[state.status] ?? []).join(', ')}`, {
      details: { reason, from: state.status },
    });
  }
  if (reason === 'explicit') requireDirector(state, closedBy, 'close-cell (explicit)');
  if (reason === 'ttl_expired') {
    const elapsed = state.status === 'INVITED' ? noLiveInvitation(state, nowMs) : nowMs >= ms(state.active_expires_at as string);
    if (!elapsed) throw new CellError('CELL_TTL_NOT_ELAPSED', `the ${state.status === 'INVITED' ? 'invitation' : 'active'} TTL of cell ${state.cell_id} has not elapsed`);
  }
  // Abandoning a DOWNED cell is a director's call until the active window runs out; then the timer may do it.
  if (reason === 'abandoned' && nowMs < ms(state.active_expires_at as string)) {
    const director = participantOf(state, closedBy);
    if (director?.role !== 'director' || director.status !== 'accepted') {
      throw new CellError('CELL_TTL_NOT_ELAPSED', `only a director may abandon cell ${state.cell_id} before its active TTL elapses`, { details: { active_expires_at: state.active_expires_at } });
    }
  }
  return emit(CellEvent, [{ type: 'cell.closed', data: { reason, closed_by: closedBy, ...(note === undefined ? {} : { note }), grace_ends_at: isoAt(nowMs + state.policy.closed_grace_ms), at } }]);
}

function decideInvite(command: Extract<CellCommand, { type: 'invite-participant' }>, state: CellState, nowMs: number, at: string): CellEvent[] {
  const { cell_id: cellId, invited_by: invitedBy, participant_id: participantId, principal_id: principalId, role, policy: policyInput } = command.data;
  if ((role as CellRole) === 'substitute') throw new CellError('CELL_ROLE_INVALID', 'a substitute joins through invite-substitute, for a DOWNED participant', { details: { role } });
  let policy: CellPolicy;
  let created: { director: CellSeat; policy: CellPolicy } | undefined;
  if (state.status === 'IDLE') {
    const parsed = CellPolicy.safeParse(policyInput ?? {});
    if (!parsed.success) throw new CellError('CELL_POLICY_INVALID', `the cell policy is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`, { cause: parsed.error });
    policy = parsed.data;
    if (participantId === invitedBy) throw new CellError('CELL_PARTICIPANT_EXISTS', `${invitedBy} creates the cell as its director and cannot be invited into it under the same seat`, { details: { participant_id: participantId } });
    created = { director: seat(invitedBy, undefined, 'director'), policy };
  } else {
    const record = state as CellRecord;
    if (cellId !== record.cell_id) throw new CellError('CELL_ID_MISMATCH', `the command names cell ${cellId}, this is cell ${record.cell_id}`, { details: { cell_id: cellId } });
    if (policyInput !== undefined) throw new CellError('CELL_POLICY_INVALID', `cell ${record.cell_id} already has its policy; it is fixed at creation`);
    requireDirector(record, invitedBy, 'invite-participant');
    requireNewParticipant(record, participantId);
    policy = record.policy;
    requireGuestIsolation(role, record.backend);
  }
  requireRoleEnabled(policy, role);
  return emit(CellEvent, [
    {
      type: 'cell.participant_invited',
      data: { cell_id: cellId, participant: seat(participantId, principalId, role), invited_by: invitedBy, expires_at: isoAt(nowMs + policy.invitation_ttl_ms), ...(created ? { created } : {}), at },
    },
  ]);
}

export function decide(command: CellCommand, state: CellState): CellEvent[] {
  const nowMs = commandNowMs(command);
  const at = command.metadata.now;
  const rule = (CELL_COMMANDS as Record<string, (typeof CELL_COMMANDS)[CellCommandType] | undefined>)[(command as { type?: unknown }).type as string];
  if (rule === undefined) return unknownCommand((command as { type?: unknown }).type, 'the cell decider');
  if (!rule.from.includes(state.status)) refuseTransition(command, state.status);
  if (command.type === 'invite-participant') return decideInvite(command, state, nowMs, at);
  const cell = state as CellRecord;
  switch (command.type) {
    case 'accept-invitation': {
      const p = participantOf(cell, command.data.participant_id);
      if (p === undefined) throw new CellError('CELL_PARTICIPANT_UNKNOWN', `no participant ${command.data.participant_id} in cell ${cell.cell_id}`);
      if (p.status !== 'invited') throw new CellError('CELL_INVITATION_NOT_PENDING', `the invitation of ${p.participant_id} is ${p.status}`, { details: { status: p.status } });
      if (nowMs >= ms(p.expires_at)) throw new CellError('CELL_INVITATION_EXPIRED', `the invitation of ${p.participant_id} expired at ${p.expires_at}`, { details: { expires_at: p.expires_at } });
      return emit(CellEvent, [{ type: 'cell.invitation_accepted', data: { participant_id: p.participant_id, at } }]);
    }
    case 'expire-invitation': {
      const p = participantOf(cell, command.data.participant_id);
      if (p === undefined) throw new CellError('CELL_PARTICIPANT_UNKNOWN', `no participant ${command.data.participant_id} in cell ${cell.cell_id}`);
      if (p.status !== 'invited') throw new CellError('CELL_INVITATION_NOT_PENDING', `the invitation of ${p.participant_id} is ${p.status}`, { details: { status: p.status } });
      if (nowMs < ms(p.expires_at)) throw new CellError('CELL_INVITATION_NOT_EXPIRED', `the invitation of ${p.participant_id} runs until ${p.expires_at}`, { details: { expires_at: p.expires_at } });
      const expired: CellEvent = { type: 'cell.invitation_expired', data: { participant_id: p.participant_id, expired_by: command.data.expired_by, at } };
      // Lazarus 4.1: an INVITED cell whose invitations all lapse closes (unused invitations auto-revoke, 4.2).
      const closes =
        cell.status === 'INVITED' && cell.participants.every((o) => o.participant_id === cell.director_id || o.participant_id === p.participant_id || o.status === 'expired' || o.status === 'replaced');
      const closed: CellEvent = { type: 'cell.closed', data: { reason: 'ttl_expired', closed_by: command.data.expired_by, grace_ends_at: isoAt(nowMs + cell.policy.closed_grace_ms), at } };
      return emit(CellEvent, closes ? [expired, closed] : [expired]);
    }
    case 'prepare-cell': {
      const runners = cell.participants.filter((p) => p.status === 'accepted' && cellPermissions(p.role).runs);
      if (runners.length === 0) throw new CellError('CELL_NO_RUNNING_PARTICIPANT', `cell ${cell.cell_id} has no accepted executor, guest or substitute to run`);
      for (const p of cell.participants) if (p.status === 'invited' || p.status === 'accepted') requireGuestIsolation(p.role, command.data.backend);
      return emit(CellEvent, [{ type: 'cell.preparing', data: { backend: command.data.backend, prepared_by: command.data.prepared_by, ...hostOf(command.data), at } }]);
    }
    case 'activate-cell':
      return emit(CellEvent, [{ type: 'cell.activated', data: { spawned_by: command.data.spawned_by, ...hostOf(command.data), active_expires_at: isoAt(nowMs + cell.policy.active_ttl_ms), at } }]);
    case 'begin-checkpoint': {
      const { checkpoint_id: checkpointId, requested_by: requestedBy, final = false } = command.data;
      requireDirector(cell, requestedBy, 'begin-checkpoint');
      if (cell.checkpoints.some((c) => c.checkpoint_id === checkpointId)) throw new CellError('CELL_CHECKPOINT_EXISTS', `checkpoint ${checkpointId} already exists in cell ${cell.cell_id}`);
      return emit(CellEvent, [{ type: 'cell.checkpoint_started', data: { checkpoint_id: checkpointId, requested_by: requestedBy, final, at } }]);
    }
    case 'complete-checkpoint': {
      const current = cell.checkpoints.at(-1);
      if (current === undefined || current.completed_at !== null || current.checkpoint_id !== command.data.checkpoint_id) {
        throw new CellError('CELL_CHECKPOINT_MISMATCH', `checkpoint ${command.data.checkpoint_id} is not the one in progress (${current?.checkpoint_id ?? 'none'})`);
      }
      const { sha256, artifact_ref: artifactRef } = command.data;
      const completed: CellEvent = {
        type: 'cell.checkpoint_completed',
        data: { checkpoint_id: current.checkpoint_id, sha256, ...(artifactRef === undefined ? {} : { artifact_ref: artifactRef }), final: current.final, at },
      };
      if (!current.final) return emit(CellEvent, [completed]);
      return emit(CellEvent, [completed, { type: 'cell.closed', data: { reason: 'explicit', closed_by: current.requested_by, grace_ends_at: isoAt(nowMs + cell.policy.closed_grace_ms), at } }]);
    }
    case 'record-heartbeat': {
      const entry = running(cell, command.data.participant_id);
      const gap = nowMs - ms(entry.last_heartbeat_at);
      // Only beats that move the deadline by half a timeout or more are recorded: an agent beating at
      // least every timeout/2 is never missed, and the log keeps gaps, not every beat.
      if (gap < cell.policy.heartbeat_timeout_ms / 2) return [];
      return emit(CellEvent, [{ type: 'cell.heartbeat_recorded', data: { participant_id: entry.participant_id, gap_ms: gap, at } }]);
    }
    case 'mark-downed': {
      const entry = running(cell, command.data.participant_id);
      if (nowMs < ms(entry.deadline)) throw new CellError('CELL_HEARTBEAT_NOT_MISSED', `participant ${entry.participant_id} has until ${entry.deadline} to beat`, { details: { deadline: entry.deadline } });
      return emit(CellEvent, [{ type: 'cell.downed', data: { participant_id: entry.participant_id, last_heartbeat_at: entry.last_heartbeat_at, deadline: entry.deadline, at } }]);
    }
    case 'revive-cell': {
      const downed = cell.downed as NonNullable<CellRecord['downed']>;
      const itself = command.data.revived_by === downed.participant_id;
      const substitute = isSubstituteFor(cell, command.data.revived_by, downed.participant_id);
      if (!itself && !substitute) {
        throw new CellError('CELL_REVIVER_INVALID', `${command.data.revived_by} is neither ${downed.participant_id} nor an accepted substitute for it`, { details: { downed: downed.participant_id } });
      }
      if (nowMs >= ms(cell.active_expires_at as string)) throw new CellError('CELL_ACTIVE_TTL_EXPIRED', `the active TTL of cell ${cell.cell_id} elapsed at ${cell.active_expires_at}; close it`);
      return emit(CellEvent, [{ type: 'cell.revived', data: { revived_by: command.data.revived_by, replaced: itself ? null : downed.participant_id, ...hostOf(command.data), at } }]);
    }
    case 'invite-substitute': {
      const { invited_by: invitedBy, participant_id: participantId, principal_id: principalId } = command.data;
      requireDirector(cell, invitedBy, 'invite-substitute');
      requireRoleEnabled(cell.policy, 'substitute');
      requireNewParticipant(cell, participantId);
      const downed = cell.downed as NonNullable<CellRecord['downed']>;
      return emit(CellEvent, [
        {
          type: 'cell.substitute_invited',
          data: {
            participant: { ...seat(participantId, principalId, 'substitute'), role: 'substitute' },
            invited_by: invitedBy,
            replaces: downed.participant_id,
            inherits_checkpoint_id: lastCheckpoint(cell)?.checkpoint_id ?? null,
            inherits_home: false,
            expires_at: isoAt(nowMs + cell.policy.invitation_ttl_ms),
            at,
          },
        },
      ]);
    }
    case 'close-cell':
      return decideClose(command, cell, nowMs, at);
    case 'renew-active-ttl': {
      requireDirector(cell, command.data.renewed_by, 'renew-active-ttl');
      const expires = cell.active_expires_at as string;
      if (nowMs >= ms(expires)) throw new CellError('CELL_ACTIVE_TTL_EXPIRED', `the active TTL of cell ${cell.cell_id} elapsed at ${expires}; close it`);
      const extend = command.data.extend_ms ?? cell.policy.active_ttl_ms;
      if (!Number.isInteger(extend) || extend < 1_000) {
        throw new KernelError<KernelCommandErrorCode>('KERNEL_COMMAND_INVALID', 'extend_ms must be an integer of at least 1000', { details: { field: 'extend_ms' } });
      }
      const maxExpires = ms(cell.activated_at as string) + cell.policy.active_ttl_max_ms;
      const next = ms(expires) + extend;
      if (next > maxExpires) {
        throw new CellError('CELL_TTL_CAP_EXCEEDED', `cell ${cell.cell_id} may stay active until ${isoAt(maxExpires)} at most (active_ttl_max_ms ${cell.policy.active_ttl_max_ms})`, {
          details: { max_expires_at: isoAt(maxExpires), requested_expires_at: isoAt(next) },
        });
      }
      return emit(CellEvent, [{ type: 'cell.ttl_renewed', data: { renewed_by: command.data.renewed_by, previous_expires_at: expires, active_expires_at: isoAt(next), at } }]);
    }
    case 'resurrect-cell': {
      if (cell.activated_at === null) refuseTransition(command, cell.status, 'the cell never ran: nothing to resurrect');
      requireDirector(cell, command.data.resurrected_by, 'resurrect-cell');
      const grace = (cell.closed as NonNullable<CellRecord['closed']>).grace_ends_at;
      if (nowMs >= ms(grace)) throw new CellError('CELL_GRACE_EXPIRED', `the closed grace of cell ${cell.cell_id} ended at ${grace}`, { details: { grace_ends_at: grace } });
      return emit(CellEvent, [{ type: 'cell.resurrected', data: { resurrected_by: command.data.resurrected_by, ...hostOf(command.data), active_expires_at: isoAt(nowMs + cell.policy.active_ttl_ms), at } }]);
    }
    case 'archive-cell': {
      const grace = (cell.closed as NonNullable<CellRecord['closed']>).grace_ends_at;
      if (nowMs < ms(grace)) throw new CellError('CELL_GRACE_NOT_OVER', `cell ${cell.cell_id} stays recoverable until ${grace}`, { details: { grace_ends_at: grace } });
      const { archived_by: archivedBy, archive_ref: archiveRef } = command.data;
      const checkpointIds = cell.checkpoints.filter((c) => c.completed_at !== null).map((c) => c.checkpoint_id);
      return emit(CellEvent, [
        {
          type: 'cell.archived',
          data: {
            archived_by: archivedBy,
            ...(archiveRef === undefined ? {} : { archive_ref: archiveRef }),
            checkpoint_ids: checkpointIds,
            filesystem_scrubbed: true,
            retention_ends_at: isoAt(nowMs + cell.policy.archive_retention_ms),
            at,
          },
        },
      ]);
    }
    case 'purge-archive':
      return decidePurge(command, cell, nowMs, at);
    default:
      return unknownCommand((command as { type?: unknown }).type, 'the cell decider');
  }
}

/**
 * After the archive retention (Lazarus 7.2: the warm tier keeps checkpoints 30 days by
 * default), the adapter deletes the archived objects it may delete and reports every one
 * of them as deleted or kept, once: the event is the audit of what left the store.
 */
function decidePurge(command: Extract<CellCommand, { type: 'purge-archive' }>, cell: CellRecord, nowMs: number, at: string): CellEvent[] {
  const archived = cell.archived as NonNullable<CellRecord['archived']>;
  if (archived.purged !== null) throw new CellError('CELL_ARCHIVE_PURGED', `the archive of cell ${cell.cell_id} was purged at ${archived.purged.at}`, { details: { purged_at: archived.purged.at } });
  if (nowMs < ms(archived.retention_ends_at)) {
    throw new CellError('CELL_RETENTION_NOT_OVER', `the archive of cell ${cell.cell_id} is retained until ${archived.retention_ends_at}`, { details: { retention_ends_at: archived.retention_ends_at } });
  }
  const { purged_by: purgedBy, deleted_sha256: deleted, kept_sha256: kept } = command.data;
  if (!Array.isArray(deleted) || !Array.isArray(kept)) {
    throw new KernelError<KernelCommandErrorCode>('KERNEL_COMMAND_INVALID', 'deleted_sha256 and kept_sha256 must be arrays of sha256 hex', { details: { field: 'deleted_sha256' } });
  }
  const expected = archivedObjects(cell);
  const listed = [...deleted, ...kept];
  if (listed.length !== expected.length || new Set(listed).size !== listed.length || !listed.every((hash) => expected.includes(hash))) {
    throw new CellError('CELL_PURGE_OBJECTS_MISMATCH', `a purge of cell ${cell.cell_id} lists each of its ${expected.length} archived objects once, as deleted or kept`, {
      details: { expected: expected.length, listed: listed.length },
    });
  }
  return emit(CellEvent, [{ type: 'cell.archive_purged', data: { purged_by: purgedBy, deleted_sha256: [...deleted], kept_sha256: [...kept], at } }]);
}

/** The running set rebuilt from the accepted seats that run, each starting its heartbeat clock at `at`. */
function startRunning(state: CellRecord, at: string): RunningParticipant[] {
  const deadline = addMs(at, state.policy.heartbeat_timeout_ms);
  return state.participants
    .filter((p) => p.status === 'accepted' && cellPermissions(p.role).runs)
    .map((p) => ({ participant_id: p.participant_id, last_heartbeat_at: at, deadline }));
}

/** After a freeze (checkpoint, DOWNED) nobody is held to a deadline that ran while the cell was frozen. */
function thaw(running: readonly RunningParticipant[], at: string, timeoutMs: number): RunningParticipant[] {
  const floor = ms(at) + timeoutMs;
  return running.map((r) => (ms(r.deadline) >= floor ? r : { ...r, deadline: isoAt(floor) }));
}

function isSubstituteFor(state: CellRecord, id: string, downedId: string): boolean {
  const p = participantOf(state, id);
  return p?.role === 'substitute' && p.status === 'accepted' && p.replaces === downedId;
}

/** `host_id` as an event carries it: only when the command names one (older events stay as they were). */
const hostOf = (data: { readonly host_id?: string }): { host_id?: string } => (data.host_id === undefined ? {} : { host_id: data.host_id });

/** The state held by `hostId` from this event on; without one the holder becomes unknown (never the previous host's by default). */
function heldBy(state: CellRecord, hostId: string | undefined): CellRecord {
  const { host_id: _previous, ...rest } = state;
  return hostId === undefined ? rest : { ...rest, host_id: hostId };
}

const withSeat = (state: CellRecord, id: string, change: Partial<CellParticipant>): CellParticipant[] =>
  state.participants.map((p) => (p.participant_id === id ? { ...p, ...change } : p));

export const evolve = totalEvolve<CellState, CellEvent>(CellEvent, (state, event) => {
  if (event.type === 'cell.participant_invited' && state.status === 'IDLE') {
    const { created, cell_id: cellId, participant, invited_by: invitedBy, expires_at: expiresAt, at } = event.data;
    if (created === undefined || created.director.participant_id !== invitedBy || created.director.role !== 'director') return undefined;
    if (participant.participant_id === invitedBy || participant.role === 'substitute') return undefined;
    const director: CellParticipant = { ...created.director, status: 'accepted', invited_by: invitedBy, invited_at: at, expires_at: at, accepted_at: at, replaces: null, inherits_checkpoint_id: null };
    const invitee: CellParticipant = { ...participant, status: 'invited', invited_by: invitedBy, invited_at: at, expires_at: expiresAt, accepted_at: null, replaces: null, inherits_checkpoint_id: null };
    return {
      status: 'INVITED',
      cell_id: cellId,
      director_id: invitedBy,
      policy: created.policy,
      created_at: at,
      participants: [director, invitee],
      backend: null,
      activated_at: null,
      active_expires_at: null,
      running: [],
      checkpoints: [],
      downed: null,
      closed: null,
      archived: null,
      anomalies: state.anomalies,
    };
  }
  if (state.status === 'IDLE') return undefined;
  const allowed = (from: readonly CellStatus[]) => from.includes(state.status);
  switch (event.type) {
    case 'cell.participant_invited': {
      const { participant, invited_by: invitedBy, expires_at: expiresAt, at, created } = event.data;
      if (created !== undefined || event.data.cell_id !== state.cell_id || participant.role === 'substitute' || !allowed(CELL_COMMANDS['invite-participant'].from)) return undefined;
      if (participantOf(state, participant.participant_id) !== undefined) return undefined;
      const invitee: CellParticipant = { ...participant, status: 'invited', invited_by: invitedBy, invited_at: at, expires_at: expiresAt, accepted_at: null, replaces: null, inherits_checkpoint_id: null };
      return { ...state, participants: [...state.participants, invitee] };
    }
    case 'cell.substitute_invited': {
      const { participant, invited_by: invitedBy, expires_at: expiresAt, at, replaces, inherits_checkpoint_id: inherits } = event.data;
      if (state.status !== 'DOWNED' || participantOf(state, participant.participant_id) !== undefined) return undefined;
      const substitute: CellParticipant = { ...participant, status: 'invited', invited_by: invitedBy, invited_at: at, expires_at: expiresAt, accepted_at: null, replaces, inherits_checkpoint_id: inherits };
      return { ...state, participants: [...state.participants, substitute] };
    }
    case 'cell.invitation_accepted': {
      const p = participantOf(state, event.data.participant_id);
      if (p?.status !== 'invited' || !allowed(CELL_COMMANDS['accept-invitation'].from)) return undefined;
      const { at } = event.data;
      const next = { ...state, participants: withSeat(state, p.participant_id, { status: 'accepted', accepted_at: at }) };
      // Joining a cell that already runs starts the newcomer's heartbeat clock now.
      if ((state.status === 'ACTIVE' || state.status === 'CHECKPOINTING') && cellPermissions(p.role).runs) {
        return { ...next, running: [...state.running, { participant_id: p.participant_id, last_heartbeat_at: at, deadline: addMs(at, state.policy.heartbeat_timeout_ms) }] };
      }
      return next;
    }
    case 'cell.invitation_expired': {
      const p = participantOf(state, event.data.participant_id);
      if (p?.status !== 'invited' || !allowed(CELL_COMMANDS['expire-invitation'].from)) return undefined;
      return { ...state, participants: withSeat(state, p.participant_id, { status: 'expired' }) };
    }
    case 'cell.preparing':
      if (state.status !== 'INVITED') return undefined;
      return { ...heldBy(state, event.data.host_id), status: 'PREPARING', backend: event.data.backend };
    case 'cell.activated': {
      if (state.status !== 'PREPARING') return undefined;
      const { at } = event.data;
      return { ...heldBy(state, event.data.host_id), status: 'ACTIVE', activated_at: at, active_expires_at: event.data.active_expires_at, running: startRunning(state, at) };
    }
    case 'cell.checkpoint_started': {
      if (state.status !== 'ACTIVE' || state.checkpoints.some((c) => c.checkpoint_id === event.data.checkpoint_id)) return undefined;
      const { checkpoint_id: checkpointId, requested_by: requestedBy, final, at } = event.data;
      return {
        ...state,
        status: 'CHECKPOINTING',
        checkpoints: [...state.checkpoints, { checkpoint_id: checkpointId, requested_by: requestedBy, final, started_at: at, sha256: null, artifact_ref: null, completed_at: null }],
      };
    }
    case 'cell.checkpoint_completed': {
      const current = state.checkpoints.at(-1);
      if (state.status !== 'CHECKPOINTING' || current === undefined || current.completed_at !== null || current.checkpoint_id !== event.data.checkpoint_id || current.final !== event.data.final) {
        return undefined;
      }
      const { sha256, artifact_ref: artifactRef, at } = event.data;
      const checkpoints = [...state.checkpoints.slice(0, -1), { ...current, sha256, artifact_ref: artifactRef ?? null, completed_at: at }];
      // A final checkpoint stays CHECKPOINTING until the cell.closed emitted with it.
      if (current.final) return { ...state, checkpoints };
      return { ...state, status: 'ACTIVE', checkpoints, running: thaw(state.running, at, state.policy.heartbeat_timeout_ms) };
    }
    case 'cell.heartbeat_recorded': {
      if (!allowed(CELL_COMMANDS['record-heartbeat'].from) || !state.running.some((r) => r.participant_id === event.data.participant_id)) return undefined;
      const { at } = event.data;
      const deadline = addMs(at, state.policy.heartbeat_timeout_ms);
      return { ...state, running: state.running.map((r) => (r.participant_id === event.data.participant_id ? { ...r, last_heartbeat_at: at, deadline } : r)) };
    }
    case 'cell.downed':
      if (state.status !== 'ACTIVE' || !state.running.some((r) => r.participant_id === event.data.participant_id)) return undefined;
      return { ...state, status: 'DOWNED', downed: { participant_id: event.data.participant_id, at: event.data.at } };
    case 'cell.revived': {
      if (state.status !== 'DOWNED' || state.downed === null) return undefined;
      const { revived_by: revivedBy, replaced, at } = event.data;
      const downedId = state.downed.participant_id;
      if (replaced === null ? revivedBy !== downedId : replaced !== downedId || !isSubstituteFor(state, revivedBy, downedId)) return undefined;
      const fresh: RunningParticipant = { participant_id: revivedBy, last_heartbeat_at: at, deadline: addMs(at, state.policy.heartbeat_timeout_ms) };
      const others = thaw(
        state.running.filter((r) => r.participant_id !== downedId && r.participant_id !== revivedBy),
        at,
        state.policy.heartbeat_timeout_ms,
      );
      const participants = replaced === null ? state.participants : withSeat(state, replaced, { status: 'replaced' });
      return { ...heldBy(state, event.data.host_id), status: 'ACTIVE', downed: null, participants, running: [...others, fresh] };
    }
    case 'cell.ttl_renewed':
      if (!allowed(CELL_COMMANDS['renew-active-ttl'].from) || event.data.previous_expires_at !== state.active_expires_at) return undefined;
      return { ...state, active_expires_at: event.data.active_expires_at };
    case 'cell.closed': {
      if (!allowed(CELL_COMMANDS['close-cell'].from)) return undefined;
      const { reason, closed_by: closedBy, at, grace_ends_at: graceEndsAt } = event.data;
      // A final checkpoint closes the cell as it completes; one still in progress is abandoned with the cell.
      const checkpoints = state.checkpoints.filter((c) => c.completed_at !== null);
      return { ...state, status: 'CLOSED', checkpoints, downed: null, closed: { reason, closed_by: closedBy, at, grace_ends_at: graceEndsAt } };
    }
    case 'cell.resurrected': {
      if (state.status !== 'CLOSED' || state.activated_at === null) return undefined;
      const { at } = event.data;
      return { ...heldBy(state, event.data.host_id), status: 'ACTIVE', activated_at: at, active_expires_at: event.data.active_expires_at, closed: null, running: startRunning(state, at) };
    }
    case 'cell.archived': {
      if (state.status !== 'CLOSED') return undefined;
      const { at, archive_ref: archiveRef, checkpoint_ids: checkpointIds, retention_ends_at: retentionEndsAt } = event.data;
      return { ...state, status: 'ARCHIVED', archived: { at, archive_ref: archiveRef ?? null, checkpoint_ids: checkpointIds, retention_ends_at: retentionEndsAt, purged: null } };
    }
    case 'cell.archive_purged': {
      if (state.status !== 'ARCHIVED' || state.archived === null || state.archived.purged !== null) return undefined;
      const { at, purged_by: purgedBy, deleted_sha256: deleted, kept_sha256: kept } = event.data;
      return { ...state, archived: { ...state.archived, purged: { at, purged_by: purgedBy, deleted_sha256: deleted, kept_sha256: kept } } };
    }
    default:
      return undefined;
  }
});

export const cellDecider: Decider<CellCommand, CellEvent, CellState> = Object.freeze({ initialState, decide, evolve });
