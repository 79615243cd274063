import { Id, LIMITS, Name, Timestamp, WORKING_STATE_CEILINGS, WorkingStateEntry, WorkingStateLimits } from '@writ/contracts';
import { z } from 'zod';

const at = Timestamp;
const Keys = z.array(Name).max(WORKING_STATE_CEILINGS.max_entries);

/** The events of a task's WorkingState (Hermit 15.2): opened once, then revised and compacted, each a new revision. */
export const WorkingStateEvent = z.discriminatedUnion('type', [
  // The limits are recorded with the opening, so a replay judges every revision by the limits that held then.
  z.strictObject({ type: z.literal('working_state.opened'), data: z.strictObject({ task_id: Id, limits: WorkingStateLimits, at }) }),
  z.strictObject({
    type: z.literal('working_state.revised'),
    // `request_id`: the agent's signed revision request it came from; `set` replaces entries by key, `removed` drops them.
    data: z.strictObject({
      revision: z.int().min(1),
      request_id: Id,
      revised_by: Id,
      set: z.array(WorkingStateEntry).max(WORKING_STATE_CEILINGS.max_entries),
      removed: Keys,
      at,
    }),
  }),
  z.strictObject({
    type: z.literal('working_state.compacted'),
    // `kept` is every entry reachable from the roots (pinned, root kinds, outside references) through `refs`; only the rest is removed.
    data: z.strictObject({
      revision: z.int().min(1),
      compaction_id: Id,
      compacted_by: Id,
      references: z.array(Name).max(LIMITS.listItems),
      kept: Keys,
      removed: Keys.min(1),
      at,
    }),
  }),
]);
export type WorkingStateEvent = z.infer<typeof WorkingStateEvent>;
export type WorkingStateEventType = WorkingStateEvent['type'];
