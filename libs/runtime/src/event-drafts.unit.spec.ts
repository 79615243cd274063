import { EventDraft, Id } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { causationIdOf, derivedId, serviceDraft } from './event-drafts.js';

const input = {
  key: 'att-1:policy.evaluated:1',
  eventType: 'policy.evaluated',
  entityType: 'decision' as const,
  entityId: 'dec-1',
  stepId: 'stp-1',
  attemptId: 'att-1',
  occurredAt: '2026-01-01T00:00:00.000Z',
  actorId: 'writ-policy',
  payload: { outcome: 'allow' },
  causationId: 'evt-0',
  correlationId: 'tsk-1',
};

describe('derivedId', () => {
  it('given the same cause, then the same id, a valid Id of prefix and 32 hex', () => {
    const id = derivedId('pol', 'tsk-1', 'att-1:policy.evaluated:1');
    expect(id).toBe(derivedId('pol', 'tsk-1', 'att-1:policy.evaluated:1'));
    expect(id).toBe(`pol-${sha256Hex('tsk-1:att-1:policy.evaluated:1').slice(0, 32)}`);
    expect(Id.safeParse(id).success).toBe(true);
  });

  it('given parts, then they are joined by colons (numbers too)', () => {
    expect(derivedId('pr', 'tsk-1', 'att-1', 2)).toBe(derivedId('pr', 'tsk-1:att-1:2'));
    expect(derivedId('pr', 'a', 'b')).not.toBe(derivedId('pr', 'ab'));
  });
});

describe('causationIdOf', () => {
  it('given a command id that is an Id, then it is kept', () => {
    expect(causationIdOf('att-1_receipt')).toBe('att-1_receipt');
  });

  it('given one that is not (a Nats-Msg-Id with colons), then it is hashed into an Id', () => {
    const id = causationIdOf('att-1:receipt:settled');
    expect(id).toBe(derivedId('cmd', 'att-1:receipt:settled'));
    expect(Id.safeParse(id).success).toBe(true);
  });
});

describe('serviceDraft', () => {
  it('given a cause, then a valid service draft whose ids derive from the key', () => {
    const draft = serviceDraft(input);
    expect(EventDraft.parse(draft)).toEqual(draft);
    expect(draft).toEqual({
      event_id: derivedId('evt', input.key),
      schema_version: 1,
      event_type: 'policy.evaluated',
      entity_type: 'decision',
      entity_id: 'dec-1',
      step_id: 'stp-1',
      attempt_id: 'att-1',
      occurred_at: input.occurredAt,
      actor_type: 'service',
      actor_id: 'writ-policy',
      payload: { outcome: 'allow' },
      causation_id: 'evt-0',
      correlation_id: 'tsk-1',
      idempotency_key: input.key,
    });
    expect(serviceDraft(input)).toEqual(draft);
  });

  it('given its own event id and no step or attempt, then it keeps the id and leaves them out', () => {
    const draft = serviceDraft({ ...input, eventId: 'ing-1-ingress_received', stepId: undefined, attemptId: undefined, causationId: null });
    expect(draft.event_id).toBe('ing-1-ingress_received');
    expect(draft).not.toHaveProperty('step_id');
    expect(draft).not.toHaveProperty('attempt_id');
    expect(draft.causation_id).toBeNull();
  });
});
