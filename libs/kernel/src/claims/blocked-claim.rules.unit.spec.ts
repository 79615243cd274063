import type { BlockRefusalCode, BlockedClaim } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { judgeBlockedClaim, preferenceIn, type BlockedClaimFacts, type BlockedJudgment } from './blocked-claim.rules.js';
import { LEGAL_BLOCK } from './claims.fixtures.js';

const FACTS: BlockedClaimFacts = { taskStatus: 'running', attemptsInFlight: 1 };

function codes(judgment: BlockedJudgment): BlockRefusalCode[] {
  return judgment.verdict === 'refused' ? judgment.refusals.map((r) => r.code as BlockRefusalCode) : [];
}

describe('judgeBlockedClaim: legal blocks', () => {
  it.each([
    ['credential_missing', 'credential', 'The deploy token is missing; which vault entry holds it?'],
    ['destructive_op_outside_scope', 'destructive_op', 'Dropping the legacy table is outside my scope: may it be dropped?'],
    ['scope_expansion', 'scope_expansion', 'The fix needs src/config.ts, which is not in files_owned.'],
    ['semantic_ambiguity', null, 'The spec says "retry twice" and "retry three times" in two places; which is meant?'],
  ] as const)('given a genuine %s block with a fallback in flight, when judged, then it is accepted', (reason, human, question) => {
    const claim: BlockedClaim = { ...LEGAL_BLOCK, reason, human_required_for: human, question };
    expect(judgeBlockedClaim(claim, FACTS)).toEqual({ verdict: 'accepted' });
  });

  it('given a fallback named by its request, which has already succeeded, when judged, then it is accepted', () => {
    expect(judgeBlockedClaim({ ...LEGAL_BLOCK, fallback_action_request_id: 'ar-1' }, { ...FACTS, attemptsInFlight: 0, fallbackRequest: 'succeeded' })).toEqual({ verdict: 'accepted' });
  });
});

// Seed 003, "Legal vs illegal blocks" (a), (b), (c), its three illegal examples and the four no-idle-wait violation phrases: one case each.
describe('judgeBlockedClaim: every illegal block is refused with its code', () => {
  const cases: ReadonlyArray<{ readonly note: string; readonly claim: Partial<BlockedClaim>; readonly facts?: Partial<BlockedClaimFacts>; readonly want: BlockRefusalCode }> = [
    { note: '(a) a reason that is not a genuine block', claim: { reason: 'preference' }, want: 'BLOCK_NOT_GENUINE' },
    { note: '(a) illegal example 1: "I\'d like to confirm before proceeding."', claim: { question: "I'd like to confirm before proceeding." }, want: 'BLOCK_PREFERENCE' },
    { note: '(a) illegal example 2: "Three options exist, which would you prefer?"', claim: { question: 'Three options exist, which would you prefer?' }, want: 'BLOCK_PREFERENCE' },
    { note: '(a) illegal example 3: "I want the user to validate the approach before I code."', claim: { question: 'I want the user to validate the approach before I code.' }, want: 'BLOCK_PREFERENCE' },
    { note: 'violation phrase "Which path should I take?"', claim: { question: 'Which path should I take?' }, want: 'BLOCK_PREFERENCE' },
    { note: 'violation phrase "Should I proceed?"', claim: { question: 'Should I proceed?' }, want: 'BLOCK_PREFERENCE' },
    { note: 'violation phrase "Awaiting confirmation"', claim: { question: 'Awaiting confirmation' }, want: 'BLOCK_PREFERENCE' },
    { note: 'violation phrase "Confirm before I continue"', claim: { question: 'Confirm before I continue' }, want: 'BLOCK_PREFERENCE' },
    { note: 'an empty question', claim: { question: '   ' }, want: 'BLOCK_QUESTION_MISSING' },
    { note: '(b) no fallback_action', claim: { fallback_action: '' }, want: 'BLOCK_NO_FALLBACK' },
    { note: '(b) a fallback that only waits', claim: { fallback_action: 'Awaiting the answer.' }, want: 'BLOCK_NO_FALLBACK' },
    { note: '(b) a fallback stated, but no action of the task in flight', claim: {}, facts: { attemptsInFlight: 0 }, want: 'BLOCK_FALLBACK_NOT_EXECUTING' },
    { note: '(b) the named fallback request failed', claim: { fallback_action_request_id: 'ar-9' }, facts: { fallbackRequest: 'ended' }, want: 'BLOCK_FALLBACK_NOT_EXECUTING' },
    { note: '(b) the named fallback request is not one of the task', claim: { fallback_action_request_id: 'ar-9' }, facts: { fallbackRequest: 'unknown' }, want: 'BLOCK_FALLBACK_NOT_EXECUTING' },
    { note: '(c) can_resume_without_answer false: an idle wait', claim: { can_resume_without_answer: false }, want: 'BLOCK_CANNOT_RESUME' },
    { note: 'a block on a completed task', claim: {}, facts: { taskStatus: 'completed' }, want: 'BLOCK_TASK_ENDED' },
  ];

  it.each(cases)('given $note, when judged, then it is refused $want', ({ claim, facts, want }) => {
    expect(codes(judgeBlockedClaim({ ...LEGAL_BLOCK, ...claim }, { ...FACTS, ...facts }))).toEqual([want]);
  });

  it('given a preference with no fallback that cannot resume, when judged, then every broken rule is listed', () => {
    const judgment = judgeBlockedClaim({ ...LEGAL_BLOCK, reason: 'preference', question: 'Should I proceed?', fallback_action: '', can_resume_without_answer: false }, { ...FACTS, attemptsInFlight: 0 });
    expect(codes(judgment).sort()).toEqual(['BLOCK_CANNOT_RESUME', 'BLOCK_FALLBACK_NOT_EXECUTING', 'BLOCK_NOT_GENUINE', 'BLOCK_NO_FALLBACK', 'BLOCK_PREFERENCE']);
  });

  it('given genuine questions that mention options or confirmation in passing, when checked, then they are not preferences', () => {
    expect(preferenceIn('The staging API key is missing from the vault; which key may the integration test use?')).toBeUndefined();
    expect(preferenceIn('Dropping the legacy table is outside my scope: may it be dropped?')).toBeUndefined();
    expect(preferenceIn('The confirmation email template is missing; where is it kept?')).toBeUndefined();
  });
});
