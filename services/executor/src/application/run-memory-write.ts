import { hasErrorCode, MemoryWriteOutcome, WorkingStateEntry, type EventDraft, type EventEnvelope, type MemoryWriteParams, type RunAction } from '@writ/contracts';
import { decideMemoryWrite, fold, memoryDecider, type MemoryEvent } from '@writ/kernel';
import type { DraftContext } from './event-drafts.js';
import { ExecutorError } from './executor-errors.js';
import type { MemoryLog, ProposerDirectory, TaskLog } from './ports.js';

export interface MemoryWriteDeps {
  readonly log: TaskLog;
  readonly memory: MemoryLog;
  readonly proposers: ProposerDirectory;
}

/** What one granted memory_write came to: the memory event on the record's stream, or the kernel's refusal (nothing appended). */
export type MemoryWriteResult = { readonly kind: 'written'; readonly memory: MemoryWriteOutcome } | { readonly kind: 'refused'; readonly code: string; readonly message: string };

/** Lost append races on the record's stream one use absorbs by re-reading. */
const MAX_ROUNDS = 8;

/** The memory event of one use: its id and key derive from the use, so whoever performs the use (again) appends the same event. */
export function memoryEventIdFor(useId: string): string {
  return `${useId}-memory`;
}

function memoryDraft(command: RunAction, useId: string, claimEventId: string, memoryId: string, event: MemoryEvent, context: DraftContext): EventDraft {
  return {
    event_id: memoryEventIdFor(useId),
    schema_version: 1,
    event_type: event.type,
    entity_type: 'memory',
    entity_id: memoryId,
    step_id: command.step_id,
    attempt_id: command.attempt_id,
    occurred_at: context.occurredAt,
    actor_type: 'service',
    actor_id: context.actorId,
    payload: event.data as unknown as Record<string, unknown>,
    causation_id: claimEventId,
    correlation_id: command.task_id,
    idempotency_key: `${useId}:memory`,
  };
}

const OUTCOMES: Readonly<Record<string, MemoryWriteOutcome['outcome']>> = {
  'memory.promoted': 'promoted',
  'memory.promotion_degraded': 'degraded_to_working_state',
  'memory.invalidated': 'invalidated',
};

/** What the stored memory event of this use says, as `execution.completed.memory` records it. */
function outcomeOf(params: MemoryWriteParams, event: EventEnvelope): MemoryWriteOutcome {
  const outcome = OUTCOMES[event.event_type];
  if (outcome === undefined) throw new ExecutorError('EXECUTOR_INTERNAL', `memory event ${event.event_id} is a ${event.event_type}, which no memory_write appends`);
  const degraded = outcome === 'degraded_to_working_state';
  const reasons = degraded && Array.isArray(event.payload['reasons']) ? (event.payload['reasons'] as string[]) : undefined;
  const entry = degraded ? WorkingStateEntry.safeParse(event.payload['entry']) : undefined;
  return MemoryWriteOutcome.parse({
    memory_id: event.entity_id,
    op: params.op,
    outcome,
    event_id: event.event_id,
    event_sha256: event.hash,
    ...(reasons === undefined ? {} : { reasons }),
    ...(entry?.success === true ? { entry: entry.data } : {}),
  });
}

/**
 * Performs a granted memory_write (issue 17, Hermit 15.5, 6.3.1) once its use is
 * claimed: the record's stream is folded by the kernel's memory decider, the
 * facts are read from the task's log (the source belief as folded, the policy
 * result and approval of the attempt) and the proposer's registration — never
 * from the request — and the decided event is appended to the record's stream
 * guarded by its last sequence. Idempotent by use: the event's id derives from
 * the use, so a second performer of the same use (a redelivery, a reconciler
 * after a kill between the append and the completion) finds it and reports it
 * rather than writing again; a refusal (KNOWLEDGE_*) appends nothing.
 */
export async function performMemoryWrite(
  deps: MemoryWriteDeps,
  command: RunAction,
  useId: string,
  claimEventId: string,
  params: MemoryWriteParams,
  context: DraftContext,
): Promise<MemoryWriteResult> {
  const memoryId = params.memory_id;
  for (let round = 1; ; round += 1) {
    const stream = await deps.memory.read(memoryId);
    const mine = stream.find((event) => event.event_id === memoryEventIdFor(useId));
    if (mine !== undefined) return { kind: 'written', memory: outcomeOf(params, mine) };

    const proposer = command.action_request.proposed_by;
    const principalType = await deps.proposers.principalType(proposer);
    if (principalType === undefined) return { kind: 'refused', code: 'EXECUTOR_PROPOSER_UNKNOWN', message: `the proposer ${proposer} is not a registered principal; its memory write was not performed` };
    const state = fold(memoryDecider, stream.map((event) => ({ type: event.event_type, data: event.payload })));
    let events: MemoryEvent[];
    try {
      const taskEvents = await deps.log.read(command.task_id);
      events = decideMemoryWrite(
        params,
        { task_id: command.task_id, attempt_id: command.attempt_id, proposer: { principal_id: proposer, principal_type: principalType }, task_events: taskEvents },
        state,
        context.occurredAt,
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (hasErrorCode(error) && error.code.startsWith('KNOWLEDGE_')) return { kind: 'refused', code: error.code, message: message.slice(0, 2_000) };
      throw error;
    }
    const [event] = events;
    if (event === undefined || events.length !== 1) throw new ExecutorError('EXECUTOR_INTERNAL', `the memory decider answered a memory_write with ${events.length} events`);
    try {
      await deps.memory.append(memoryId, [memoryDraft(command, useId, claimEventId, memoryId, event, context)], stream.at(-1)?.task_seq ?? 0);
    } catch (error) {
      // Someone wrote the record since our read (another use, or this use's other performer): read and decide again.
      if (hasErrorCode(error, 'EVENTSTORE_CONFLICT') && round < MAX_ROUNDS) continue;
      throw error;
    }
  }
}
