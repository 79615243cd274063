import { EventDraft } from '@writ/contracts';
import type { StoryEvent } from './governed-path.fixture.js';

/**
 * Ingress's free-form message events (issue 17) as the projection reads
 * them: `ingress.recorded` and `ingress.bound` on one principal's
 * conversation stream `writ.evt.ingress.<stream>`, shaped as the kernel's
 * IngressBindingEvent.
 */
export interface MessageStep {
  readonly ingress: string;
  /** Omitted: recorded, never bound (a crash between the two). */
  readonly bind?: { readonly resolution: string; readonly task_id?: string; readonly candidates?: readonly string[] };
  readonly explicit?: string;
}

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 2, 3, 0, seconds)).toISOString();

export function messageEvent(stream: string, type: 'ingress.recorded' | 'ingress.bound', payload: Record<string, unknown>, seconds: number, id = `${payload['ingress_id']}-${type}`): StoryEvent {
  const draft = EventDraft.parse({
    event_id: id.replaceAll('.', '_'),
    schema_version: 1,
    event_type: type,
    entity_type: 'ingress',
    entity_id: stream,
    occurred_at: at(seconds),
    actor_type: 'service',
    actor_id: 'writ-ingress',
    payload: { ...payload, at: at(seconds) },
    causation_id: null,
    correlation_id: String(payload['ingress_id']),
    idempotency_key: id,
  });
  return { aggregate: 'ingress', aggregateId: stream, draft };
}

export const HASH = 'e'.repeat(64);

/** The messages of one conversation, each recorded then (if `bind`) bound, in order. */
export function conversationStory(stream: string, principal: string, conversation: string, steps: readonly MessageStep[], from = 10): StoryEvent[] {
  return steps.flatMap((step, n) => {
    const recorded = messageEvent(
      stream,
      'ingress.recorded',
      { ingress_id: step.ingress, conversation_id: conversation, principal_id: principal, source_channel: 'nats', text_sha256: HASH, ...(step.explicit === undefined ? {} : { explicit_task_ref: step.explicit }) },
      from + 2 * n,
    );
    if (step.bind === undefined) return [recorded];
    const { resolution, task_id, candidates = [] } = step.bind;
    const bound = messageEvent(
      stream,
      'ingress.bound',
      {
        ingress_id: step.ingress,
        resolution,
        ...(task_id === undefined ? {} : { task_id }),
        candidates: candidates.map((id) => ({ resolution: 'append_note', task_id: id })),
        rationale: `${resolution} (test)`,
        bound_by: 'writ-ingress',
      },
      from + 2 * n + 1,
    );
    return [recorded, bound];
  });
}
