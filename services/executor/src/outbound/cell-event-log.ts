import type { JetStreamManager } from '@nats-io/jetstream';
import type { EventDraft, EventEnvelope } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';
import type { CellLog } from '../application/ports.js';

/** The cell streams of the event store (`<prefix>.cell.<cell_id>`), read chain-verified and appended with the subject's guard. */
export class EventStoreCellLog implements CellLog {
  readonly #store: EventStore;
  readonly #jsm: JetStreamManager;

  constructor(store: EventStore, jsm: JetStreamManager) {
    this.#store = store;
    this.#jsm = jsm;
  }

  async read(cellId: string): Promise<readonly EventEnvelope[]> {
    return (await this.#store.readEntity('cell', cellId)).map((stored) => stored.event);
  }

  async head(cellId: string): Promise<number> {
    return (await this.#store.headOfEntity('cell', cellId)).taskSeq;
  }

  async append(cellId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ head: number; duplicate: boolean }> {
    const result = await this.#store.appendToEntity('cell', cellId, drafts, expectedSeq);
    return { head: result.taskSeq, duplicate: result.events[0]?.duplicate ?? false };
  }

  /** Every cell subject the stream holds (the server lists them per subject filter). */
  async list(): Promise<readonly string[]> {
    const prefix = `${this.#store.config.subjectPrefix}.cell.`;
    const info = await this.#jsm.streams.info(this.#store.config.stream, { subjects_filter: `${prefix}*` });
    return Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(prefix.length));
  }
}
