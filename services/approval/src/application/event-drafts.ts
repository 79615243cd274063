import { Id, type EntityType, type EventDraft } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';

/** `<prefix>-` + the first 32 hex of SHA-256(`key`): a stable id usable as a NATS subject token. */
export function derivedId(prefix: string, key: string): string {
  return `${prefix}-${sha256Hex(key).slice(0, 32)}`;
}

/** The command's id as an event `causation_id` (an Id): kept when it is one, else hashed. */
export function causationIdOf(commandId: string): string {
  return Id.safeParse(commandId).success ? commandId : derivedId('cmd', commandId);
}

export interface DraftInput {
  /** Idempotency key derived from the cause (`<approval_id>:approval.requested`); the event id is derived from it. */
  readonly key: string;
  readonly eventType: string;
  readonly entityType: EntityType;
  readonly entityId: string;
  readonly stepId: string;
  readonly attemptId: string;
  readonly occurredAt: string;
  readonly actorId: string;
  readonly payload: Record<string, unknown>;
  readonly causationId: string | null;
  readonly correlationId: string;
}

/** An event draft written by a service (`actor_type: service`) with ids derived from its cause. */
export function serviceDraft(input: DraftInput): EventDraft {
  return {
    event_id: derivedId('evt', input.key),
    schema_version: 1,
    event_type: input.eventType,
    entity_type: input.entityType,
    entity_id: input.entityId,
    step_id: input.stepId,
    attempt_id: input.attemptId,
    occurred_at: input.occurredAt,
    actor_type: 'service',
    actor_id: input.actorId,
    payload: input.payload,
    causation_id: input.causationId,
    correlation_id: input.correlationId,
    idempotency_key: input.key,
  };
}
