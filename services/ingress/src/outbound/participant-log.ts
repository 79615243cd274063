import type { EventDraft } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';
import type { ParticipantHistory, ParticipantLog } from '../application/participant-ports.js';

/** `writ.evt.participant.<seed_id>` over `@writ/eventstore` (hash-chained, guarded by the stream's last sequence). */
export class EventStoreParticipantLog implements ParticipantLog {
  constructor(private readonly store: EventStore) {}

  async read(seedId: string): Promise<ParticipantHistory> {
    if ((await this.store.headOfEntity('participant', seedId)).taskSeq === 0) return { events: [], seq: 0 };
    const stored = await this.store.readEntity('participant', seedId);
    return {
      events: stored.map(({ event }) => ({ type: event.event_type, data: event.payload })),
      seq: stored.at(-1)?.event.task_seq ?? 0,
    };
  }

  async append(seedId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly duplicate: boolean }> {
    const result = await this.store.appendToEntity('participant', seedId, drafts, expectedSeq);
    return { duplicate: result.events.every((event) => event.duplicate) };
  }
}
