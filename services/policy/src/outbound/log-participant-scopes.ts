import { DeliverPolicy, jetstream, type ConsumerMessages } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { ParticipantCallRecorded, type EventDraft, type EventEnvelope } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';
import { evolveParticipant, initialParticipantState, participantScope, type ParticipantScope, type ParticipantState } from '@writ/kernel';
import type { Logger } from '@writ/telemetry';
import type { ParticipantScopes, ParticipantSnapshot } from '../application/ports.js';

const MAX_CACHED = 10_000;

/** One participant stream folded up to `seq` (whose event hashed to `hash`). */
interface Folded {
  readonly seq: number;
  readonly hash: string | null;
  readonly state: ParticipantState;
  readonly callKeys: ReadonlySet<string>;
  /** The scope of the manifest in force, prepared once per manifest hash. */
  readonly scope: { readonly manifestHash: string; readonly scope: ParticipantScope } | null;
}

const EMPTY: Folded = { seq: 0, hash: null, state: initialParticipantState(), callKeys: new Set(), scope: null };

/** Folds one event of the stream onto `folded` (the next in sequence). */
function foldEvent(folded: Folded, event: Pick<EventEnvelope, 'event_type' | 'payload' | 'task_seq' | 'hash'>): Folded {
  const state = evolveParticipant(folded.state, { type: event.event_type, data: event.payload });
  let callKeys = folded.callKeys;
  if (event.event_type === 'participant.call_recorded' && state.status !== 'none' && folded.state.status !== 'none' && state.calls > folded.state.calls) {
    const call = ParticipantCallRecorded.safeParse(event.payload);
    if (call.success) callKeys = new Set([...callKeys, `${call.data.attempt_id}:${call.data.policy_entry}`]);
  }
  let scope = folded.scope;
  if (state.status !== 'none' && scope?.manifestHash !== state.manifest_hash) scope = { manifestHash: state.manifest_hash, scope: participantScope(state.manifest) };
  return { seq: event.task_seq, hash: event.hash, state, callKeys, scope };
}

function snapshotOf(folded: Folded): ParticipantSnapshot | undefined {
  if (folded.state.status === 'none' || folded.scope === null) return undefined;
  return { state: folded.state, scope: folded.scope.scope, seq: folded.seq, callKeys: folded.callKeys };
}

export interface ParticipantScopesOptions {
  /** The event log's stream and subject prefix (`<prefix>.participant.<seed_id>`). */
  readonly stream: string;
  readonly subjectPrefix: string;
  readonly logger?: Logger;
}

/**
 * Participants' manifest scopes, folded from the log and never from a
 * projection (policy authorizes with them). A follower on
 * `<prefix>.participant.>` keeps every stream folded in memory as its events
 * arrive, so an evaluation does not re-read a stream; each use still reads
 * the stream's head (one direct get) and refolds from the log when the
 * follower is behind or holds another chain, so a participant paused or
 * retired a moment ago is judged as such. Call records are appended guarded
 * by the sequence the evaluation folded.
 */
export class LogParticipantScopes implements ParticipantScopes {
  readonly #folded = new Map<string, Folded>();
  #messages: ConsumerMessages | undefined;
  #loop: Promise<void> | undefined;

  private constructor(private readonly store: EventStore) {}

  /** Starts the follower (from the first participant event in the log) and returns at once: a use never waits on it. */
  static async start(nc: NatsConnection, store: EventStore, options: ParticipantScopesOptions): Promise<LogParticipantScopes> {
    const scopes = new LogParticipantScopes(store);
    const consumer = await jetstream(nc).consumers.get(options.stream, { filter_subjects: `${options.subjectPrefix}.participant.>`, deliver_policy: DeliverPolicy.All });
    const messages = await consumer.consume();
    scopes.#messages = messages;
    scopes.#loop = (async () => {
      for await (const message of messages) {
        try {
          scopes.#follow(message.json<EventEnvelope>());
        } catch (error) {
          // Not an envelope: the event store's chain checks surface it when the stream is read; the follower skips it.
          options.logger?.warn({ err: error, subject: message.subject }, 'participant follower skipped a message');
        }
      }
    })();
    return scopes;
  }

  async current(seedId: string): Promise<ParticipantSnapshot | undefined> {
    const head = await this.store.headOfEntity('participant', seedId);
    if (head.taskSeq === 0) return undefined;
    const cached = this.#folded.get(seedId);
    if (cached !== undefined && cached.seq === head.taskSeq && cached.hash === head.hash) return snapshotOf(cached);
    let folded = EMPTY;
    for (const { event } of await this.store.readEntity('participant', seedId)) folded = foldEvent(folded, event);
    this.#remember(seedId, folded);
    return snapshotOf(folded);
  }

  async append(seedId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<void> {
    await this.store.appendToEntity('participant', seedId, drafts, expectedSeq);
  }

  /** The last sequence of the seed's stream held in memory (0: none): what the follower or the last use folded. */
  heldSeq(seedId: string): number {
    return this.#folded.get(seedId)?.seq ?? 0;
  }

  /** Stops following (the folded streams stay for in-flight evaluations). */
  async stop(): Promise<void> {
    await this.#messages?.close();
    await this.#loop;
  }

  /** One event from the follower: folded onto its stream when it is the next; a gap drops the stream (the next use refolds it). */
  #follow(event: EventEnvelope): void {
    if (event.entity_type !== 'participant') return;
    const seedId = event.entity_id;
    const cached = this.#folded.get(seedId) ?? (event.task_seq === 1 ? EMPTY : undefined);
    if (cached === undefined || event.task_seq <= cached.seq) return;
    if (event.task_seq !== cached.seq + 1 || (cached.seq > 0 && event.prev_event_hash !== cached.hash)) {
      this.#folded.delete(seedId);
      return;
    }
    this.#remember(seedId, foldEvent(cached, event));
  }

  #remember(seedId: string, folded: Folded): void {
    if (!this.#folded.has(seedId) && this.#folded.size >= MAX_CACHED) this.#folded.clear();
    this.#folded.set(seedId, folded);
  }
}
