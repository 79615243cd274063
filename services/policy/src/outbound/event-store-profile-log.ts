import type { JetStreamManager } from '@nats-io/jetstream';
import { PolicyProfileRecord, type EventDraft } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';
import type { ProfileHead, ProfileLog } from '../application/ports.js';

export const PROFILE_APPLIED = 'policy.profile_applied';

/**
 * The profile log on the event store: `<events>.policy.<profile_id>`, read
 * and chain-verified per profile, appended with the store's guard.
 */
export class EventStoreProfileLog implements ProfileLog {
  constructor(
    private readonly store: EventStore,
    private readonly jsm: JetStreamManager,
  ) {}

  async head(profileId: string): Promise<ProfileHead> {
    const events = await this.store.readEntity('policy', profileId);
    let record: PolicyProfileRecord | null = null;
    for (const { event } of events) {
      if (event.event_type !== PROFILE_APPLIED) continue;
      const parsed = PolicyProfileRecord.safeParse(event.payload);
      if (parsed.success) record = parsed.data;
    }
    return { seq: events.at(-1)?.event.task_seq ?? 0, record };
  }

  async append(profileId: string, draft: EventDraft, expectedSeq: number): Promise<void> {
    await this.store.appendToEntity('policy', profileId, [draft], expectedSeq);
  }

  async latestOfAll(): Promise<ReadonlyMap<string, PolicyProfileRecord>> {
    const prefix = `${this.store.config.subjectPrefix}.policy.`;
    const info = await this.jsm.streams.info(this.store.config.stream, { subjects_filter: `${prefix}*` });
    const latest = new Map<string, PolicyProfileRecord>();
    for (const subject of Object.keys(info.state.subjects ?? {})) {
      const profileId = subject.slice(prefix.length);
      const { record } = await this.head(profileId);
      if (record !== null) latest.set(profileId, record);
    }
    return latest;
  }
}
