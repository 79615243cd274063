import { z } from 'zod';
import { Id, Ref, Sha256Hex, Timestamp } from '../ids.js';
import { JsonValue } from '../json.js';
import { Text } from '../text.js';

/** The sections of a context pack, in the precedence of Hermit 15.7 (first wins the budget). */
export const ContextSection = z.enum([
  'task_contract',
  'step_contract',
  'policy_constraints',
  'decisions',
  'working_state',
  'beliefs',
  'memory',
  'artifacts',
  'ingress_and_focus',
  'session',
]);
export type ContextSection = z.infer<typeof ContextSection>;

/** Where an item of a pack came from: every item is traceable to one source id (Hermit 15.6). */
export const ContextSource = z.strictObject({
  kind: z.enum(['task_contract', 'step_contract', 'policy', 'decision', 'working_state_entry', 'belief', 'memory', 'artifact', 'ingress', 'focus', 'session']),
  id: z.string().min(1).max(256),
});
export type ContextSource = z.infer<typeof ContextSource>;

/** Why an input was left out of a pack. */
export const ContextOmissionReason = z.enum([
  'BUDGET_EXCEEDED',
  'SECRET_EXCLUDED',
  'BELIEF_NOT_ACTIVE',
  'BELIEF_EXPIRED',
  'TRUST_TIER_BARRED_FROM_PLANNING',
  'MEMORY_NOT_ACTIVE',
  'MEMORY_EXPIRED',
  'SESSION_NOT_REQUESTED',
]);
export type ContextOmissionReason = z.infer<typeof ContextOmissionReason>;

export const ContextItem = z.strictObject({
  section: ContextSection,
  source: ContextSource,
  content: JsonValue.optional().describe('Absent for a secret named by reference.'),
  secret_ref: Ref.optional().describe('A secret named by reference (never its value), when the profile allows it.'),
});
export type ContextItem = z.infer<typeof ContextItem>;

export const ContextOmission = z.strictObject({ section: ContextSection, source: ContextSource, reason: ContextOmissionReason });
export type ContextOmission = z.infer<typeof ContextOmission>;

/** The minimal execution pack compiled for one attempt (Hermit 15.6), stored as a `context.pack` artifact under its content hash. */
export const ContextPack = z
  .strictObject({
    kind: z.literal('context.pack'),
    version: z.literal(1),
    task_id: Id,
    attempt_id: Id,
    as_of: Timestamp.describe('The instant expiry was judged at (an input, so the pack is reproducible).'),
    secrets: z.enum(['excluded', 'by_reference']),
    budget: z.strictObject({ max_items: z.int().min(1), max_bytes: z.int().min(1), used_items: z.int().min(0), used_bytes: z.int().min(0) }),
    items: z.array(ContextItem),
    omitted: z.array(ContextOmission),
  })
  .meta({ title: 'ContextPack', description: 'A deterministic, bounded, traceable context pack for one attempt (Hermit 15.6, 15.7).' });
export type ContextPack = z.infer<typeof ContextPack>;

/** Why no pack could be compiled for an attempt: the kernel's refusal (`KnowledgeErrorCode`), recorded so the task moves on. */
export const ContextPackRefusalCode = z.enum(['KNOWLEDGE_CONTEXT_BUDGET_TOO_SMALL', 'KNOWLEDGE_CONTEXT_INPUT_INVALID']);
export type ContextPackRefusalCode = z.infer<typeof ContextPackRefusalCode>;

/**
 * `context.pack_compiled` on the task stream (the orchestrator's): the pack of one attempt
 * is in the artifact store under `sha256`, compiled from the task's log through
 * `through_task_seq` (the attempt's `attempt.awaiting_policy`) with `as_of` that event's
 * `occurred_at`, so anyone holding the log compiles the same bytes again. The pack itself
 * never travels in the log: its items are already there, and a secret one must not be twice.
 */
export const ContextPackCompiled = z
  .strictObject({
    attempt_id: Id,
    sha256: Sha256Hex.describe('SHA-256 of the pack\'s RFC 8785 bytes: its name in the artifact store.'),
    uri: Ref.describe('Where the bytes are: `nats-obj://<bucket>/sha256-<hex>`.'),
    byte_size: z.int().min(1),
    through_task_seq: z.int().min(1).describe('The last task event the pack was compiled from.'),
    as_of: Timestamp,
    secrets: z.enum(['excluded', 'by_reference']),
    items: z.int().min(0),
    omitted: z.int().min(0),
    at: Timestamp,
  })
  .meta({ title: 'ContextPackCompiled', description: 'The payload of context.pack_compiled: which context pack an attempt was proposed under (Hermit 15.6).' });
export type ContextPackCompiled = z.infer<typeof ContextPackCompiled>;

/** `context.pack_refused`: the kernel refused to compile the attempt's pack (its inputs do not fit or do not parse). */
export const ContextPackRefused = z.strictObject({
  attempt_id: Id,
  code: ContextPackRefusalCode,
  message: Text,
  through_task_seq: z.int().min(1),
  at: Timestamp,
});
export type ContextPackRefused = z.infer<typeof ContextPackRefused>;
