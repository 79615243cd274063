import { ContinuationAnchor, Id, IngressResolution, LIMITS, Name, Ref, Sha256Hex, Text, Timestamp, UnitInterval } from '@writ/contracts';
import { z } from 'zod';

const at = Timestamp;

/** One candidate the binder weighed: kept so a binding is explainable from candidates and rationale (Hermit 8.1.2). */
export const BindingCandidate = z.strictObject({ resolution: IngressResolution, task_id: Id.optional(), score: UnitInterval.optional() });
export type BindingCandidate = z.infer<typeof BindingCandidate>;

/**
 * The events of one free-form ingress (Hermit 8.1.2, 8.1.3, 11.5) on
 * `writ.evt.ingress.<id>`. `ingress.recorded` comes first and changes no
 * task; `ingress.bound` says where it went. (An agent's ActionRequest has
 * its own path: `ingress.received` / `accepted` / `rejected`.)
 */
export const IngressBindingEvent = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('ingress.recorded'),
    // The text itself stays in the IngressRecord; the event carries its hash, so the log holds no message body.
    data: z.strictObject({
      ingress_id: Id,
      conversation_id: Id,
      principal_id: Id,
      source_channel: Name,
      text_sha256: Sha256Hex,
      explicit_task_ref: Ref.optional(),
      reply_to_ref: Ref.optional(),
      /** The sender asked for a child task of the task it is about (fork_child). */
      fork: z.literal(true).optional(),
      at,
    }),
  }),
  z.strictObject({
    type: z.literal('ingress.bound'),
    data: z.strictObject({
      ingress_id: Id,
      resolution: IngressResolution,
      /** The task the ingress now belongs to: the target (control, approval, append_note) or the new task (fork_child, start_new_root). */
      task_id: Id.optional(),
      parent_task_id: Id.optional(),
      continuation_anchor: ContinuationAnchor.optional(),
      candidates: z.array(BindingCandidate).max(LIMITS.shortListItems),
      rationale: Text,
      confidence: UnitInterval.optional(),
      bound_by: Id,
      at,
    }),
  }),
]);
export type IngressBindingEvent = z.infer<typeof IngressBindingEvent>;
export type IngressBindingEventType = IngressBindingEvent['type'];
