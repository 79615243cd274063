import { hasErrorCode, type CloseCell, type ObserveWorkspace, type RunAction, type WorkspaceObserved } from '@writ/contracts';
import { cellHolder, dueTransitions } from '@writ/kernel';
import type { Logger } from '@writ/telemetry';
import { SPAWN_WAIT_MS, type CellView } from './cell-lifecycle.js';
import { ExecutorError } from './executor-errors.js';

/**
 * Several executors on several Docker hosts (issue 5): a task's cell lives on one host (its
 * container and CELL_HOME), recorded in the cell's events as `host_id` (the kernel's `cellHolder`).
 * Work for the task that reaches another executor is forwarded to the holder's own subject
 * (`<subject>.host.<host_id>`, README → Several hosts); `routeCell` decides, from the cell as the log
 * says it is now.
 *
 * | the cell | run / close-cell | observe |
 * |---|---|---|
 * | none (IDLE, INVITED), ARCHIVED, holder unknown (events naming no host) | here | here |
 * | held by this host | here | here |
 * | PREPARING on another host, prepared less than the spawn wait ago | forward | relay |
 * | PREPARING on another host for longer (its spawn died) | here: this host takes the spawn over | relay |
 * | ACTIVE on another host that beats | forward | relay |
 * | ACTIVE on another host past a heartbeat deadline | unavailable | relay |
 * | CHECKPOINTING on another host | forward | relay |
 * | DOWNED | here: the kernel's revival / substitute / abandoned close decide, whoever acts records itself as the holder | relay |
 * | CLOSED | here: nothing runs (EXECUTOR_CELL_CLOSED), a close is already done | relay (the graveyard's files) |
 */
export type CellRoute =
  | { readonly kind: 'here'; readonly reason: 'no-cell' | 'held-here' | 'holder-unknown' | 'recovery' | 'settled' | 'spawn-overdue' }
  | { readonly kind: 'forward'; readonly host_id: string }
  /** The holder stopped beating: `since` is the last heartbeat the log recorded for the seat that missed its deadline. */
  | { readonly kind: 'unavailable'; readonly host_id: string; readonly since: string };

export type RoutedWork = 'run' | 'close' | 'observe';

/** Where work on the task's cell goes (pure: the cell as folded now, this host, the adapter's clock). */
export function routeCell(view: Pick<CellView, 'state' | 'preparing'>, hostId: string, now: Date, work: RoutedWork): CellRoute {
  const state = view.state;
  const holder = cellHolder(state);
  if (holder === null) {
    const reason = state.status === 'IDLE' || state.status === 'INVITED' ? 'no-cell' : state.status === 'ARCHIVED' ? 'settled' : 'holder-unknown';
    return { kind: 'here', reason };
  }
  if (holder === hostId) return { kind: 'here', reason: 'held-here' };
  // An observation only reads the holder's files: asked there whatever the state (NATS says whether it answers).
  if (work === 'observe') return { kind: 'forward', host_id: holder };
  switch (state.status) {
    case 'DOWNED':
      return { kind: 'here', reason: 'recovery' };
    case 'CLOSED':
      return { kind: 'here', reason: 'settled' };
    case 'PREPARING': {
      const preparedAt = view.preparing === null ? Number.NaN : Date.parse(view.preparing.at);
      // The same wait prepareForAction gives another host's spawn before it takes it over.
      if (Number.isFinite(preparedAt) && now.getTime() - preparedAt >= SPAWN_WAIT_MS) return { kind: 'here', reason: 'spawn-overdue' };
      return { kind: 'forward', host_id: holder };
    }
    case 'ACTIVE': {
      const missed = dueTransitions(state, now.toISOString()).find((due) => due.kind === 'heartbeat_missed');
      if (missed === undefined) return { kind: 'forward', host_id: holder };
      const seat = missed.kind === 'heartbeat_missed' ? state.running.find((r) => r.participant_id === missed.participant_id) : undefined;
      return { kind: 'unavailable', host_id: holder, since: seat?.last_heartbeat_at ?? missed.due_at };
    }
    default:
      return { kind: 'forward', host_id: holder };
  }
}

