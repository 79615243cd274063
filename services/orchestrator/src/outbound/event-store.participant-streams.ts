import type { EventEnvelope } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';
import type { ParticipantDelivery, ParticipantStreams } from '../application/last-will-beliefs.handler.js';

/** Participants' streams on the JetStream event store (`<prefix>.participant.<seed_id>`), chain and authors checked. */
export class EventStoreParticipantStreams implements ParticipantStreams {
  constructor(private readonly store: EventStore) {}

  async read(seedId: string): Promise<readonly EventEnvelope[]> {
    return (await this.store.readEntity('participant', seedId)).map((stored) => stored.event);
  }

  async recorded(delivery: ParticipantDelivery): Promise<EventEnvelope | undefined> {
    const entry = await this.store.entryAt(delivery.subject, delivery.streamSeq);
    return entry.kind === 'event' ? entry.event : undefined;
  }
}
