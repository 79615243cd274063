import { hasErrorCode, type EventDraft } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';
import { TlogError } from '../application/tlog-errors.js';
import type { StoredTlogEvent, TlogAppendResult, TlogEventLog } from '../application/tlog-ports.js';

const ENTITY = 'transparency_log';

/** The transparency log's stream `<prefix>.transparency_log.<log_id>` in the event log, through the event store (chain verified on read, guarded appends). */
export class EventStoreTlogLog implements TlogEventLog {
  constructor(
    private readonly store: EventStore,
    private readonly logId: string,
  ) {}

  async readAll(): Promise<StoredTlogEvent[]> {
    try {
      return (await this.store.readEntity(ENTITY, this.logId)).map(({ streamSeq, event }) => ({ streamSeq, event }));
    } catch (error) {
      throw chainBroken(error, this.logId);
    }
  }

  async append(draft: EventDraft, expectedSeq: number): Promise<TlogAppendResult> {
    const result = await this.store.appendToEntity(ENTITY, this.logId, [draft], expectedSeq);
    const [appended] = result.events;
    if (appended === undefined) throw new TlogError('TLOG_UNAVAILABLE', `the event log reported no event for an append to log ${this.logId}`);
    return { taskSeq: appended.taskSeq, streamSeq: appended.streamSeq, hash: appended.hash, duplicate: appended.duplicate };
  }

  async headSeq(): Promise<number> {
    try {
      return (await this.store.headOfEntity(ENTITY, this.logId)).taskSeq;
    } catch (error) {
      throw chainBroken(error, this.logId);
    }
  }
}

/** The event store's EVENTSTORE_CHAIN_BROKEN as the log's own code; anything else unchanged. */
function chainBroken(error: unknown, logId: string): unknown {
  if (!hasErrorCode(error, 'EVENTSTORE_CHAIN_BROKEN')) return error;
  return new TlogError('TLOG_CHAIN_BROKEN', `the event chain of transparency log ${logId} does not verify: ${error.message}`, { cause: error, details: { log_id: logId } });
}
