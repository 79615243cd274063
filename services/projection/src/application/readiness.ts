import { hasErrorCode } from '@writ/contracts';
import type { EventLog, ProjectionStore, ReadModel } from './ports.js';
import { ProjectionError } from './projection-errors.js';

/** What the process knows about its own wiring. */
export interface WiringProbe {
  natsConnected(): boolean;
  streamsEnsured(): boolean;
  /** Durable consumers bound by the bus server. */
  boundConsumers(): readonly string[];
}

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
}

/**
 * `/readyz`: NATS connected, streams ensured, the projector's consumer bound,
 * Postgres answering; and how far the views are behind the log, in events
 * and in time. Lag does not make the service unready (catching up is
 * normal); it is reported, also as the gauges `writ.projection.lag` and
 * `writ.projection.lag_age`. Nothing authorizes on it (Hermit 20.4).
 */
export class Readiness {
  constructor(
    private readonly deps: {
      readonly wiring: WiringProbe;
      readonly store: ProjectionStore;
      readonly log: EventLog;
      readonly model: ReadModel;
      readonly now?: () => Date;
    },
  ) {}

  async lag(): Promise<ProjectionLag> {
    const [last, checkpoint] = await Promise.all([this.deps.log.lastSeq(), this.deps.store.checkpoint()]);
    const behind = Math.max(0, last - checkpoint);
    let lagMs = 0;
    if (behind > 0) {
      const storedAt = await this.deps.log.storedAt(checkpoint + 1);
      const now = (this.deps.now ?? (() => new Date()))();
      lagMs = storedAt === undefined ? 0 : Math.max(0, now.getTime() - storedAt.getTime());
    }
    return { last_stream_seq: last, checkpoint, events_behind: behind, lag_ms: lagMs };
  }

  async check(): Promise<ReadyReport> {
    const { wiring } = this.deps;
    const problems: string[] = [];
    if (!wiring.natsConnected()) problems.push('NATS is not connected');
    if (!wiring.streamsEnsured()) problems.push('the event and bus streams are not ensured yet');
    const consumers = wiring.boundConsumers();
    if (consumers.length === 0) problems.push('the projector consumer is not bound yet');
    try {
      await this.deps.model.ping();
    } catch (error) {
      problems.push(`Postgres does not answer (${hasErrorCode(error) ? error.code : 'unknown'})`);
    }
    let lag: ProjectionLag | undefined;
    if (problems.length === 0) {
      try {
        lag = await this.lag();
      } catch (error) {
        problems.push(`the lag cannot be measured (${hasErrorCode(error) ? error.code : 'unknown'})`);
      }
    }
    if (problems.length > 0 || lag === undefined) {
      throw new ProjectionError('PROJECTION_NOT_READY', `not ready: ${problems.join('; ')}`, { details: { problems } });
    }
    return { status: 'ready', consumers, lag };
  }
}
