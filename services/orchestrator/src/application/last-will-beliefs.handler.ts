import { ParticipantCallRecorded, ParticipantRetired, hasErrorCode, type EventDraft, type EventEnvelope, type LastWill } from '@writ/contracts';
import { canonicalJson } from '@writ/crypto';
import {
  beliefDecider,
  evolveParticipant,
  findBelief,
  initialParticipantState,
  lastWillArtifactId,
  lastWillBeliefs,
  type BeliefEvent,
  type ParticipantState,
} from '@writ/kernel';
import { decision, handleCommand } from '@writ/runtime';
import { redactSecrets, type Logger } from '@writ/telemetry';
import { eventIdFor } from './ids.js';
import { foldBeliefs } from './knowledge-request.handler.js';
import { OrchestratorError } from './orchestrator.errors.js';
import type { Clock, ContextPackStore, TaskLog } from './ports.js';
import { taskCommandStream } from './task-command-stream.js';
import { TaskView } from './task-view.js';

/** Participants' streams as the event store reads them: chain verified, every event's author checked (ingress, policy), the rest quarantined. */
export interface ParticipantStreams {
  read(seedId: string): Promise<readonly EventEnvelope[]>;
  /** What the log holds at a consumer's delivery (`subject`, `streamSeq`): the chain's event there, or undefined when the message is quarantined (junk, forged, unproven author). */
  recorded(delivery: ParticipantDelivery): Promise<EventEnvelope | undefined>;
}

/** Where a consumer found a participant message; its bytes are never trusted, only the log's judgment of them. */
export interface ParticipantDelivery {
  readonly subject: string;
  readonly streamSeq: number;
}

export interface LastWillBeliefsDeps {
  readonly log: TaskLog;
  readonly participants: ParticipantStreams;
  /** The content-addressed artifact bucket: each Last Will is stored there before the beliefs that cite it. */
  readonly artifacts: ContextPackStore;
  readonly clock: Clock;
  readonly actorId: string;
  readonly maxConflicts?: number;
  readonly logger?: Logger;
}

/** What one delivered participant event landed: per task, the beliefs appended (none when the log held them, or the task was not the line's). */
export interface LastWillOutcome {
  readonly seed_id: string;
  readonly trigger: string;
  readonly landed: ReadonlyArray<{ readonly task_id: string; readonly beliefs: readonly string[]; readonly refused?: string }>;
}

interface VerifiedWill {
  readonly seedId: string;
  readonly will: LastWill;
  readonly hash: string;
}

const participantOf = (events: readonly EventEnvelope[]): ParticipantState =>
  events.reduce((state, event) => evolveParticipant(state, { type: event.event_type, data: event.payload }), initialParticipantState());

/** The verified Last Will on a participant's stream (its `participant.retired`), when it retired with the hash named. */
function willOf(seedId: string, events: readonly EventEnvelope[], hash?: string): VerifiedWill | undefined {
  const state = participantOf(events);
  if (state.status !== 'retired' || state.last_will === null || (hash !== undefined && state.last_will.last_will_hash !== hash)) return undefined;
  const retired = events.find((event) => event.event_type === 'participant.retired' && event.payload['last_will_hash'] === state.last_will?.last_will_hash);
  const parsed = ParticipantRetired.safeParse(retired?.payload);
  return parsed.success ? { seedId, will: parsed.data.last_will, hash: parsed.data.last_will_hash } : undefined;
}

/**
 * Last Wills land as beliefs (seed 002, issue 17). The orchestrator owns task
 * state, so it, not ingress, asserts them (`belief.*`: the orchestrator alone),
 * on the Last Will's recorded event and never on a copy: a delivered
 * participant event is only a pointer; the participant's stream is read
 * through the event store, which checks each event's seal against the
 * authorship table (`participant.*`: ingress, policy), so a forged
 * `participant.retired` or `participant.call_recorded` is quarantined there and
 * lands nothing.
 *
 * - `participant.retired`: the will lands on every task the participant acted
 *   in (its `participant.call_recorded`, appended by policy) and owns.
 * - `participant.call_recorded` of a reconstituted participant: its prior's
 *   verified Last Will (the one its spawn named by hash) lands on the task it
 *   acts in, so its next attempt's context pack carries them.
 *
 * The kernel maps each delta's epistemic type to a trust tier and refuses a
 * task not of the participant's line (KNOWLEDGE_LAST_WILL_NOT_OF_TASK, logged,
 * nothing appended). The Last Will is stored in the artifact bucket first
 * (content-addressed: a retry stores nothing new), and every belief cites it.
 * Idempotent: belief ids come from the will's hash and the delta's index, and
 * a belief the task holds is not asserted again.
 */
export class LastWillBeliefsHandler {
  constructor(private readonly deps: LastWillBeliefsDeps) {}