/** The cells as the lifecycle reads and reserves them (application/cell-lifecycle.ts). */
export interface CellPlacement {
  view(cellId: string): Promise<CellView>;
  /** A task without a cell gets one prepared on this host (first append wins); the cell as it then is. */
  reserve(cellId: string, principalId: string): Promise<CellView>;
}

/** Publishes work to a host's own subject and waits until the stream has stored it (outbound/host-forwarder.ts). */
export interface CommandForwarder {
  forward(work: 'run' | 'close-cell', hostId: string, payload: RunAction | CloseCell, options: { readonly msgId: string; readonly hops: number }): Promise<void>;
}

/** Asks a host's own `<observe>.host.<host_id>` (request/reply). */
export interface ObserveRelay {
  observe(hostId: string, request: ObserveWorkspace): Promise<WorkspaceObserved>;
}

export interface CellRouterDeps {
  readonly cells: CellPlacement;
  readonly forwarder: CommandForwarder;
  readonly relay: ObserveRelay;
  readonly clock: () => Date;
  readonly logger?: Logger;
}

export interface CellRouterSettings {
  readonly hostId: string;
  /** Forwards one command may take (a holder that keeps moving); past it EXECUTOR_CELL_ROUTE_LOOP. */
  readonly maxHops: number;
}

/** Header counting the forwards a command has taken (0 or absent: it came from its publisher). */
export const FORWARD_HOPS_HEADER = 'Writ-Executor-Hops';
/** Default `maxHops`: a forward to the holder, and one more if it moved meanwhile, with room to spare. */
export const MAX_FORWARD_HOPS = 4;

/** `Writ-Executor-Hops` as a count (anything but a small whole number counts as 0). */
export function hopsOf(header: string | undefined): number {
  return header !== undefined && /^[0-9]{1,3}$/.test(header) ? Number(header) : 0;
}

export type RunPlacement = { readonly kind: 'here' } | { readonly kind: 'forwarded'; readonly host_id: string };

/**
 * Sends each piece of a task's work to the host holding its cell. A forward is published with
 * a message id of its own per hop (a redelivered original is stored once) and the original is
 * acknowledged by the caller only after this resolves, i.e. once the stream holds the copy:
 * nothing is lost, and nothing runs twice (the use is claimed through the log by whoever runs it).
 */
export class CellRouter {
  readonly #deps: CellRouterDeps;
  readonly #settings: CellRouterSettings;

  constructor(deps: CellRouterDeps, settings: CellRouterSettings) {
    this.#deps = deps;
    this.#settings = settings;
  }

  get hostId(): string {
    return this.#settings.hostId;
  }

