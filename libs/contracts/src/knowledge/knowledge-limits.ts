import { z } from 'zod';
import { WorkingStateLimits } from './working-state.js';

/** The largest context pack any profile may ask for: 4096 items, 4 MiB of canonical JSON. */
export const CONTEXT_PACK_CEILINGS = Object.freeze({ max_items: 4_096, max_bytes: 4_194_304 });

/**
 * How large an attempt's context pack may be and whether secrets may be named
 * (Hermit 15.6, 6.3.3). A profile's data, never the model's.
 */
export const ContextPackBudget = z
  .strictObject({
    max_items: z.int().min(1).max(CONTEXT_PACK_CEILINGS.max_items),
    max_bytes: z.int().min(256).max(CONTEXT_PACK_CEILINGS.max_bytes).describe('UTF-8 bytes of the items\' canonical JSON the pack may hold.'),
    allow_secret_references: z.boolean().describe('False: secrets are left out (SECRET_EXCLUDED). True: named by their secret_ref, never by value (Hermit 17.3).'),
    include_session: z.boolean().optional().describe('Session history, the last resort of Hermit 15.7: only when true.'),
  })
  .meta({ title: 'ContextPackBudget', description: 'The size budget of an attempt\'s context pack and whether secrets may be named by reference.' });
export type ContextPackBudget = z.infer<typeof ContextPackBudget>;

/**
 * A task's knowledge bounds as its policy profile sets them (issue 17): the
 * working state's size limits and the context pack's budget. The policy
 * service records them with every verdict (`policy.evaluated.knowledge`);
 * the orchestrator opens a working state with the limits the log last
 * recorded (kept in `working_state.opened`, never changed afterwards) and
 * compiles a pack with the budget recorded before its attempt.
 */
export const KnowledgeLimits = z
  .strictObject({ working_state: WorkingStateLimits, context_pack: ContextPackBudget })
  .meta({ title: 'KnowledgeLimits', description: 'Working state limits and context pack budget of a policy profile (Hermit 6.3.2, 15.6).' });
export type KnowledgeLimits = z.infer<typeof KnowledgeLimits>;

/**
 * What a profile without a `knowledge` section gets: small on purpose (large
 * content belongs in artifacts); room in a pack for the contracts, a full
 * default working state and a few dozen beliefs; secrets left out.
 */
export const DEFAULT_KNOWLEDGE_LIMITS: KnowledgeLimits = Object.freeze({
  working_state: Object.freeze({ max_entries: 64, max_entry_bytes: 4_096, max_total_bytes: 65_536 }),
  context_pack: Object.freeze({ max_items: 128, max_bytes: 65_536, allow_secret_references: false }),
});
