import type { MemoryWriteParams } from '@writ/contracts';
import { fold } from '../shared/decider.js';
import { beliefDecider, findBelief, type Asserter, type BeliefSetState } from './belief.decider.js';
import type { MemoryPromotionFacts } from './memory-promotion.js';
import { memoryDecider, type MemoryCommand, type MemoryRecordState } from './memory.decider.js';
import type { MemoryEvent } from './memory.events.js';

/** One event of a task's log as the memory write reads it (the envelope's fields it needs). */
export interface TaskLogEvent {
  readonly event_type: string;
  readonly entity_type: string;
  readonly entity_id: string;
  readonly attempt_id?: string | undefined;
  readonly payload: Readonly<Record<string, unknown>>;
}

/** What a granted memory_write is decided on: the task and attempt it ran in, its proposer as registered, and the task's log (authorship already checked by the reader). */
export interface MemoryWriteInput {
  readonly task_id: string;
  readonly attempt_id: string;
  readonly proposer: Asserter;
  readonly task_events: readonly TaskLogEvent[];
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);
const record = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** The task's beliefs as its `belief.*` events fold (a malformed one is not applied: `evolve` is total and strict). */
export function taskBeliefs(events: readonly TaskLogEvent[]): BeliefSetState {
  return fold(beliefDecider, events.filter((event) => event.event_type.startsWith('belief.')).map((event) => ({ type: event.event_type, data: event.payload })));
}

/**
 * The authority the attempt ran under, as its task's log records it: the
 * policy result that let it through (`policy_result:<id>`: its last
 * evaluation allowing or requiring approval) and, when one was granted, its
 * approval (`approval:<id>`). Never taken from the request: a proposer cannot
 * name an authority it was not given.
 */
export function memoryWriteAuthority(events: readonly TaskLogEvent[], attemptId: string): Pick<MemoryPromotionFacts, 'policy_result_ref' | 'approval_ref'> {
  let policyResultRef: string | undefined;
  const requested = new Set<string>();
  let approvalRef: string | undefined;
  for (const event of events) {
    if (event.event_type === 'policy.evaluated' && event.attempt_id === attemptId) {
      const result = record(event.payload['policy_result']);
      const id = text(result?.['policy_result_id']);
      const outcome = result?.['outcome'];
      if (id !== undefined && (outcome === 'allow' || outcome === 'require_approval')) policyResultRef = `policy_result:${id}`;
    } else if (event.event_type === 'approval.requested' && text(event.payload['attempt_id']) === attemptId) {
      const id = text(event.payload['approval_id']) ?? (event.entity_type === 'approval' ? event.entity_id : undefined);
      if (id !== undefined) requested.add(id);
    } else if (event.event_type === 'approval.granted' && event.entity_type === 'approval' && requested.has(event.entity_id)) {
      approvalRef = `approval:${event.entity_id}`;
    }
  }
  return { ...(policyResultRef === undefined ? {} : { policy_result_ref: policyResultRef }), ...(approvalRef === undefined ? {} : { approval_ref: approvalRef }) };
}

/**
 * The memory decider's command for a granted memory_write (issue 17, Hermit
 * 15.5): a promotion carries the facts looked up from the task's log (the
 * proposer as registered, the source belief as folded, the policy result and
 * approval of the attempt), never from the request; an invalidation is made
 * by the proposer. The record's id and the task come from the request and the
 * grant's task.
 */
export function memoryWriteCommand(params: MemoryWriteParams, input: MemoryWriteInput, now: string): MemoryCommand {
  const metadata = { now };
  if (params.op === 'invalidate') {
    const { reason, superseded_by } = params;
    return { type: 'invalidate-memory', data: { invalidated_by: input.proposer.principal_id, reason, ...(superseded_by === undefined ? {} : { superseded_by }) }, metadata };
  }
  const { op: _op, ...request } = params;
  const sourceBelief = request.source?.kind === 'belief' ? findBelief(taskBeliefs(input.task_events), request.source.id) : undefined;
  const facts: MemoryPromotionFacts = {
    promoted_by: input.proposer,
    ...(sourceBelief === undefined ? {} : { source_belief: sourceBelief }),
    ...memoryWriteAuthority(input.task_events, input.attempt_id),
  };
  return { type: 'promote-memory', data: { request: { ...request, task_id: input.task_id }, facts }, metadata };
}

/** Decides a granted memory_write against the record's stream as folded: the memory events to append, or the kernel's KNOWLEDGE_* refusal (thrown). */
export function decideMemoryWrite(params: MemoryWriteParams, input: MemoryWriteInput, state: MemoryRecordState, now: string): MemoryEvent[] {
  return memoryDecider.decide(memoryWriteCommand(params, input, now), state);
}
