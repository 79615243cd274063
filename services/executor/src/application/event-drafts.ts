import type { EventDraft, ExecutionCompleted, ExecutionStarted, RunAction } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';

/**
 * The id of one use of a grant: derived from the whole RunAction (RFC 8785
 * canonical JSON), so the same command — redelivered after an ack timeout,
 * re-published outside the duplicate window, or handed to two executors — is
 * the same use, claimed once. Another command with the same grant (other params,
 * another attempt...) is another use, and counts against `max_uses`.
 */
export function useIdFor(command: RunAction): string {
  return `use-${sha256Hex(canonicalJson(command)).slice(0, 40)}`;
}

/** Who appends and when: the executor service principal, at the adapter's clock reading. */
export interface DraftContext {
  readonly actorId: string;
  readonly occurredAt: string;
}

function base(command: RunAction, context: DraftContext) {
  return {
    schema_version: 1,
    step_id: command.step_id,
    attempt_id: command.attempt_id,
    occurred_at: context.occurredAt,
    actor_type: 'service' as const,
    actor_id: context.actorId,
    correlation_id: command.task_id,
  };
}

/** An event about the grant for one use: its id and idempotency key derive from the use and the type, so a retried append is the same event. */
function grantUseDraft(command: RunAction, useId: string, type: 'grant.use_claimed' | 'grant.refused' | 'grant.use_released', payload: Record<string, unknown>, causationId: string, context: DraftContext): EventDraft {
  return {
    ...base(command, context),
    event_id: `${useId}-${type === 'grant.use_claimed' ? 'claimed' : type === 'grant.refused' ? 'refused' : 'released'}`,
    event_type: type,
    entity_type: 'grant',
    entity_id: command.grant_id,
    payload,
    causation_id: causationId,
    idempotency_key: `${useId}:${type}`,
  };
}

/** `grant.use_claimed` (the kernel's event data), about the grant; caused by the command (its use id). */
export function claimDraft(command: RunAction, useId: string, data: Record<string, unknown>, context: DraftContext): EventDraft {
  return grantUseDraft(command, useId, 'grant.use_claimed', data, useId, context);
}

/** `grant.refused`: `{ use_id, code, message, at }`, about the grant; caused by the command. */
export function refusalDraft(command: RunAction, useId: string, data: { use_id: string; code: string; message: string; at: string }, context: DraftContext): EventDraft {
  return grantUseDraft(command, useId, 'grant.refused', data, useId, context);
}

/**
 * `grant.use_released` (the kernel's event data), about the grant; caused by the claim. Appended
 * with the use's `execution.completed` (outcome `not_run`), in one append: never one without the other.
 */
export function releaseDraft(command: RunAction, useId: string, claimEventId: string, data: Record<string, unknown>, context: DraftContext): EventDraft {
  return grantUseDraft(command, useId, 'grant.use_released', data, claimEventId, context);
}

/**
 * `execution.completed`, about the attempt; caused by the claim. One per use:
 * the real outcome and an `unknown` recorded after a crash share the key, so
 * whichever is appended first is the only one.
 */
export function completionDraft(command: RunAction, useId: string, claimEventId: string, payload: ExecutionCompleted, context: DraftContext): EventDraft {
  return {
    ...base(command, context),
    event_id: `${useId}-completed`,
    event_type: 'execution.completed',
    entity_type: 'attempt',
    entity_id: command.attempt_id,
    payload,
    causation_id: claimEventId,
    idempotency_key: `${useId}:execution.completed`,
  };
}

/**
 * `execution.started`, about the attempt; caused by the claim. Appended after the exec
 * is created and before it starts: the journal a restarted executor reconciles from.
 */
export function startedDraft(command: RunAction, useId: string, claimEventId: string, payload: ExecutionStarted, context: DraftContext): EventDraft {
  return {
    ...base(command, context),
    event_id: `${useId}-started`,
    event_type: 'execution.started',
    entity_type: 'attempt',
    entity_id: command.attempt_id,
    payload,
    causation_id: claimEventId,
    idempotency_key: `${useId}:execution.started`,
  };
}
