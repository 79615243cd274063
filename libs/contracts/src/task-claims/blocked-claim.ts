import { z } from 'zod';
import { Id, Name, Timestamp } from '../ids.js';
import { LIMITS } from '../limits.js';
import { Title } from '../text.js';

/** Why a human may be needed (seed 003 `human_required_for`). */
export const HumanRequiredFor = z.enum(['credential', 'destructive_op', 'scope_expansion']);
export type HumanRequiredFor = z.infer<typeof HumanRequiredFor>;

/**
 * The genuine blocks of seed 003: a credential is missing, a destructive
 * operation lies outside the scope, the scope must grow, or a true semantic
 * ambiguity has no safe default. Any other `reason` is a preference, and the
 * claim is refused (BLOCK_NOT_GENUINE).
 */
export const GENUINE_BLOCK_REASONS = Object.freeze(['credential_missing', 'destructive_op_outside_scope', 'scope_expansion', 'semantic_ambiguity'] as const);
export type GenuineBlockReason = (typeof GENUINE_BLOCK_REASONS)[number];

const Free = z.string().max(LIMITS.text);

/**
 * `blocked.json` (seed 003): a question surfaced to a human while the
 * receiver goes on with a fallback. The contract takes what an agent may
 * write; whether the block is legal (genuine, a fallback executing, resumable
 * without an answer) is the kernel's `judgeBlockedClaim`, which refuses with
 * a code per illegal pattern.
 */
export const BlockedClaim = z
  .strictObject({
    session: Title.describe('The receiver session that is blocked.'),
    blocked_at: Timestamp,
    reason: Name.describe(`One of ${GENUINE_BLOCK_REASONS.join(', ')}; anything else is a preference, not a block.`),
    question: Free.describe('What is ambiguous; shown to a human in the approval inbox.'),
    best_guess: Free.describe("The receiver's recommendation."),
    fallback_action: Free.describe('What the receiver is doing meanwhile.'),
    fallback_action_request_id: Id.optional().describe('The ActionRequest of the task that is the fallback, when there is one: Writ checks it is in flight.'),
    can_resume_without_answer: z.boolean(),
    human_required_for: HumanRequiredFor.nullable(),
  })
  .meta({ title: 'BlockedClaim', description: 'blocked.json: a question for a human while a fallback runs (seed 003).' });
export type BlockedClaim = z.infer<typeof BlockedClaim>;
