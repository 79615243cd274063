import { GENUINE_BLOCK_REASONS, TASK_TERMINAL_STATES, type BlockRefusal, type BlockRefusalCode, type BlockedClaim, type TaskStatus } from '@writ/contracts';

/** How the fallback the claim names stands in the task: in flight, succeeded, ended otherwise, or not a request of the task. */
export type FallbackStanding = 'in_flight' | 'succeeded' | 'ended' | 'unknown';

export interface BlockedClaimFacts {
  readonly taskStatus: TaskStatus;
  /** Attempts of the task that are neither ended nor waiting on nobody: in flight now. */
  readonly attemptsInFlight: number;
  /** The request `fallback_action_request_id` names, when the claim names one. */
  readonly fallbackRequest?: FallbackStanding;
}

export type BlockedJudgment = { readonly verdict: 'accepted' } | { readonly verdict: 'refused'; readonly refusals: readonly BlockRefusal[] };

/**
 * Preferences dressed as blocks (seed 003 "Illegal blocks" and the "no idle
 * wait" violation phrases), matched on the lower-cased, whitespace-collapsed
 * question. Each names the seed example it stands for.
 */
export const PREFERENCE_PATTERNS: readonly { readonly name: string; readonly pattern: RegExp }[] = Object.freeze([
  { name: 'confirm before proceeding', pattern: /\bconfirm\b[^.?!]*\bbefore\b[^.?!]*\b(?:proceed|continu|go|start|cod|chang|mov)/ },
  { name: 'which option do you prefer', pattern: /\bwhich\b[^.?!]*\b(?:would|do|does)\s+(?:you|the user)\s+prefer\b/ },
  { name: 'prefer among options', pattern: /\b(?:options?|alternatives?|approaches)\b[^?]*\bprefer\b/ },
  { name: 'validate the approach before coding', pattern: /\b(?:validate|approve|review|sign off on)\s+(?:the|my|this|our)\s+(?:approach|plan|design)\b/ },
  { name: 'which path should I take', pattern: /\bwhich\s+(?:path|option|approach|way|one)\b[^.?!]*\bshould\s+(?:i|we)\b/ },
  { name: 'should I proceed', pattern: /\bshould\s+(?:i|we)\s+(?:proceed|continue|go ahead|start|carry on)\b/ },
  { name: 'awaiting confirmation', pattern: /\b(?:awaiting|waiting for)\s+(?:your\s+|a\s+|human\s+)?(?:confirmation|approval|go-ahead|go ahead|validation)\b/ },
  { name: 'confirm before I continue', pattern: /\bconfirm\s+before\s+(?:i|we)\b/ },
]);

/** A fallback that only waits is no fallback. */
const IDLE_FALLBACK = /^(?:none|n\/a|-|nothing|idle|wait|waiting|standing by|paused?|(?:awaiting|waiting for) (?:an? |the |your )?(?:answer|confirmation|approval|reply|response|human))\.?$/;

function normalized(text: string): string {
  return text.toLowerCase().replace(/[’`]/g, "'").replace(/\s+/g, ' ').trim();
}

/** The seed pattern a question matches, if it is a preference rather than a block. */
export function preferenceIn(question: string): string | undefined {
  const text = normalized(question);
  return PREFERENCE_PATTERNS.find((entry) => entry.pattern.test(text))?.name;
}

/**
 * Judges a `blocked.json` (seed 003 "Legal vs illegal blocks"): legal only when
 * (a) the block is genuine — a credential missing, a destructive operation
 * outside the scope, a scope expansion, or a true semantic ambiguity — and the
 * question is not a preference; (b) the fallback action is executing right
 * now (an attempt of the task in flight, or the named fallback request in
 * flight or done); (c) `can_resume_without_answer` is true. Every broken rule
 * is listed with its code.
 */
export function judgeBlockedClaim(claim: BlockedClaim, facts: BlockedClaimFacts): BlockedJudgment {
  if (TASK_TERMINAL_STATES.includes(facts.taskStatus)) {
    return { verdict: 'refused', refusals: [{ code: 'BLOCK_TASK_ENDED', message: `the task is ${facts.taskStatus}; nothing is blocked any more` }] };
  }
  const refusals: BlockRefusal[] = [];
  const refuse = (code: BlockRefusalCode, message: string) => refusals.push({ code, message });
  if (!(GENUINE_BLOCK_REASONS as readonly string[]).includes(claim.reason)) {
    refuse('BLOCK_NOT_GENUINE', `reason ${claim.reason} is not a genuine block (${GENUINE_BLOCK_REASONS.join(', ')}): decide and proceed`);
  }
  if (claim.question.trim() === '') refuse('BLOCK_QUESTION_MISSING', 'the question is empty');
  const preference = preferenceIn(claim.question);
  if (preference !== undefined) refuse('BLOCK_PREFERENCE', `the question is a preference ("${preference}"), not a block: decide, log the decision and proceed`);
  const fallback = normalized(claim.fallback_action);
  if (fallback === '' || IDLE_FALLBACK.test(fallback)) refuse('BLOCK_NO_FALLBACK', 'no fallback action: a legal block keeps doing the work that is in scope');
  if (!claim.can_resume_without_answer) refuse('BLOCK_CANNOT_RESUME', 'can_resume_without_answer is false: that is an idle wait');
  const executing = claim.fallback_action_request_id === undefined ? facts.attemptsInFlight > 0 : facts.fallbackRequest === 'in_flight' || facts.fallbackRequest === 'succeeded';
  if (!executing) {
    const why =
      claim.fallback_action_request_id === undefined
        ? 'no action of the task is in flight'
        : `request ${claim.fallback_action_request_id} is ${facts.fallbackRequest === 'unknown' || facts.fallbackRequest === undefined ? 'not a request of this task' : 'over without succeeding'}`;
    refuse('BLOCK_FALLBACK_NOT_EXECUTING', `the fallback is not executing: ${why}`);
  }
  return refusals.length === 0 ? { verdict: 'accepted' } : { verdict: 'refused', refusals };
}
