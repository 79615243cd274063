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
}

export interface ReadyReport {
  readonly status: 'ready';
  readonly consumers: readonly string[];
  readonly lag: ProjectionLag;
}

/**
 * `/readyz`: NATS connected, streams ensured, the projector's consumer bound,
 * Postgres answering; and how far the views are behind the log. Lag does not
 * make the service unready (catching up is normal); it is reported, also as
 * the gauge `writ.projection.lag`.
 */
export class Readiness {
  constructor(
    private readonly deps: { readonly wiring: WiringProbe; readonly store: ProjectionStore; readonly log: EventLog; readonly model: ReadModel },
  ) {}

  async lag(): Promise<ProjectionLag> {
    const [last, checkpoint] = await Promise.all([this.deps.log.lastSeq(), this.deps.store.checkpoint()]);
    return { last_stream_seq: last, checkpoint, events_behind: Math.max(0, last - checkpoint) };
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
