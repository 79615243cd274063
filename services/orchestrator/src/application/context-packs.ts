import { hasErrorCode, type ContextPackRefusalCode, type EventDraft, type EventEnvelope } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { compileContextPack, contextInputsFromLog, contextPackDecider, foldContextPack, type ContextPackCommand, type ContextPackEvent } from '@writ/kernel';
import { eventIdFor } from './ids.js';
import { OrchestratorError } from './orchestrator.errors.js';
import type { ContextPackStore } from './ports.js';

const CODEC = { canonicalJson, sha256Hex } as const;
const REFUSALS: readonly ContextPackRefusalCode[] = ['KNOWLEDGE_CONTEXT_BUDGET_TOO_SMALL', 'KNOWLEDGE_CONTEXT_INPUT_INVALID'];

export interface ContextPackContext {
  readonly taskId: string;
  /** RFC 3339 clock reading at the adapter edge: the event's `at` only, never the pack's `as_of` (that comes from the log). */
  readonly now: string;
  readonly actorId: string;
  /** The event being handled: the causation of what is appended. */
  readonly causationId: string;
}

/** What one handling adds: the pack events to append, and a store failure to report once the rest is done. */
export interface ContextPackPlan {
  readonly drafts: readonly EventDraft[];
  readonly failure?: OrchestratorError;
}

/** Idempotency key (and event id source) of an attempt's pack event: one per attempt, whoever records it. */
export const contextPackKey = (attemptId: string) => `context-pack:${attemptId}`;

/**
 * Attempts whose request is in the log and whose pack is not (compiled or refused), in log order:
 * one pass over the task (this runs on every event handled), the decider's fold only for those.
 */
function pendingAttempts(events: readonly EventEnvelope[]): string[] {
  const recorded = new Set<string>();
  const submitted: string[] = [];
  for (const event of events) {
    if (event.event_type.startsWith('context.')) {
      const attemptId = event.payload['attempt_id'];
      if (typeof attemptId === 'string') recorded.add(attemptId);
    } else if (event.event_type === 'attempt.awaiting_policy' && event.attempt_id !== undefined && !submitted.includes(event.attempt_id)) {
      submitted.push(event.attempt_id);
    }
  }
  // A record counts only if the kernel folds it (a malformed one is an anomaly, not a pack).
  return submitted.filter((attemptId) => !recorded.has(attemptId) || foldContextPack(events, attemptId).status === 'initial');
}

/**
 * Compiles the context pack of every attempt of the task that has none yet (Hermit 15.6),
 * from the task's log alone (`contextInputsFromLog`: the events through the attempt's
 * `attempt.awaiting_policy`, `as_of` that event's time), so a redelivery, another
 * orchestrator instance or `writ context --verify` compiles the same bytes. Store first,
 * then record: the bytes go to the content-addressed store under their SHA-256, and only
 * then is `context.pack_compiled` drafted (with a key per attempt, appended under the
 * handler's guard). A crash between the two leaves an orphan blob at most; the retry
 * stores the same bytes again (a no-op) and appends once. A pack the kernel refuses to
 * compile is recorded as `context.pack_refused` with its code, so the task moves on.
 */
export async function planContextPacks(events: readonly EventEnvelope[], store: ContextPackStore, context: ContextPackContext): Promise<ContextPackPlan> {
  const drafts: EventDraft[] = [];
  for (const attemptId of pendingAttempts(events)) {
    const inputs = contextInputsFromLog(events, attemptId);
    if (inputs === undefined) continue;
    let command: ContextPackCommand;
    const base = { attempt_id: attemptId, through_task_seq: inputs.through_task_seq };
    try {
      const compiled = compileContextPack(inputs.input, CODEC);
      let stored;
      try {
        stored = await store.put(new TextEncoder().encode(compiled.bytes));
      } catch (cause) {
        // Reported after the rest of the handling is appended and published: the governed path never waits on the bucket.
        const failure = new OrchestratorError('ORCHESTRATOR_CONTEXT_PACK_STORE_FAILED', `the context pack of attempt ${attemptId} could not be stored; the task event is retried`, {
          cause,
          details: { task_id: context.taskId, attempt_id: attemptId },
        });
        return { drafts, failure };
      }
      if (`sha256:${stored.sha256}` !== compiled.content_hash) {
        return {
          drafts,
          failure: new OrchestratorError('ORCHESTRATOR_CONTEXT_PACK_STORE_FAILED', `the artifact store named the pack of attempt ${attemptId} sha256:${stored.sha256}, not ${compiled.content_hash}`, {
            details: { task_id: context.taskId, attempt_id: attemptId },
          }),
        };
      }
      command = { type: 'record-context-pack', data: { ...base, compiled, uri: stored.uri }, metadata: { now: context.now } };
    } catch (error) {
      const code = REFUSALS.find((candidate) => hasErrorCode(error, candidate));
      if (code === undefined) throw error;
      command = { type: 'refuse-context-pack', data: { ...base, code, message: error instanceof Error ? error.message : code }, metadata: { now: context.now } };
    }
    const decided = contextPackDecider.decide(command, foldContextPack(events, attemptId));
    drafts.push(...decided.map((event) => draft(event, attemptId, events, context)));
  }
  return { drafts };
}

function draft(event: ContextPackEvent, attemptId: string, events: readonly EventEnvelope[], context: ContextPackContext): EventDraft {
  const key = contextPackKey(attemptId);
  const stepId = events.find((candidate) => candidate.attempt_id === attemptId && candidate.step_id !== undefined)?.step_id;
  return {
    event_id: eventIdFor(context.taskId, key),
    schema_version: 1,
    event_type: event.type,
    entity_type: 'attempt',
    entity_id: attemptId,
    ...(stepId === undefined ? {} : { step_id: stepId }),
    attempt_id: attemptId,
    occurred_at: context.now,
    actor_type: 'service',
    actor_id: context.actorId,
    payload: event.data as unknown as Record<string, unknown>,
    causation_id: context.causationId,
    correlation_id: context.taskId,
    idempotency_key: key,
  };
}
