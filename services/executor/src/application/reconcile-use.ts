import { ExecutionStarted, type EventEnvelope } from '@writ/contracts';
import type { UseRecord } from '../outbound/cells/index.js';

/** `execution.started` of one use, as the task stream holds it (the executor's journal of the exec). */
export function findStarted(stream: readonly EventEnvelope[], useId: string): { readonly event_id: string; readonly data: ExecutionStarted } | undefined {
  for (const event of stream) {
    if (event.event_type !== 'execution.started') continue;
    const parsed = ExecutionStarted.safeParse(event.payload);
    if (parsed.success && parsed.data.use_id === useId) return { event_id: event.event_id, data: parsed.data };
  }
  return undefined;
}

/**
 * What a claimed, never completed use comes to, from what this host can see of it
 * (Hermit 19.3): the record's exit status is the result; a record nobody started can be
 * fenced (then it never runs); a started one without an exit status is awaited until its
 * deadline; anything else is unknown. Pure.
 */
export type ReconcileStep =
  | { readonly kind: 'from-record'; readonly record: UseRecord & { readonly exit_code: number } }
  | { readonly kind: 'not-run' }
  | { readonly kind: 'fence' }
  | { readonly kind: 'await' }
  | { readonly kind: 'unknown'; readonly reason: string };

export interface ReconcileInput {
  /** The record on this host, when the use's record directory exists here. */
  readonly record: UseRecord | undefined;
  /** This host holds the task's cell and a record directory here would be the one the exec used. */
  readonly local: boolean;
  readonly now: number;
  /** When the action is over or stuck: its journaled deadline, else the claim window's end. */
  readonly deadline: number;
}

export function reconcileStep(input: ReconcileInput): ReconcileStep {
  const { record } = input;
  if (record?.fenced === true) return { kind: 'not-run' };
  if (record !== undefined && record.started && record.exit_code !== undefined) return { kind: 'from-record', record: record as UseRecord & { exit_code: number } };
  // Nothing began here: made `run/` first, the wrapper can never start it.
  if (input.local && (record === undefined || !record.started)) return { kind: 'fence' };
  if (input.now < input.deadline) return { kind: 'await' };
  if (record === undefined) return { kind: 'unknown', reason: 'no record of the use on this host' };
  return { kind: 'unknown', reason: 'the action started and left no exit status by its deadline' };
}
