import { ContractError, hasErrorCode } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { applyEvent, type ApplyOutcome } from './apply-event.js';
import type { EventLog, ProjectionStore, UpdatePublisher } from './ports.js';
import { ProjectionError } from './projection-errors.js';
import { toProjectedEvent, type ProjectedEvent, type RawStoredEvent } from './projected-event.js';

export interface ProjectorDeps {
  readonly store: ProjectionStore;
  readonly log: EventLog;
  readonly publisher: UpdatePublisher;
  /** Subject prefix of the log (`<root>.evt`). */
  readonly eventsPrefix: string;
  readonly logger: Logger;
}

export type ProjectorOutcome = 'applied' | 'skipped';

type Parsed = { readonly ok: true; readonly event: ProjectedEvent } | { readonly ok: false; readonly error: ContractError };

/**
 * Folds the log into the read models, one event at a time, each in one
 * transaction with the checkpoint (`applyEvent`), then publishes the changed
 * rows. Handles whatever the durable consumer delivers:
 * - at or below the checkpoint → skipped (a redelivery, or a second instance won);
 * - above checkpoint + 1 → the events in between are read from the log and
 *   applied first (a failed event retried later, a dead-lettered one, a
 *   restored database), so the checkpoint only ever moves by one, in log order;
 * - not an envelope → the checkpoint moves past it and it is dead-lettered
 *   (`CONTRACT_INVALID`), so one bad message never stalls the views.
 */
export class Projector {
  constructor(private readonly deps: ProjectorDeps) {}

  async handle(raw: RawStoredEvent): Promise<ProjectorOutcome> {
    const parsed = this.parse(raw);
    let outcome = await this.step(raw.streamSeq, parsed);
    if (outcome.kind === 'gap') {
      await this.catchUp(raw.streamSeq - 1);
      outcome = await this.step(raw.streamSeq, parsed);
      if (outcome.kind === 'gap') {
        throw new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `the log did not yield the events before stream seq ${raw.streamSeq}; retrying`, {
          details: { streamSeq: raw.streamSeq, checkpoint: outcome.checkpoint },
        });
      }
    }
    if (outcome.kind === 'applied') this.deps.publisher.publish(outcome.changes);
    if (!parsed.ok) throw parsed.error;
    return outcome.kind;
  }

  /**
   * Applies what the log holds after the checkpoint, up to `untilSeq`
   * (default: the end of the log when called). Returns how many events it applied.
   */
  async catchUp(untilSeq?: number): Promise<number> {
    const checkpoint = await this.deps.store.checkpoint();
    if (untilSeq !== undefined && checkpoint >= untilSeq) return 0;
    let applied = 0;
    for await (const raw of this.deps.log.replay(checkpoint + 1)) {
      if (untilSeq !== undefined && raw.streamSeq > untilSeq) break;
      const outcome = await applyEvent(this.deps.store, raw.streamSeq, toProjectedEvent(raw, this.deps.eventsPrefix));
      if (outcome.kind === 'gap') {
        throw new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `the replay skipped events before stream seq ${raw.streamSeq}`, {
          details: { streamSeq: raw.streamSeq, checkpoint: outcome.checkpoint },
        });
      }
      if (outcome.kind === 'applied') {
        applied++;
        this.deps.publisher.publish(outcome.changes);
      }
    }
    if (applied > 0) this.deps.logger.info({ applied, from: checkpoint + 1 }, 'projection caught up from the log');
    return applied;
  }

  private parse(raw: RawStoredEvent): Parsed {
    try {
      return { ok: true, event: toProjectedEvent(raw, this.deps.eventsPrefix) };
    } catch (error) {
      if (hasErrorCode(error, 'CONTRACT_INVALID')) {
        this.deps.logger.warn({ streamSeq: raw.streamSeq, subject: raw.subject, code: error.code }, 'not an event envelope: skipped and dead-lettered');
        return { ok: false, error: error as ContractError };
      }
      throw error;
    }
  }

  private step(streamSeq: number, parsed: Parsed): Promise<ApplyOutcome> {
    return applyEvent(this.deps.store, streamSeq, parsed.ok ? parsed.event : undefined);
  }
}
