import { hasErrorCode, type EventDraft, type EventEnvelope, type PrincipalType } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import {
  archivedObjects,
  CellError,
  cellDecider,
  cellHolder,
  cellPermissions,
  dueTransitions,
  isoAt,
  lastCheckpoint,
  participantOf,
  type CellCommand,
  type CellEvent,
  type CellPolicy,
  type CellRecord,
  type CellRole,
  type CellState,
  type DueTransition,
} from '@writ/kernel';
import { derivedId, serviceDraft } from '@writ/runtime';
import type { Logger } from '@writ/telemetry';
import type { CellUser } from '../outbound/cells/cell-config.js';
import { firstWorkingSeat, seatUser, workingSeatFor } from './cell-seats.js';
import { ExecutorError } from './executor-errors.js';
import type { CellHostPort, CellLog, CheckpointStore, ExecutorBeacon, RestoreOptions, TaskLog } from './ports.js';
import type { TaskSerializer } from './task-serializer.js';

/**
 * The cell of each task as a Lazarus cell (seed 000, sections 3, 4, 6, 7): every
 * lifecycle transition the executor causes is a command of the kernel's cell decider,
 * its events appended to `<prefix>.cell.<cell_id>` (cell id = task id) with the
 * subject's optimistic concurrency: of two executors deciding the same transition, the
 * first append wins and the other re-reads and decides again.
 *
 * | what happens | cell events |
 * |---|---|
 * | first action of a task | participant_invited (creates the cell: director seat = the task's principal, policy from config), invitation_accepted, preparing, activated |
 * | first action of another principal | participant_invited, invitation_accepted |
 * | any later action | none |
 * | close-cell (task ended) | checkpoint_started, checkpoint_completed (final, tarball as an artifact), closed; the container is stopped and kept (graveyard) |
 * | a hosting executor's sweep | heartbeat_recorded, at most one per half heartbeat timeout per running seat |
 * | a sweep of any executor | downed (heartbeats stopped), closed (ttl_expired / abandoned), invitation_expired |
 * | a host's sweep after the closed grace | archived (the cell's files scrubbed first) |
 * | any executor's sweep after the archive retention | archive_purged (the cell's own archived objects deleted from the artifact store first) |
 * | `writ cell resurrect` within the grace | resurrected |
 * | `writ cell renew` (ACTIVE, CHECKPOINTING or DOWNED; any executor answers) | ttl_renewed |
 * | an action of the downed seat's principal | revived |
 * | an action of another principal in a DOWNED cell (substitutes enabled) | substitute_invited, invitation_accepted, revived |
 *
 * Host-side work (container, layout, checkpoints, scrub) is the `CellHostPort`'s; the
 * local copy of a cell is "current" when its `.lazarus/cell.json` records the cell's
 * last spawning event (activated, resurrected or revived): only a current copy beats.
 */

export interface CellLifecycleSettings {
  /** This process (`prepared_by`, `spawned_by`, the spawn log). */
  readonly executorId: string;
  /**
   * The host this process's cells live on (`host_id` of the events that place a cell: preparing,
   * activated, revived, resurrected). Absent: no host is recorded and every cell counts as held here
   * (one host, as before hosts were).
   */
  readonly hostId?: string;
  /** The executor service principal: actor of the events it appends on its own account. */
  readonly principalId: string;
  /** The policy every new cell is created with (TTLs, substitutes); recorded in its first event. */
  readonly policy: CellPolicy;
  /** A hosting executor checkpoints an ACTIVE cell this long after its last checkpoint (or activation); 0: only the final checkpoint at close. */
  readonly checkpointIntervalMs: number;
}

export interface CellLifecycleDeps {
  readonly log: CellLog;
  readonly host: CellHostPort;
  readonly store: CheckpointStore;
  /** The task streams: the task's principal (`owner_principal_id` of `task.created`) directs its cell. */
  readonly tasks: TaskLog;
  /** Shared with the run and close handlers: one thing at a time in a cell in this process. */
  readonly serializer: TaskSerializer;
  readonly clock: () => Date;
  readonly beacon?: ExecutorBeacon;
  readonly logger?: Logger;
  /** Waits between reads while another executor spawns the cell (default: a timer). */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** A cell as folded from its stream: its last task_seq, its state, and the seq of its last spawning event (0: never spawned). */
export interface CellView {
  readonly seq: number;
  readonly state: CellState;
  readonly incarnation: number;
  /** Who appended the last `cell.preparing`, and when (null: never prepared). */
  readonly preparing: { readonly by: string; readonly at: string } | null;
}

/** The seat an action runs under, and the user its execs run as (its own uid; see `seatUser`). */
export interface ActingSeat {
  readonly participant_id: string;
  readonly role: CellRole;
  readonly user: CellUser;
}

/** Who appended an event, when not the executor itself (a director's signed request). */
export interface EventActor {
  readonly id: string;
  readonly type: PrincipalType;
}

interface AppendContext {
  readonly actor?: EventActor;
  readonly causationId?: string;
}

export interface ResurrectionResult {
  readonly restored_from: 'graveyard' | 'checkpoint';
  readonly checkpoint_id: string | null;
  readonly active_expires_at: string;
  readonly event_id: string;
}

/** A director's renewal of a cell's active TTL, verified by the caller. */
export interface RenewalRequest {
  /** The Writ director who signed it: it acts for the cell's director seat, and the event names it as its actor. */
  readonly renewed_by: EventActor;
  /** How much later the active window ends; absent: by the cell policy's `active_ttl_ms` (the kernel's default). */
  readonly extend_ms?: number;
}

export interface RenewalResult {
  /** `already_renewed`: the log already holds the renewal this request caused (a retry); nothing was appended. */
  readonly status: 'renewed' | 'already_renewed';
  readonly previous_expires_at: string;
  readonly active_expires_at: string;
  /** The latest the window may reach by renewals: activation + the policy's `active_ttl_max_ms`. */
  readonly max_expires_at: string;
  readonly event_id: string;
}

export interface SweepReport {
  readonly cells: number;
  readonly transitions: readonly { readonly cell_id: string; readonly kind: DueTransition['kind'] }[];
  readonly heartbeats: number;
  readonly checkpoints: number;
  readonly failures: number;
}

/** The note a cell's own objects carry in the artifact store: only they are ever deleted by its purge. */
export function archiveOwner(cellId: string): string {
  return `cell:${cellId}`;
}

/** Events that (re)start a cell on some host: the local copy that recorded the last one is the current one. */
const SPAWNING: ReadonlySet<string> = new Set(['cell.activated', 'cell.resurrected', 'cell.revived']);
/** Lost append races one call absorbs by re-reading before it gives up. */
const MAX_ROUNDS = 6;
/**
 * How long an executor waits for another one that is spawning the cell (PREPARING) before
 * it spawns it itself: two processes claiming one task's cell at once would tear each
 * other's claim down; one that crashed mid-spawn is taken over after this.
 */
export const SPAWN_WAIT_MS = 30_000;
const SPAWN_POLL_MS = 50;
/** Codes of a final checkpoint that cannot be taken (the cell then closes `failed`); anything else is retried by the caller. */
const CAPTURE_FAILURES = ['EXECUTOR_CHECKPOINT_FAILED', 'CELL_EXEC_FAILED', 'CELL_EXEC_TIMEOUT', 'CELL_START_FAILED', 'CELL_NOT_FOUND', 'CELL_QUOTA_UNAVAILABLE'];

const asDomain = (event: EventEnvelope) => ({ type: event.event_type, data: event.payload });

export class CellLifecycle {
  readonly #deps: CellLifecycleDeps;
  readonly #settings: CellLifecycleSettings;
  readonly #views = new Map<string, CellView>();
  /**
   * Archived cells this host no longer holds, with the instant (epoch ms) before which a sweep
   * skips them: their archive retention's end, or Infinity once purged.
   */
  readonly #archived = new Map<string, number>();
  /** `<cell>/<seat>` whose home this process has made. */
  readonly #homes = new Set<string>();
  /** The `active_expires_at` this process last wrote to each cell's `.lazarus/cell.json`: a holder's sweep rewrites it after a renewal. */
  readonly #writtenExpiry = new Map<string, string | null>();

