import { hasErrorCode } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { EventLog } from '../../application/ports.js';
import { ProjectionError } from '../../application/projection-errors.js';
import type { RawStoredEvent } from '../../application/projected-event.js';

function logError(operation: string, error: unknown): ProjectionError {
  return new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `cannot ${operation} the event log${hasErrorCode(error) ? ` (${error.code})` : ''}; check NATS and the events stream`, {
    cause: error,
    details: { operation, ...(hasErrorCode(error) ? { cause_code: error.code } : {}) },
  });
}

/** The event log through the event store's replay (ordered, parsed envelopes) and the stream's state. */
export class JetStreamEventLog implements EventLog {
  constructor(
    private readonly store: EventStore,
    private readonly jsm: JetStreamManager,
  ) {}

  async *replay(fromStreamSeq: number): AsyncGenerator<RawStoredEvent> {
    try {
      for await (const stored of this.store.replay(fromStreamSeq)) {
        yield { streamSeq: stored.streamSeq, subject: stored.subject, payload: stored.event };
      }
    } catch (error) {
      throw logError('replay', error);
    }
  }

  async storedAt(streamSeq: number): Promise<Date | undefined> {
    try {
      const message = await this.jsm.streams.getMessage(this.store.config.stream, { seq: streamSeq });
      return message === null ? undefined : message.time;
    } catch (error) {
      throw logError('read a message of', error);
    }
  }

  async lastSeq(): Promise<number> {
    try {
      return (await this.jsm.streams.info(this.store.config.stream)).state.last_seq;
    } catch (error) {
      throw logError('read the state of', error);
    }
  }
}
