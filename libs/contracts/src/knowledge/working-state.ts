import { z } from 'zod';
import { Id, Name, Ref, Timestamp } from '../ids.js';
import { JsonValue } from '../json.js';
import { LIMITS } from '../limits.js';
import { KnowledgeSensitivity } from './knowledge-evidence.js';

/** What a working state entry may hold (Hermit 15.2): nothing else, so it cannot become a transcript dump. */
export const WorkingStateEntryKind = z.enum([
  'objective',
  'constraint',
  'plan_pointer',
  'pending_question',
  'resource_handle',
  'expected_output',
  'cache',
  'uncertainty',
]);
export type WorkingStateEntryKind = z.infer<typeof WorkingStateEntryKind>;

/** One keyed entry of a task's working state. */
export const WorkingStateEntry = z
  .strictObject({
    key: Name.describe('Stable key within the task, e.g. "plan.current" or "question.db_choice".'),
    kind: WorkingStateEntryKind,
    value: JsonValue,
    refs: z.array(Name).max(LIMITS.shortListItems).optional().describe('Keys of other entries this one depends on: a compaction keeps them.'),
    source_refs: z.array(Ref).max(LIMITS.shortListItems).optional().describe('Artifacts, beliefs or ingress records this entry came from.'),
    pinned: z.boolean().optional().describe('Kept by every compaction.'),
    sensitivity: KnowledgeSensitivity.optional().describe(
      'Absent means internal. A secret entry holds as its value exactly a SecretReference `{ "secret_ref": <Ref> }`, never the secret (else KNOWLEDGE_SECRET_BY_VALUE), and enters a context pack only by that reference, when the profile allows it.',
    ),
  })
  .meta({ title: 'WorkingStateEntry', description: 'One schema-governed entry of a task-local working state (Hermit 15.2).' });
export type WorkingStateEntry = z.infer<typeof WorkingStateEntry>;

/** Hard ceilings no profile can raise; a profile's limits lie at or under them. */
export const WORKING_STATE_CEILINGS = Object.freeze({ max_entries: 1_024, max_entry_bytes: 65_536, max_total_bytes: 1_048_576 });

/** The size bounds of one task's working state (Hermit 6.3.2), as data. Sizes are UTF-8 bytes of an entry's JSON. */
export const WorkingStateLimits = z
  .strictObject({
    max_entries: z.int().min(1).max(WORKING_STATE_CEILINGS.max_entries),
    max_entry_bytes: z.int().min(64).max(WORKING_STATE_CEILINGS.max_entry_bytes),
    max_total_bytes: z.int().min(64).max(WORKING_STATE_CEILINGS.max_total_bytes),
  })
  .meta({ title: 'WorkingStateLimits', description: 'Size bounds of a working state; refusal past them is KNOWLEDGE_WORKING_STATE_TOO_LARGE.' });
export type WorkingStateLimits = z.infer<typeof WorkingStateLimits>;

/** A task's working state as folded from its events (the working state view, Hermit 13.6). */
export const WorkingState = z
  .strictObject({
    task_id: Id,
    revision: z.int().min(0),
    limits: WorkingStateLimits,
    entries: z.array(WorkingStateEntry).max(WORKING_STATE_CEILINGS.max_entries),
    updated_at: Timestamp,
  })
  .meta({ title: 'WorkingState', description: 'Durable, task-local, bounded execution state (Hermit 15.2).' });
export type WorkingState = z.infer<typeof WorkingState>;
