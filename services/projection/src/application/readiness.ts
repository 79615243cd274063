import { hasErrorCode, type QuarantineCounts } from '@writ/contracts';
import { assessConsumer, type ConsumerProgress } from '@writ/runtime';
import type { EventLog, ProjectionStore, ReadModel } from './ports.js';
import { ProjectionError } from './projection-errors.js';

/** What the process knows about its own wiring. */
export interface WiringProbe {
  natsConnected(): boolean;
  streamsEnsured(): boolean;
  /** Durable consumers bound by the bus server. */
  boundConsumers(): readonly string[];
  /** The process's durables that are stalled on the server (work waiting, ack floor still), described. */
  stalledConsumers?(): readonly string[];
}

/** Default bound of a stall: the views behind the log with the checkpoint still for this long. */
export const PROJECTOR_STALL_MS = 120_000;

export interface ProjectionLag {
  /** The log's last stream sequence. */
  readonly last_stream_seq: number;
  /** The last stream sequence folded into the views. */
  readonly checkpoint: number;
  readonly events_behind: number;
  /** How long the oldest event not yet folded (checkpoint + 1) has been in the log: now − its stream timestamp; 0 when caught up. */
  readonly lag_ms: number;
}

export interface ReadyReport {
  readonly status: 'ready';
  readonly consumers: readonly string[];
  readonly lag: ProjectionLag;
  /** The messages of the log the views passed over as junk (invariant 10), by reason. */
  readonly quarantined: QuarantineCounts;
}

/**
 * `/readyz`: NATS connected, streams ensured, the projector's consumer bound,
 * Postgres answering, nothing stalled; and how far the views are behind the
 * log, in events and in time, and what they passed over as junk. Lag does
 * not make the service unready (catching up is normal); it is reported, also
 * as the gauges `writ_projection_lag_events` and `writ_projection_lag_seconds`. A stall
 * does: the views behind the log with the checkpoint still for
 * `stallAfterMs` (every later message failing on one, say), or the consumer
 * stalled on the server. Nothing authorizes on it (Hermit 20.4).
 */
export class Readiness {
  constructor(
    private readonly deps: {
      readonly wiring: WiringProbe;
      readonly store: ProjectionStore;
      readonly log: EventLog;
      readonly model: ReadModel;
      readonly now?: () => Date;
      /** Behind with the checkpoint still for this long is a stall (default `PROJECTOR_STALL_MS`). */
      readonly stallAfterMs?: number;
    },
  ) {}

  /** When the checkpoint last moved (or the views were caught up), as last measured. */
  #progress: ConsumerProgress | undefined;
  #stuckMs = 0;

  /** The lag; every measurement also tells whether the views stalled (the checkpoint still while the log is ahead). */
  async lag(): Promise<ProjectionLag> {
    const [last, checkpoint] = await Promise.all([this.deps.log.lastSeq(), this.deps.store.checkpoint()]);
    const behind = Math.max(0, last - checkpoint);
    const now = (this.deps.now ?? (() => new Date()))();
    let lagMs = 0;
    if (behind > 0) {
      const storedAt = await this.deps.log.storedAt(checkpoint + 1);
      lagMs = storedAt === undefined ? 0 : Math.max(0, now.getTime() - storedAt.getTime());
    }
    const assessment = assessConsumer(this.#progress, { pending: behind, ackPending: 0, ackFloor: checkpoint }, now.getTime(), this.deps.stallAfterMs ?? PROJECTOR_STALL_MS);
    this.#progress = assessment.progress;
    this.#stuckMs = assessment.stalled ? assessment.stuckMs : 0;
    return { last_stream_seq: last, checkpoint, events_behind: behind, lag_ms: lagMs };
  }

  async check(): Promise<ReadyReport> {
    const { wiring } = this.deps;
    const problems: string[] = [];
    if (!wiring.natsConnected()) problems.push('NATS is not connected');
    if (!wiring.streamsEnsured()) problems.push('the event and bus streams are not ensured yet');
    const consumers = wiring.boundConsumers();
    if (consumers.length === 0) problems.push('the projector consumer is not bound yet (at start the views first catch up with the log)');
    try {
      await this.deps.model.ping();
    } catch (error) {
      problems.push(`Postgres does not answer (${hasErrorCode(error) ? error.code : 'unknown'})`);
    }
    for (const stalled of wiring.stalledConsumers?.() ?? []) problems.push(`consumer stalled: ${stalled}`);
    let lag: ProjectionLag | undefined;
    let quarantined: QuarantineCounts | undefined;
    if (problems.length === 0) {
      try {
        lag = await this.lag();
        const { total, by_reason } = await this.deps.store.quarantined(0);
        quarantined = { total, by_reason };
      } catch (error) {
        problems.push(`the lag cannot be measured (${hasErrorCode(error) ? error.code : 'unknown'})`);
      }
      if (lag !== undefined && this.#stuckMs > 0) {
        problems.push(`the views are stalled: stuck after stream seq ${lag.checkpoint} for ${Math.round(this.#stuckMs / 1000)} s while ${lag.events_behind} message(s) wait`);
      }
    }
    if (problems.length > 0 || lag === undefined || quarantined === undefined) {
      throw new ProjectionError('PROJECTION_NOT_READY', `not ready: ${problems.join('; ')}`, { details: { problems } });
    }
    return { status: 'ready', consumers, lag, quarantined };
  }
}