  constructor(deps: CellLifecycleDeps, settings: CellLifecycleSettings) {
    this.#deps = deps;
    this.#settings = settings;
  }

  /** The cell as its stream says now (a cached fold while the stream's head has not moved). */
  async view(cellId: string): Promise<CellView> {
    const cached = this.#views.get(cellId);
    if (cached !== undefined && (await this.#deps.log.head(cellId)) === cached.seq) return cached;
    return this.#read(cellId);
  }

  // ---- actions ---------------------------------------------------------------------------------

  /**
   * Before a use is claimed (application/cell-routing.ts): a task without a cell gets one created
   * and prepared on this host (participant_invited, invitation_accepted, preparing naming this host),
   * appended at the stream's expected sequence. Of two executors reserving one new task's cell at
   * once the first append wins and the other reads the winner as the holder. Nothing happens on a
   * host here: the spawn follows in `prepareForAction`.
   */
  async reserve(cellId: string, principalId: string): Promise<CellView> {
    const view = await this.view(cellId);
    if (view.state.status !== 'IDLE' && view.state.status !== 'INVITED') return view;
    const owner = view.state.status === 'IDLE' ? ((await this.#ownerOf(cellId)) ?? principalId) : principalId;
    return this.#apply(cellId, (current) => (current.state.status === 'IDLE' || current.state.status === 'INVITED' ? this.#joinPlan(cellId, current.state, principalId, owner) : []));
  }

  /**
   * Before an action of `principalId` runs in the task's cell (called inside the task's
   * serialized section): the cell exists and is ACTIVE with a working seat for the
   * principal, whose home is on disk. Creates, joins, spawns, revives or takes over as
   * needed; throws EXECUTOR_CELL_CLOSED / EXECUTOR_CELL_NOT_ACTIVE when the action must not
   * run (the caller records it errored: nothing ran).
   */
  async prepareForAction(cellId: string, principalId: string): Promise<ActingSeat> {
    let view = await this.view(cellId);
    // The steady state: one read of the stream's head, nothing appended.
    if (view.state.status === 'ACTIVE' && this.#holdsHere(view.state)) {
      const { participant_id: participantId, seat } = workingSeatFor(view.state, principalId);
      if (seat?.status === 'accepted' && this.#homes.has(`${cellId}/${participantId}`)) return { participant_id: participantId, role: seat.role, user: seatUser(view.state, participantId) };
    }
    const owner = view.state.status === 'IDLE' ? ((await this.#ownerOf(cellId)) ?? principalId) : undefined;
    const before = view.seq;
    const wasCreated = view.state.status !== 'IDLE';
    const wasSeated = workingSeatFor(view.state, principalId).seat?.status === 'accepted';
    view = await this.#apply(cellId, (current) => this.#joinPlan(cellId, current.state, principalId, owner ?? principalId));
    if (view.state.status === 'PREPARING') view = await this.#awaitOtherSpawn(cellId, view);
    if (view.state.status === 'PREPARING') view = await this.#spawn(cellId, view);
    if (view.state.status === 'DOWNED') view = await this.#takeOver(cellId, view, principalId);
    const state = view.state;
    if (state.status !== 'ACTIVE') throw this.#notActive(cellId, state);
    if (!this.#holdsHere(state)) {
      // Routed here, then moved (another host's revival or spawn takeover won): its workspace is not here.
      throw new ExecutorError('EXECUTOR_CELL_HELD_ELSEWHERE', `the cell of task ${cellId} is now held by host ${String(cellHolder(state))}, not ${String(this.#hostId)}: the action did not run`, {
        details: { cell_id: cellId, host_id: cellHolder(state) },
      });
    }
    const { participant_id: participantId, seat } = workingSeatFor(state, principalId);
    if (seat?.status !== 'accepted') throw this.#notActive(cellId, state);
    const user = seatUser(state, participantId);
    const known = `${cellId}/${participantId}`;
    if (!this.#homes.has(known)) {
      await this.#deps.host.ensureHome(cellId, participantId, user);
      this.#homes.add(known);
    }
    if (view.seq !== before) {
      await this.#writeMetadata(cellId, view);
      // A principal joining a cell that already ran (its creation is the spawn log's 'spawned').
      if (wasCreated && !wasSeated) {
        await this.#deps.host.appendSpawnLog(cellId, { at: this.#now(), event: 'joined', executor_id: this.#settings.executorId, participant_id: participantId, principal_id: principalId, role: seat.role });
      }
    }
    return { participant_id: participantId, role: seat.role, user };
  }

  // ---- checkpoints, close, resurrect -----------------------------------------------------------

  /** A checkpoint of the cell now (serialized with its actions): tarball, artifact, two events. */
  checkpoint(cellId: string): Promise<CellView> {
    return this.#deps.serializer.run(cellId, () => this.#checkpoint(cellId, false));
  }

  /**
   * `close-cell` (the task ended): a final checkpoint closes an ACTIVE cell (checkpoint_started,
   * checkpoint_completed, closed), any other live state closes as the seed says; then the
   * container is stopped and kept with the workspace (the graveyard). 'none' for a task whose
   * cell never existed; 'already' for one closed or archived before.
   */
  close(cellId: string, reason: string): Promise<'none' | 'closed' | 'already'> {
    return this.#deps.serializer.run(cellId, async () => {
      const view = await this.view(cellId);
      const state = view.state;
      if (state.status === 'IDLE') return 'none';
      if (state.status === 'CLOSED' || state.status === 'ARCHIVED') {
        if (state.status === 'CLOSED' && (await this.#deps.host.holds(cellId))) await this.#deps.host.stop(cellId);
        return 'already';
      }
      const note = `task ended: ${reason}`;
      if (state.status === 'ACTIVE' && !(await this.#deps.host.holds(cellId))) {
        // Its files are on another host (whose sweep stops its container): closed without a final checkpoint.
        await this.#apply(cellId, (current) =>
          current.state.status === 'ACTIVE' ? [this.#command('close-cell', { reason: 'explicit', closed_by: current.state.director_id, note: `${note}; closed by ${this.#settings.executorId}, which does not hold the cell: no final checkpoint` })] : [],
        );
      } else if (state.status === 'ACTIVE') {
        try {
          await this.#checkpoint(cellId, true);
        } catch (error) {
          if (!hasErrorCode(error, ...CAPTURE_FAILURES)) throw error;
          this.#deps.logger?.warn({ err: error, cell_id: cellId }, 'final checkpoint not taken; the cell closes as failed');
          // The code only: the message may quote what the cell wrote (tar's stderr), which has no place in an event.
          const code = hasErrorCode(error) ? error.code : 'EXECUTOR_CHECKPOINT_FAILED';
          await this.#apply(cellId, (current) =>
            current.state.status === 'ACTIVE' ? [this.#command('close-cell', { reason: 'failed', closed_by: this.#settings.principalId, note: `${note}; final checkpoint not taken: ${code}` })] : [],
          );
        }
      } else {
        await this.#apply(cellId, (current) => {
          const s = current.state;
          if (s.status === 'DOWNED') return [this.#command('close-cell', { reason: 'abandoned', closed_by: s.director_id, note })];
          if (s.status === 'INVITED' || s.status === 'PREPARING' || s.status === 'CHECKPOINTING' || s.status === 'ACTIVE') return [this.#command('close-cell', { reason: 'explicit', closed_by: s.director_id, note })];
          return [];
        });
      }
      if (await this.#deps.host.holds(cellId)) {
        await this.#deps.host.stop(cellId);
        await this.#deps.host.appendDecision(cellId, { at: this.#now(), decision: 'close', by: this.#record(await this.view(cellId)).director_id, reason, executor_id: this.#settings.executorId });
      }
      return 'closed';
    });
  }

  /**
   * A director's resurrection of a CLOSED cell within its grace (Lazarus 7.1): the graveyard
   * this host holds is started again as it was; a cell this host does not hold is rebuilt
   * from its last checkpoint. `signer` is a Writ director (verified by the caller): it acts
   * for the cell's director seat, and the event names it as its actor.
   */
  resurrect(cellId: string, signer: EventActor, causationId: string): Promise<ResurrectionResult> {
    return this.#deps.serializer.run(cellId, async () => {
      const view = await this.view(cellId);
      if (view.state.status === 'IDLE') throw new ExecutorError('EXECUTOR_CELL_NOT_FOUND', `there is no cell ${cellId}`, { details: { cell_id: cellId } });
      const state = view.state;
      const actingSeat = directorSeatFor(state, signer.id);
      // Refused before anything happens on the host: wrong state, never ran, grace over.
      cellDecider.decide(this.#command('resurrect-cell', { resurrected_by: actingSeat, host_id: this.#hostId }), state);
      let restoredFrom: ResurrectionResult['restored_from'];
      let checkpointId: string | null = null;
      if (await this.#deps.host.holds(cellId)) {
        await this.#deps.host.open(cellId);
        restoredFrom = 'graveyard';
      } else {
        if (lastCheckpoint(state) === null) {
          throw new ExecutorError('EXECUTOR_CELL_NOT_RESTORABLE', `cell ${cellId} is not on this host and has no checkpoint to resume from`, { details: { cell_id: cellId } });
        }
        await this.#deps.host.open(cellId);
        checkpointId = await this.#restoreLast(cellId, state, { homes: true });
        restoredFrom = 'checkpoint';
      }
      let next: CellView;
      let eventId: string;
      try {
        ({ view: next, eventIds: [eventId = ''] } = await this.#applyWithIds(cellId, () => [this.#command('resurrect-cell', { resurrected_by: actingSeat, host_id: this.#hostId })], { actor: signer, causationId }));
      } catch (error) {
        // Back to the graveyard: the log says the cell is still closed.
        await this.#deps.host.stop(cellId).catch(() => false);
        throw error;
      }
      const record = this.#record(next);
      for (const p of record.participants) if (p.status === 'accepted' && cellPermissions(p.role).runs) await this.#deps.host.ensureHome(cellId, p.participant_id, seatUser(record, p.participant_id));
      await this.#writeMetadata(cellId, next);
      await this.#deps.host.appendSpawnLog(cellId, { at: this.#now(), event: 'resurrected', executor_id: this.#settings.executorId, restored_from: restoredFrom, checkpoint_id: checkpointId });
      await this.#deps.host.appendDecision(cellId, { at: this.#now(), decision: 'resurrect', by: signer.id, for_seat: actingSeat });
      return { restored_from: restoredFrom, checkpoint_id: checkpointId, active_expires_at: record.active_expires_at as string, event_id: eventId };
    });
  }

  /**
   * A director's renewal of the cell's active TTL (Lazarus 4.2): the kernel decides
   * (`renew-active-ttl`: ACTIVE, CHECKPOINTING or DOWNED, before the window ends, within the
   * policy's `active_ttl_max_ms` from activation) and `cell.ttl_renewed` is appended. Only the log
   * changes, so it is neither routed to the cell's holder nor queued behind the cell's actions: any
   * executor answers, and the sweeps (which read the log) close the cell at its new expiry. A holder
   * of the current copy rewrites `.lazarus/cell.json` now; one that did not answer does so on its
   * next sweep. `causationId` names the signed request: one already applied (a retry of the same
   * JWS) is answered from the log and never extends the window twice.
   */
  async renew(cellId: string, request: RenewalRequest, causationId: string): Promise<RenewalResult> {
    for (let round = 1; round <= MAX_ROUNDS; round += 1) {
      const events = await this.#deps.log.read(cellId);
      const view = this.#fold(cellId, events);
      if (view.state.status === 'IDLE') throw new ExecutorError('EXECUTOR_CELL_NOT_FOUND', `there is no cell ${cellId} (a cell's id is its task's id)`, { details: { cell_id: cellId } });
      const state = view.state;
      const earlier = events.find((event) => event.event_type === 'cell.ttl_renewed' && event.causation_id === causationId);
      if (earlier !== undefined) {
        const activeExpiresAt = String(earlier.payload['active_expires_at']);
        return { status: 'already_renewed', previous_expires_at: String(earlier.payload['previous_expires_at']), active_expires_at: activeExpiresAt, max_expires_at: maxExpiresAt(state) ?? activeExpiresAt, event_id: earlier.event_id };
      }
      const command = this.#command('renew-active-ttl', { renewed_by: directorSeatFor(state, request.renewed_by.id), ...(request.extend_ms === undefined ? {} : { extend_ms: request.extend_ms }) });
      let applied: { view: CellView; eventIds: string[] };
      try {
        cellDecider.decide(command, state);
        // Appended only onto the state searched above: a cell that moved on is searched and decided again.
        applied = await this.#applyWithIds(cellId, (current) => (current.seq === view.seq ? [command] : []), { actor: request.renewed_by, causationId });
      } catch (error) {
        throw renewalRefused(error, state);
      }
      const [eventId] = applied.eventIds;
      if (eventId === undefined) continue;
      const record = this.#record(applied.view);
      if (this.#holdsHere(record) && (await this.#deps.host.holds(cellId)) && (await this.#deps.host.incarnation(cellId)) === applied.view.incarnation) {
        await this.#writeMetadata(cellId, applied.view);
      }
      return { status: 'renewed', previous_expires_at: state.active_expires_at as string, active_expires_at: record.active_expires_at as string, max_expires_at: maxExpiresAt(record) as string, event_id: eventId };
    }
    throw new ExecutorError('EXECUTOR_NOT_READY', `cell ${cellId} kept changing while it was being renewed; retry`, { details: { cell_id: cellId } });
  }

  // ---- sweep -----------------------------------------------------------------------------------

  /**
   * One pass over every cell the log or this host knows (the sweep timer calls it; tests
   * call it with their own clock): a current host's heartbeats and periodic checkpoints
   * first, then every time-driven transition that is due (`dueTransitions` of the kernel);
   * a host scrubs and archives a cell past its grace, stops a copy that is no longer
   * current, and scrubs what is archived; any executor purges an archive past its
   * retention. One cell's failure never stops the pass.
   */
  async sweep(): Promise<SweepReport> {
    const local = new Set(await this.#deps.host.localCells());
    this.#deps.beacon?.beat({ executor_id: this.#settings.executorId, at: this.#now(), cells_held: local.size });
    const ids = [...new Set([...(await this.#deps.log.list()), ...local])].sort();
    const report = { cells: 0, transitions: [] as { cell_id: string; kind: DueTransition['kind'] }[], heartbeats: 0, checkpoints: 0, failures: 0 };
    const nowMs = Date.parse(this.#now());
    for (const cellId of ids) {
      const parked = this.#archived.get(cellId);
      if (parked !== undefined && !local.has(cellId) && nowMs < parked) continue;
      report.cells += 1;
      try {
        await this.#sweepCell(cellId, local.has(cellId), report);
      } catch (error) {
        report.failures += 1;
        this.#deps.logger?.warn({ err: error, cell_id: cellId }, 'cell sweep failed; the next sweep tries again');
      }
    }
    return report;
  }

  async #sweepCell(cellId: string, local: boolean, report: { transitions: { cell_id: string; kind: DueTransition['kind'] }[]; heartbeats: number; checkpoints: number }): Promise<void> {
    let view = await this.view(cellId);
    if (local) view = await this.#hostSweep(cellId, view, report);
    const now = this.#now();
    for (const due of dueTransitions(view.state, now)) {
      if (due.kind === 'grace_over') {
        if (!local) continue;
        await this.#archive(cellId);
      } else if (due.kind === 'retention_over') {
        // Any executor: the archive is in the shared artifact store, not on a host.
        if (!(await this.#purge(cellId))) continue;
      } else {
        const command = this.#dueCommand(due);
        // Decided again on a fresh read: another executor may have moved the cell meanwhile (then it is not ours to count).
        const applied = await this.#applyWithIds(cellId, (current) => (dueTransitions(current.state, this.#now()).some((d) => d.kind === due.kind) ? [command] : []), {});
        if (applied.eventIds.length === 0) continue;
      }
      report.transitions.push({ cell_id: cellId, kind: due.kind });
      this.#deps.logger?.info({ cell_id: cellId, transition: due.kind }, 'cell transition applied by the sweep');
      view = await this.view(cellId);
    }
    if (view.state.status === 'ARCHIVED') this.#forget(cellId);
  }

  /** This host's part of a sweep of one cell it holds. */
  async #hostSweep(cellId: string, view: CellView, report: { heartbeats: number; checkpoints: number }): Promise<CellView> {
    const state = view.state;
    if (state.status === 'ARCHIVED') {
      await this.#deps.host.markScrubbing(cellId);
      await this.#deps.host.scrub(cellId);
      await this.#deps.host.clearScrubbing(cellId);
      this.#forget(cellId);
      return view;
    }
    if (state.status === 'CLOSED' || state.status === 'DOWNED') {
      // The graveyard, or a cell frozen pending recovery: nothing runs in it.
      await this.#deps.host.stop(cellId);
      return view;
    }
    if (state.status !== 'ACTIVE') return view;
    const current = (await this.#deps.host.incarnation(cellId)) === view.incarnation;
    if (!current) {
      // Another host (re)started the cell since this copy ran: this one must not beat or run.
      await this.#deps.host.stop(cellId);
      return view;
    }
    let next = view;
    for (const running of state.running) {
      const seq = next.seq;
      next = await this.#apply(cellId, (v) => (v.state.status === 'ACTIVE' && v.state.running.some((r) => r.participant_id === running.participant_id) ? [this.#command('record-heartbeat', { participant_id: running.participant_id })] : []));
      if (next.seq !== seq) report.heartbeats += 1;
    }
    const record = this.#record(next);
    // A renewal answered by another executor (or by this one before a restart) changed only the log.
    if (record.status === 'ACTIVE' && this.#writtenExpiry.get(cellId) !== record.active_expires_at) await this.#writeMetadata(cellId, next);
    const interval = this.#settings.checkpointIntervalMs;
    if (interval > 0 && record.status === 'ACTIVE') {
      const since = lastCheckpoint(record)?.completed_at ?? record.activated_at;
      if (since !== null && Date.parse(this.#now()) - Date.parse(since) >= interval) {
        next = await this.checkpoint(cellId);
        report.checkpoints += 1;
      }
    }
    return next;
  }

  #dueCommand(due: Exclude<DueTransition, { kind: 'grace_over' | 'retention_over' }>): CellCommand {
    switch (due.kind) {
      case 'invitation_expired':
        return this.#command('expire-invitation', { participant_id: due.participant_id, expired_by: this.#settings.principalId });
      case 'heartbeat_missed':
        return this.#command('mark-downed', { participant_id: due.participant_id });
      case 'active_ttl_elapsed':
      case 'downed_ttl_elapsed':
        return this.#command('close-cell', { reason: due.reason, closed_by: this.#settings.principalId });
    }
  }

  /**
   * Past the closed grace (Lazarus 7.1): the cell's files are deleted from this host first
   * (a marker outside the cell lets a later sweep finish a scrub cut short), then
   * `cell.archived` lists the checkpoints, which stay in the artifact store (the warm
   * archive tier) under an archive manifest until the archive retention ends (`#purge`).
   */
  async #archive(cellId: string): Promise<void> {
    const before = await this.view(cellId);
    // The kernel must agree the grace is over before anything is deleted.
    if (before.state.status === 'CLOSED') cellDecider.decide(this.#command('archive-cell', { archived_by: this.#settings.principalId }), before.state);
    await this.#deps.host.markScrubbing(cellId);
    await this.#deps.host.scrub(cellId);
    const view = await this.view(cellId);
    if (view.state.status === 'CLOSED') {
      const record = view.state;
      const manifest = {
        cell_id: cellId,
        archived_at: this.#now(),
        archived_by: this.#settings.executorId,
        checkpoints: record.checkpoints.filter((c) => c.completed_at !== null).map((c) => ({ checkpoint_id: c.checkpoint_id, sha256: c.sha256, artifact_ref: c.artifact_ref, final: c.final, completed_at: c.completed_at })),
      };
      const stored = await this.#deps.store.put(new TextEncoder().encode(`${JSON.stringify(manifest)}\n`), archiveOwner(cellId));
      await this.#apply(cellId, (current) => (current.state.status === 'CLOSED' ? [this.#command('archive-cell', { archived_by: this.#settings.principalId, archive_ref: stored.uri })] : []));
    }
    await this.#deps.host.clearScrubbing(cellId);
    this.#forget(cellId);
  }

  /**
   * Past the archive retention (Lazarus 7.2: the warm tier keeps checkpoints 30 days by
   * default, `archive_retention_ms` of the cell's policy): the archived objects (checkpoint
   * tarballs, the archive manifest) are deleted from the artifact store, then
   * `cell.archive_purged` records which were deleted and which kept. The store is
   * content-addressed (`sha256-<hex>`) and shared with tasks and services, so an object is
   * deleted only when (1) its owner note is this cell's (`archiveOwner`, set when the cell's
   * own put created it: content someone stored first never is), and (2) no other cell's
   * checkpoints or archive name the same hash. Every checkpoint also carries a random nonce
   * (cell-host.ts), so no one else stores its bytes by chance. Deleting comes first: a purge
   * cut short finds its objects absent next time (counted deleted) and appends then. Any
   * executor may purge: deletes are idempotent and of two appends the first wins. True when
   * this call appended the event.
   */
  async #purge(cellId: string): Promise<boolean> {
    const view = await this.view(cellId);
    if (view.state.status !== 'ARCHIVED' || view.state.archived?.purged !== null) return false;
    const objects = archivedObjects(view.state);
    // The kernel must agree the retention is over before anything is deleted.
    cellDecider.decide(this.#command('purge-archive', { purged_by: this.#settings.principalId, deleted_sha256: [], kept_sha256: objects }), view.state);
    const elsewhere = await this.#referencedElsewhere(cellId);
    const deleted: string[] = [];
    const kept: string[] = [];
    for (const sha256 of objects) {
      if (elsewhere.has(sha256)) {
        kept.push(sha256);
        continue;
      }
      const outcome = await this.#deps.store.deleteOwned(sha256, archiveOwner(cellId));
      if (outcome === 'kept') kept.push(sha256);
      else deleted.push(sha256);
    }
    const applied = await this.#applyWithIds(
      cellId,
      (current) =>
        current.state.status === 'ARCHIVED' && current.state.archived?.purged === null
          ? [this.#command('purge-archive', { purged_by: this.#settings.principalId, deleted_sha256: deleted, kept_sha256: kept })]
          : [],
      {},
    );
    if (applied.eventIds.length > 0) this.#deps.logger?.info({ cell_id: cellId, deleted: deleted.length, kept: kept.length }, 'archived cell purged after its retention');
    return applied.eventIds.length > 0;
  }

  /** Content hashes the checkpoints and archives of every other cell in the log name (a purged archive names none). */
  async #referencedElsewhere(cellId: string): Promise<Set<string>> {
    const hashes = new Set<string>();
    for (const other of await this.#deps.log.list()) {
      if (other === cellId) continue;
      const { state } = await this.view(other);
      if (state.status === 'IDLE' || (state.archived !== null && state.archived.purged !== null)) continue;
      for (const checkpoint of state.checkpoints) if (checkpoint.sha256 !== null) hashes.add(checkpoint.sha256);
      for (const hash of archivedObjects(state)) hashes.add(hash);
    }
    return hashes;
  }

  /**
   * An archived cell this host no longer holds: nothing of it stays cached, and the sweep skips
   * it until its archive retention ends (for good once it is purged).
   */
  #forget(cellId: string): void {
    const state = this.#views.get(cellId)?.state;
    const archived = state?.status === 'ARCHIVED' ? state.archived : null;
    this.#archived.set(cellId, archived === null ? 0 : archived.purged !== null ? Number.POSITIVE_INFINITY : Date.parse(archived.retention_ends_at));
    this.#views.delete(cellId);
    this.#writtenExpiry.delete(cellId);
    for (const key of this.#homes) if (key.startsWith(`${cellId}/`)) this.#homes.delete(key);
  }

  // ---- internals -------------------------------------------------------------------------------

  /** Events that seat `principalId` in the cell (create, invite, accept, prepare); host work comes after. */
  #joinPlan(cellId: string, state: CellState, principalId: string, owner: string): CellCommand[] {
    switch (state.status) {
      case 'IDLE': {
        const seat = firstWorkingSeat(owner, principalId);
        return [
          this.#command('invite-participant', { cell_id: cellId, invited_by: owner, participant_id: seat, principal_id: principalId, role: 'executor', policy: this.#settings.policy }),
          this.#command('accept-invitation', { participant_id: seat }),
          this.#command('prepare-cell', { backend: 'docker', prepared_by: this.#settings.executorId, host_id: this.#hostId }),
        ];
      }
      case 'INVITED':
      case 'PREPARING':
      case 'ACTIVE': {
        const { participant_id: seat, seat: held } = workingSeatFor(state, principalId);
        const commands: CellCommand[] = [];
        if (held === undefined) commands.push(this.#command('invite-participant', { cell_id: cellId, invited_by: state.director_id, participant_id: seat, principal_id: principalId, role: 'executor' }));
        if (held?.status !== 'accepted') commands.push(this.#command('accept-invitation', { participant_id: seat }));
        if (state.status === 'INVITED') commands.push(this.#command('prepare-cell', { backend: 'docker', prepared_by: this.#settings.executorId, host_id: this.#hostId }));
        return commands;
      }
      case 'CHECKPOINTING':
      case 'DOWNED':
        return [];
      case 'CLOSED':
      case 'ARCHIVED':
        throw new ExecutorError('EXECUTOR_CELL_CLOSED', `the cell of task ${cellId} is ${state.status}: nothing runs in it (a director may resurrect a closed cell within its grace)`, {
          details: { cell_id: cellId, status: state.status },
        });
    }
  }

  /**
   * While an executor on another host spawns the cell (its `cell.preparing`, recent): its
   * activation, read again and again. A cell prepared for this host (another executor of
   * this host reserved it while routing an action, then lost the use's claim) is spawned
   * here at once: its container and CELL_HOME are local, and opening them is idempotent.
   */
  async #awaitOtherSpawn(cellId: string, view: CellView): Promise<CellView> {
    const sleep = this.#deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    let current = view;
    while (
      current.state.status === 'PREPARING' &&
      current.preparing !== null &&
      current.preparing.by !== this.#settings.executorId &&
      !(this.#hostId !== undefined && cellHolder(current.state) === this.#hostId)
    ) {
      if (this.#deps.clock().getTime() - Date.parse(current.preparing.at) >= SPAWN_WAIT_MS) break;
      await sleep(SPAWN_POLL_MS);
      current = await this.view(cellId);
    }
    return current;
  }

  /** PREPARING → ACTIVE: the container (warm pool or cold), the homes, then `cell.activated`. */
  async #spawn(cellId: string, view: CellView): Promise<CellView> {
    // A failed spawn leaves the cell PREPARING: the next action tries again (a transient
    // Docker failure must not close the task's cell for good); close-cell still closes it.
    await this.#deps.host.open(cellId);
    const spawning = this.#record(view);
    for (const p of spawning.participants) {
      if (p.status !== 'accepted' || !cellPermissions(p.role).runs) continue;
      await this.#deps.host.ensureHome(cellId, p.participant_id, seatUser(spawning, p.participant_id));
      this.#homes.add(`${cellId}/${p.participant_id}`);
    }
    const next = await this.#apply(cellId, (current) => (current.state.status === 'PREPARING' ? [this.#command('activate-cell', { spawned_by: this.#settings.executorId, host_id: this.#hostId })] : []));
    // Another host's activation won: this copy is not the current one (its sweep stops it, never beats for it).
    if (next.incarnation !== view.incarnation && this.#holdsHere(next.state)) {
      await this.#writeMetadata(cellId, next);
      const record = this.#record(next);
      await this.#deps.host.appendSpawnLog(cellId, {
        at: this.#now(),
        event: 'spawned',
        executor_id: this.#settings.executorId,
        backend: record.backend,
        participants: record.participants.map((p) => ({ participant_id: p.participant_id, principal_id: p.principal_id, role: p.role })),
      });
    }
    return next;
  }

  /**
   * A DOWNED cell and an action: the downed seat's own principal revives it; another
   * principal takes it over as a `substitute` when the cell policy enables them
   * (substitute_invited, invitation_accepted, revived). The substitute inherits the last
   * checkpoint (project and shared area restored from it; without one, the project as it
   * stands) and never the predecessor's home, which is removed. A host that does not hold
   * the cell rebuilds it from the last checkpoint.
   */
  async #takeOver(cellId: string, view: CellView, principalId: string): Promise<CellView> {
    const state = this.#record(view);
    const downedId = (state.downed as NonNullable<CellRecord['downed']>).participant_id;
    const { participant_id: seatId, seat } = workingSeatFor(state, principalId);
    const holds = await this.#deps.host.holds(cellId);
    let event: 'revived' | 'substituted';
    if (seat?.participant_id === downedId) {
      await this.#deps.host.open(cellId);
      if (!holds) await this.#restoreLast(cellId, state, { homes: true });
      event = 'revived';
    } else {
      if (seat !== undefined && !(seat.role === 'substitute' && seat.replaces === downedId)) throw this.#notActive(cellId, state);
      if (!state.policy.allow_substitute) throw this.#notActive(cellId, state);
      view = await this.#apply(cellId, (current) => {
        const s = current.state;
        if (s.status !== 'DOWNED') return [];
        const held = workingSeatFor(s, principalId).seat;
        const commands: CellCommand[] = [];
        if (held === undefined) commands.push(this.#command('invite-substitute', { invited_by: s.director_id, participant_id: seatId, principal_id: principalId }));
        if (held?.status !== 'accepted') commands.push(this.#command('accept-invitation', { participant_id: seatId }));
        return commands;
      });
      if (view.state.status !== 'DOWNED') return view;
      await this.#deps.host.open(cellId);
      await this.#deps.host.removeHome(cellId, downedId);
      await this.#restoreLast(cellId, this.#record(view), { homes: false });
      await this.#deps.host.appendDecision(cellId, { at: this.#now(), decision: 'invite-substitute', by: this.#record(view).director_id, substitute: seatId, replaces: downedId });
      event = 'substituted';
    }
    const reviver = seat?.participant_id === downedId ? downedId : seatId;
    // Its own uid: a substitute is a new seat, so nothing of the predecessor's is ever its.
    await this.#deps.host.ensureHome(cellId, reviver, seatUser(this.#record(view), reviver));
    const next = await this.#apply(cellId, (current) => (current.state.status === 'DOWNED' ? [this.#command('revive-cell', { revived_by: reviver, host_id: this.#hostId })] : []));
    // Another host's revival won: this copy is not the current one (prepareForAction refuses to run in it).
    if (!this.#holdsHere(next.state)) return next;
    await this.#writeMetadata(cellId, next);
    await this.#deps.host.appendSpawnLog(cellId, { at: this.#now(), event, executor_id: this.#settings.executorId, participant_id: reviver, replaces: event === 'substituted' ? downedId : null });
    return next;
  }

  /** Restores the cell's last checkpoint (its hash checked against the log); the checkpoint id, or null when there is none. */
  async #restoreLast(cellId: string, state: CellRecord, options: RestoreOptions): Promise<string | null> {
    const checkpoint = lastCheckpoint(state);
    if (checkpoint === null || checkpoint.sha256 === null) return null;
    const bytes = await this.#deps.store.get(checkpoint.sha256);
    if (bytes === null || sha256Hex(bytes) !== checkpoint.sha256) {
      throw new ExecutorError('EXECUTOR_CHECKPOINT_FAILED', `checkpoint ${checkpoint.checkpoint_id} of cell ${cellId} is ${bytes === null ? 'missing from' : 'corrupt in'} the artifact store`, {
        details: { cell_id: cellId, checkpoint_id: checkpoint.checkpoint_id, sha256: checkpoint.sha256 },
      });
    }
    // Each home back to its own seat's user (the same uid on every host: see `seatUser`).
    const owners: Record<string, CellUser> = {};
    for (const p of state.participants) if (cellPermissions(p.role).runs) owners[p.participant_id] = seatUser(state, p.participant_id);
    await this.#deps.host.restoreCheckpoint(cellId, bytes, { ...options, owners });
    return checkpoint.checkpoint_id;
  }

  /**
   * Captured and stored first, then recorded: checkpoint_started and checkpoint_completed
   * are appended together (with `cell.closed` for a final one), so no cell is ever left
   * CHECKPOINTING by a capture that failed. A cell found CHECKPOINTING (an append cut short)
   * gets its checkpoint in progress completed with this capture.
   */
  async #checkpoint(cellId: string, final: boolean): Promise<CellView> {
    const view = await this.view(cellId);
    if (view.state.status !== 'ACTIVE' && view.state.status !== 'CHECKPOINTING') throw this.#notActive(cellId, view.state);
    await this.#deps.host.open(cellId);
    const bytes = await this.#deps.host.captureCheckpoint(cellId);
    const stored = await this.#deps.store.put(bytes, archiveOwner(cellId));
    const next = await this.#apply(cellId, (current) => {
      const s = current.state;
      if (s.status === 'CHECKPOINTING') {
        const inProgress = s.checkpoints.at(-1) as NonNullable<ReturnType<typeof s.checkpoints.at>>;
        return [this.#command('complete-checkpoint', { checkpoint_id: inProgress.checkpoint_id, sha256: stored.sha256, artifact_ref: stored.uri })];
      }
      if (s.status !== 'ACTIVE') throw this.#notActive(cellId, s);
      let n = s.checkpoints.length + 1;
      while (s.checkpoints.some((c) => c.checkpoint_id === `ckpt-${n}`)) n += 1;
      const checkpointId = `ckpt-${n}`;
      return [
        this.#command('begin-checkpoint', { checkpoint_id: checkpointId, requested_by: s.director_id, final }),
        this.#command('complete-checkpoint', { checkpoint_id: checkpointId, sha256: stored.sha256, artifact_ref: stored.uri }),
      ];
    });
    const taken = lastCheckpoint(this.#record(next));
    if (taken !== null && taken.sha256 === stored.sha256) {
      await this.#deps.host.writeCheckpointRecord(cellId, { checkpoint_id: taken.checkpoint_id, sha256: stored.sha256, artifact_ref: stored.uri, byte_size: stored.byte_size, final: taken.final, at: taken.completed_at as string });
      await this.#deps.host.appendDecision(cellId, { at: this.#now(), decision: 'checkpoint', by: this.#record(next).director_id, checkpoint_id: taken.checkpoint_id, final: taken.final, sha256: stored.sha256 });
    }
    return next;
  }

  #notActive(cellId: string, state: CellState): ExecutorError {
    const downed = state.status === 'DOWNED' ? state.downed?.participant_id : undefined;
    return new ExecutorError(
      'EXECUTOR_CELL_NOT_ACTIVE',
      `the cell of task ${cellId} is ${state.status}${downed === undefined ? '' : ` (${downed} missed its heartbeats; its own principal revives it${state.status === 'DOWNED' && state.policy.allow_substitute ? ', another takes over as a substitute' : ''})`}: the action did not run`,
      { details: { cell_id: cellId, status: state.status } },
    );
  }

  async #ownerOf(taskId: string): Promise<string | undefined> {
    const created = (await this.#deps.tasks.read(taskId)).find((event) => event.event_type === 'task.created');
    const owner = created?.payload['owner_principal_id'];
    return typeof owner === 'string' && /^[A-Za-z0-9_-]{1,128}$/.test(owner) ? owner : undefined;
  }

  get #hostId(): string | undefined {
    return this.#settings.hostId;
  }

  /** No other host holds the cell (an unknown holder, from events that name none, counts as here: the behaviour before hosts). */
  #holdsHere(state: CellState): boolean {
    const holder = cellHolder(state);
    return this.#hostId === undefined || holder === null || holder === this.#hostId;
  }

  #record(view: CellView): CellRecord {
    if (view.state.status === 'IDLE') throw new ExecutorError('EXECUTOR_INTERNAL', 'a cell expected to exist has no events');
    return view.state;
  }

  #now(): string {
    return this.#deps.clock().toISOString();
  }

  #command<T extends CellCommand['type']>(type: T, data: Extract<CellCommand, { type: T }>['data']): CellCommand {
    return { type, data, metadata: { now: this.#now() } } as CellCommand;
  }

  async #read(cellId: string): Promise<CellView> {
    return this.#fold(cellId, await this.#deps.log.read(cellId));
  }

  /** The view of `events` (the cell's whole stream), cached as the cell's current fold. */
  #fold(cellId: string, events: readonly EventEnvelope[]): CellView {
    let state: CellState = cellDecider.initialState();
    let incarnation = 0;
    let preparing: CellView['preparing'] = null;
    for (const event of events) {
      state = cellDecider.evolve(state, asDomain(event));
      if (SPAWNING.has(event.event_type)) incarnation = event.task_seq;
      if (event.event_type === 'cell.preparing') preparing = preparingOf(event.payload);
    }
    const view: CellView = { seq: events.at(-1)?.task_seq ?? 0, state, incarnation, preparing };
    this.#views.set(cellId, view);
    return view;
  }

  #apply(cellId: string, plan: (view: CellView) => readonly CellCommand[], context: AppendContext = {}): Promise<CellView> {
    return this.#applyWithIds(cellId, plan, context).then(({ view }) => view);
  }

  /**
   * Load → decide → append, again on a fresh read after a lost race. `plan` turns the
   * current view into commands (none: nothing to do); each is decided on the state the
   * previous one left, and all their events are appended at once with the expected seq.
   */
  async #applyWithIds(cellId: string, plan: (view: CellView) => readonly CellCommand[], context: AppendContext): Promise<{ view: CellView; eventIds: string[] }> {
    for (let round = 1; ; round += 1) {
      const view = round === 1 ? await this.view(cellId) : await this.#read(cellId);
      const commands = plan(view);
      let state = view.state;
      const events: CellEvent[] = [];
      for (const command of commands) {
        for (const event of cellDecider.decide(command, state)) {
          state = cellDecider.evolve(state, event);
          events.push(event);
        }
      }
      if (events.length === 0) return { view, eventIds: [] };
      const drafts = events.map((event, i) => this.#draft(cellId, view.seq + i + 1, event, context));
      try {
        const appended = await this.#deps.log.append(cellId, drafts, view.seq);
        // The log already held these keys: another writer decided the same at this seq; read again.
        if (appended.duplicate) {
          if (round < MAX_ROUNDS) continue;
          throw new ExecutorError('EXECUTOR_NOT_READY', `cell ${cellId} kept changing while it was being updated; retry`, { details: { cell_id: cellId } });
        }
      } catch (error) {
        this.#views.delete(cellId);
        if (hasErrorCode(error, 'EVENTSTORE_CONFLICT') && round < MAX_ROUNDS) continue;
        throw error;
      }
      let incarnation = view.incarnation;
      let preparing = view.preparing;
      events.forEach((event, i) => {
        if (SPAWNING.has(event.type)) incarnation = view.seq + i + 1;
        if (event.type === 'cell.preparing') preparing = preparingOf(event.data);
      });
      const next: CellView = { seq: view.seq + events.length, state, incarnation, preparing };
      this.#views.set(cellId, next);
      return { view: next, eventIds: drafts.map((draft) => draft.event_id) };
    }
  }

  #draft(cellId: string, seq: number, event: CellEvent, context: AppendContext): EventDraft {
    const key = `${cellId}:${seq}:${event.type}`;
    const draft = serviceDraft({
      key,
      eventId: derivedId('cev', key),
      eventType: event.type,
      entityType: 'cell',
      entityId: cellId,
      occurredAt: event.data.at,
      actorId: this.#settings.principalId,
      payload: event.data,
      causationId: context.causationId ?? null,
      correlationId: cellId,
    });
    return context.actor === undefined ? draft : { ...draft, actor_type: context.actor.type, actor_id: context.actor.id };
  }

  /** `.lazarus/cell.json`: the cell as this host runs it, with the incarnation that makes this copy current. */
  async #writeMetadata(cellId: string, view: CellView): Promise<void> {
    const record = this.#record(view);
    this.#writtenExpiry.set(cellId, record.active_expires_at);
    await this.#deps.host.writeMetadata(cellId, {
      version: 1,
      cell_id: cellId,
      task_id: cellId,
      status: record.status,
      backend: record.backend,
      executor_id: this.#settings.executorId,
      spawn_seq: view.incarnation,
      director: record.director_id,
      participants: record.participants.map((p) => ({ participant_id: p.participant_id, principal_id: p.principal_id, role: p.role, isolation: p.isolation, status: p.status, replaces: p.replaces })),
      policy: record.policy,
      activated_at: record.activated_at,
      active_expires_at: record.active_expires_at,
      checkpoints: record.checkpoints.filter((c) => c.completed_at !== null).map((c) => ({ checkpoint_id: c.checkpoint_id, sha256: c.sha256, artifact_ref: c.artifact_ref, final: c.final })),
      target_repo: null,
      written_at: this.#now(),
    });
  }
}

/**
 * The cell's seat a Writ director acts for: its own director seat when it holds one, else the
 * cell's creating director's (a Writ director may act for any cell; the event's actor names it).
 */
function directorSeatFor(state: CellRecord, signerId: string): string {
  const seat = participantOf(state, signerId);
  return seat?.role === 'director' && seat.status === 'accepted' ? seat.participant_id : state.director_id;
}

/** The latest a cell's active window may reach by renewals (null before its first activation). */
function maxExpiresAt(state: CellRecord): string | null {
  return state.activated_at === null ? null : isoAt(Date.parse(state.activated_at) + state.policy.active_ttl_max_ms);
}

/** `3h20m`, `45m`, `1m30s`: whole seconds, rounded down (never more than the room it describes); the CLI's `--extend` reads it back. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1_000));
  const parts = [[Math.floor(seconds / 3_600), 'h'], [Math.floor((seconds % 3_600) / 60), 'm'], [seconds % 60, 's']] as const;
  return parts.filter(([n]) => n > 0).map(([n, unit]) => `${n}${unit}`).join('') || '0s';
}

/**
 * The kernel's refusal of a renewal (same code and details), told so that a director knows what
 * the cell allows and what to do next; any other error as it is.
 */
function renewalRefused(error: unknown, state: CellRecord): unknown {
  if (hasErrorCode(error, 'CELL_TRANSITION_INVALID')) {
    const next =
      state.status === 'CLOSED'
        ? '; a closed cell comes back within its grace with `writ cell resurrect` (with a new window)'
        : state.status === 'ARCHIVED'
          ? '; an archived cell never runs again'
          : '; its window starts when it is activated';
    return new CellError('CELL_TRANSITION_INVALID', `cell ${state.cell_id} is ${state.status}: only an ACTIVE, CHECKPOINTING or DOWNED cell's active TTL can be renewed${next}`, {
      cause: error,
      ...(error.details === undefined ? {} : { details: { ...error.details } }),
    });
  }
  if (hasErrorCode(error, 'CELL_TTL_CAP_EXCEEDED')) {
    const max = maxExpiresAt(state) as string;
    const expires = state.active_expires_at as string;
    const room = Date.parse(max) - Date.parse(expires);
    const allowance = room >= 1_000 ? `a renewal may add at most ${formatDuration(room)} now (--extend ${formatDuration(room)})` : 'it cannot be renewed any further';
    const requested = typeof error.details?.['requested_expires_at'] === 'string' ? `; this one asked for ${error.details['requested_expires_at']}` : '';
    return new CellError(
      'CELL_TTL_CAP_EXCEEDED',
      `cell ${state.cell_id} may stay active until ${max} at most (the cell policy's ceiling: ${formatDuration(state.policy.active_ttl_max_ms)} from its activation at ${state.activated_at as string}); it runs until ${expires}, so ${allowance}${requested}`,
      { cause: error, details: { ...error.details, max_expires_at: max, active_expires_at: expires, max_extend_ms: Math.max(0, room) } },
    );
  }
  if (hasErrorCode(error, 'CELL_ACTIVE_TTL_EXPIRED')) {
    return new CellError(
      'CELL_ACTIVE_TTL_EXPIRED',
      `the active window of cell ${state.cell_id} ended at ${state.active_expires_at as string}: it can no longer be renewed; a sweep closes it (ttl_expired), then \`writ cell resurrect\` brings it back within its grace`,
      { cause: error, details: { active_expires_at: state.active_expires_at } },
    );
  }
  return error;
}

function preparingOf(data: Readonly<Record<string, unknown>>): CellView['preparing'] {
  const by = data['prepared_by'];
  const at = data['at'];
  return typeof by === 'string' && typeof at === 'string' ? { by, at } : null;
}
