import { hasErrorCode } from '@writ/contracts';
import type { EventStore, LogEntry } from '@writ/eventstore';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { DeliveredMessage, EventLog } from '../../application/ports.js';
import { ProjectionError } from '../../application/projection-errors.js';
import type { RawStoredEvent } from '../../application/projected-event.js';

function logError(operation: string, error: unknown): ProjectionError {
  return new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `cannot ${operation} the event log${hasErrorCode(error) ? ` (${error.code})` : ''}; check NATS and the events stream`, {
    cause: error,
    details: { operation, ...(hasErrorCode(error) ? { cause_code: error.code } : {}) },
  });
}

/** A judged message of the log as the folds take it. */
function toRaw(entry: LogEntry): RawStoredEvent {
  return entry.kind === 'event'
    ? { streamSeq: entry.streamSeq, subject: entry.subject, payload: entry.event }
    : { streamSeq: entry.streamSeq, subject: entry.subject, payload: undefined, quarantined: entry.record };
}

/**
 * The event log through the event store: every message in stream order,
 * judged on its aggregate's chain as every reader judges it (events, and junk
 * with its quarantine record), and the stream's state.
 */
export class JetStreamEventLog implements EventLog {
  constructor(
    private readonly store: EventStore,
    private readonly jsm: JetStreamManager,
  ) {}

  async *replay(fromStreamSeq: number): AsyncGenerator<RawStoredEvent> {
    try {
      for await (const entry of this.store.replayLog(fromStreamSeq)) yield toRaw(entry);
    } catch (error) {
      throw logError('replay', error);
    }
  }

  async entryAt(subject: string, streamSeq: number): Promise<RawStoredEvent> {
    try {
      return toRaw(await this.store.entryAt(subject, streamSeq));
    } catch (error) {
      throw logError('read a message of', error);
    }
  }

  async entriesOf(run: readonly DeliveredMessage[]): Promise<RawStoredEvent[]> {
    try {
      return (await this.store.entriesOf(run)).map(toRaw);
    } catch (error) {
      throw logError('read messages of', error);
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