  /**
   * A RunAction about to be claimed here (its grant verified, the kernel said claim): `here` (a new
   * task's cell is reserved on this host first), `forwarded` to the holder, or EXECUTOR_CELL_HOST_UNAVAILABLE
   * (thrown: nothing claimed, the bus retries with backoff, then dead-letters with that code).
   */
  async placeRun(command: RunAction, useId: string, hops: number): Promise<RunPlacement> {
    const view = await this.#deps.cells.reserve(command.task_id, command.action_request.proposed_by);
    const route = routeCell(view, this.#settings.hostId, this.#deps.clock(), 'run');
    if (route.kind === 'here') return { kind: 'here' };
    if (route.kind === 'unavailable') throw this.#unavailable(command.task_id, route, 'the action is not run here and not claimed; it is retried');
    await this.#forward('run', route.host_id, command, `fwd-${useId}-${route.host_id}-${hops + 1}`, hops, { task_id: command.task_id, grant_id: command.grant_id, use_id: useId });
    return { kind: 'forwarded', host_id: route.host_id };
  }

  /**
   * A close-cell: `here`, or `forwarded` to the holder, which takes the final checkpoint. A holder that
   * stopped beating cannot: the cell is closed here without one (the lifecycle notes why), never left open.
   */
  async placeClose(command: CloseCell, hops: number): Promise<RunPlacement> {
    const view = await this.#deps.cells.view(command.task_id);
    const route = routeCell(view, this.#settings.hostId, this.#deps.clock(), 'close');
    if (route.kind === 'here') return { kind: 'here' };
    if (route.kind === 'unavailable') {
      this.#deps.logger?.warn({ task_id: command.task_id, host_id: route.host_id, last_heartbeat_at: route.since, code: 'EXECUTOR_CELL_HOST_UNAVAILABLE' }, 'close-cell: the host holding the cell stopped beating; closed here without a final checkpoint');
      return { kind: 'here' };
    }
    await this.#forward('close-cell', route.host_id, command, `fwd-close-${command.task_id}-${command.reason}-${route.host_id}-${hops + 1}`, hops, { task_id: command.task_id });
    return { kind: 'forwarded', host_id: route.host_id };
  }

  /**
   * The state-witness observation: answered here (`local`) unless another host holds the cell's files,
   * then relayed to it. No answer from the holder (gone, or slower than the relay timeout) is
   * EXECUTOR_CELL_HOST_UNAVAILABLE, never this host's empty workspace; the holder's own
   * EXECUTOR_OBSERVE_UNSTABLE comes back as it is.
   */
  async observe(request: ObserveWorkspace, local: (request: ObserveWorkspace) => Promise<WorkspaceObserved>): Promise<WorkspaceObserved> {
    const view = await this.#deps.cells.view(request.task_id);
    const route = routeCell(view, this.#settings.hostId, this.#deps.clock(), 'observe');
    if (route.kind !== 'forward') return local(request);
    try {
      return await this.#deps.relay.observe(route.host_id, request);
    } catch (error) {
      if (hasErrorCode(error, 'EXECUTOR_OBSERVE_UNSTABLE')) throw new ExecutorError('EXECUTOR_OBSERVE_UNSTABLE', `the workspace of task ${request.task_id} kept changing on host ${route.host_id}; observe again later`, { cause: error });
      this.#deps.logger?.warn({ err: error, task_id: request.task_id, host_id: route.host_id, code: 'EXECUTOR_CELL_HOST_UNAVAILABLE' }, 'observation relayed to the host holding the cell got no answer');
      throw new ExecutorError('EXECUTOR_CELL_HOST_UNAVAILABLE', `the cell of task ${request.task_id} is on host ${route.host_id}, which did not answer the observation; observe again later`, {
        cause: error,
        details: { task_id: request.task_id, host_id: route.host_id },
      });
    }
  }

  async #forward(work: 'run' | 'close-cell', hostId: string, payload: RunAction | CloseCell, msgId: string, hops: number, context: Record<string, unknown>): Promise<void> {
    if (hops >= this.#settings.maxHops) {
      throw new ExecutorError('EXECUTOR_CELL_ROUTE_LOOP', `${work} of task ${payload.task_id} was forwarded ${hops} times and its cell is now on host ${hostId}; it is not forwarded again`, {
        details: { ...context, host_id: hostId, hops },
      });
    }
    await this.#deps.forwarder.forward(work, hostId, payload, { msgId, hops: hops + 1 });
    this.#deps.logger?.info({ ...context, host_id: hostId, hops: hops + 1 }, `${work} forwarded to the host holding the cell`);
  }

  #unavailable(taskId: string, route: Extract<CellRoute, { kind: 'unavailable' }>, what: string): ExecutorError {
    this.#deps.logger?.warn({ task_id: taskId, host_id: route.host_id, last_heartbeat_at: route.since, code: 'EXECUTOR_CELL_HOST_UNAVAILABLE' }, 'the host holding the cell stopped beating; its work waits');
    return new ExecutorError(
      'EXECUTOR_CELL_HOST_UNAVAILABLE',
      `the cell of task ${taskId} is held by host ${route.host_id}, which has not beaten since ${route.since}: ${what} (until that host beats again, or a sweep marks the cell DOWNED and the kernel's recovery applies)`,
      { details: { task_id: taskId, host_id: route.host_id, last_heartbeat_at: route.since } },
    );
  }
}