  async handle(delivery: ParticipantDelivery): Promise<LastWillOutcome> {
    const recorded = await this.deps.participants.recorded(delivery);
    if (recorded === undefined) {
      this.deps.logger?.warn({ subject: delivery.subject, stream_seq: delivery.streamSeq }, 'a participant message the log does not vouch for lands nothing');
      return { seed_id: delivery.subject.slice(delivery.subject.lastIndexOf('.') + 1), trigger: 'quarantined', landed: [] };
    }
    const seedId = recorded.entity_id;
    const none: LastWillOutcome = { seed_id: seedId, trigger: recorded.event_type, landed: [] };
    if (recorded.entity_type !== 'participant' || (recorded.event_type !== 'participant.retired' && recorded.event_type !== 'participant.call_recorded')) return none;
    const stream = await this.deps.participants.read(seedId);
    const prefix = stream.filter((event) => event.task_seq <= recorded.task_seq);
    if (recorded.event_type === 'participant.retired') {
      const will = willOf(seedId, prefix);
      if (will === undefined) return none;
      const state = participantOf(prefix);
      const reconstitutedFrom = state.status === 'none' ? null : (state.reconstituted_from?.seed_id ?? null);
      const tasks = [...new Set(prefix.flatMap((event) => (event.event_type === 'participant.call_recorded' ? [String(event.payload['task_id'])] : [])))];
      const landed = [];
      for (const taskId of tasks) landed.push(await this.#land(taskId, will, { seed_id: seedId, reconstituted_from: reconstitutedFrom }, recorded.event_id));
      return { ...none, landed };
    }
    const call = ParticipantCallRecorded.safeParse(recorded.payload);
    const state = participantOf(prefix);
    if (!call.success || state.status === 'none' || state.reconstituted_from === null) return none;
    const prior = state.reconstituted_from;
    const will = willOf(prior.seed_id, await this.deps.participants.read(prior.seed_id), prior.last_will_hash);
    if (will === undefined) return none;
    return { ...none, landed: [await this.#land(call.data.task_id, will, { seed_id: seedId, reconstituted_from: prior.seed_id }, recorded.event_id)] };
  }

  async #land(taskId: string, source: VerifiedWill, actor: { seed_id: string; reconstituted_from: string | null }, causationId: string) {
    // Secret-looking text never reaches a belief (invariant 6); the stored Last Will is the participant's document as verified.
    const will = redactSecrets(source.will);
    const stored = await this.deps.artifacts.put(new TextEncoder().encode(canonicalJson(source.will)));
    const evidence = lastWillArtifactId(stored.sha256);
    try {
      return await handleCommand({
        stream: taskCommandStream(this.deps.log, taskId),
        maxRounds: this.deps.maxConflicts,
        exhausted: () => new OrchestratorError('ORCHESTRATOR_UNAVAILABLE', `task ${taskId} kept changing while the Last Will of ${source.seedId} landed; retried`),
        decide: ({ events }) => {
          const task = TaskView.fold(taskId, events).task;
          if (task.status === 'initial') return decision.done({ task_id: taskId, beliefs: [], refused: 'ORCHESTRATOR_TASK_UNKNOWN' });
          const { asserter, beliefs } = lastWillBeliefs({
            seed_id: source.seedId,
            last_will: will,
            last_will_hash: source.hash,
            evidence_artifact_id: evidence,
            task: { task_id: taskId, owner_principal_id: task.owner_principal_id },
            actor,
          });
          const now = this.deps.clock().toISOString();
          let state = foldBeliefs(events);
          const decided: { event: BeliefEvent; index: number }[] = [];
          for (const [index, belief] of beliefs.entries()) {
            if (findBelief(state, belief.belief_id) !== undefined) continue;
            for (const event of beliefDecider.decide({ type: 'assert-belief', data: { belief, asserted_by: asserter }, metadata: { now } }, state)) {
              decided.push({ event, index });
              state = beliefDecider.evolve(state, event);
            }
          }
          const ids = decided.map(({ event }) => (event.type === 'belief.asserted' ? event.data.belief.belief_id : '')).filter((id) => id !== '');
          if (decided.length === 0) return decision.done({ task_id: taskId, beliefs: ids });
          const drafts = decided.map(({ event, index }) => this.#draft(taskId, event, `last-will:${source.hash}:${index}`, now, causationId));
          return decision.append(drafts, { task_id: taskId, beliefs: ids });
        },
      });
    } catch (error) {
      if (!hasErrorCode(error, 'KNOWLEDGE_LAST_WILL_NOT_OF_TASK')) throw error;
      this.deps.logger?.warn({ seed_id: source.seedId, task_id: taskId, actor: actor.seed_id, code: error.code }, 'a Last Will does not land on a task not of its participant');
      return { task_id: taskId, beliefs: [], refused: error.code };
    }
  }

  #draft(taskId: string, event: BeliefEvent, key: string, now: string, causationId: string): EventDraft {
    return {
      event_id: eventIdFor(taskId, key),
      schema_version: 1,
      event_type: event.type,
      entity_type: 'task',
      entity_id: taskId,
      occurred_at: now,
      actor_type: 'service',
      actor_id: this.deps.actorId,
      payload: event.data as unknown as Record<string, unknown>,
      causation_id: causationId,
      correlation_id: taskId,
      idempotency_key: key,
    };
  }
}

