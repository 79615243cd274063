import { DEFAULT_KNOWLEDGE_LIMITS, hasErrorCode, type KnowledgeLimits, type WorkingStateEntry } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { meta } from '../../test/decider-spec.js';
import { BUILTIN_POLICY_DOCUMENTS, knowledgeLimitsOf, parsePolicyDocument, type PolicyDocumentIssue } from '../policy/policy-profile.js';
import { fold } from '../shared/decider.js';
import { knowledgeLimitsInForce } from './context-inputs.js';
import { workingStateDecider } from './working-state.decider.js';

/**
 * Knowledge limits as policy profile data (issue 17; Hermit 6.3.2, 15.6): the profile's
 * optional `knowledge` section, bounded, defaulted; what a verdict records and the task's
 * log holds in force; the working state refusing past the limits it was opened with.
 */

const document = (knowledge?: unknown) => ({ ...BUILTIN_POLICY_DOCUMENTS.local_edit_allowed, id: 'team', ...(knowledge === undefined ? {} : { knowledge }) });

function issuesOf(input: unknown): PolicyDocumentIssue[] {
  try {
    parsePolicyDocument(input);
  } catch (error) {
    expect(hasErrorCode(error, 'POLICY_PROFILE_INVALID')).toBe(true);
    return (error as { details: { issues: PolicyDocumentIssue[] } }).details.issues;
  }
  throw new Error('expected POLICY_PROFILE_INVALID');
}

const verdict = (knowledge?: KnowledgeLimits) => ({ event_type: 'policy.evaluated', payload: { knowledge } as Record<string, unknown> });

describe('the knowledge section of a policy profile', () => {
  it('given no section, then the document keeps no knowledge key (its version unchanged) and its limits are the defaults', () => {
    const parsed = parsePolicyDocument(document());
    expect(parsed).not.toHaveProperty('knowledge');
    expect(knowledgeLimitsOf(parsed)).toEqual(DEFAULT_KNOWLEDGE_LIMITS);
    expect(DEFAULT_KNOWLEDGE_LIMITS).toEqual({
      working_state: { max_entries: 64, max_entry_bytes: 4_096, max_total_bytes: 65_536 },
      context_pack: { max_items: 128, max_bytes: 65_536, allow_secret_references: false },
    });
  });

  it('given a partial section, then the fields left out take the defaults', () => {
    const parsed = parsePolicyDocument(document({ working_state: { max_entries: 8 }, context_pack: { max_bytes: 2_048, include_session: true } }));
    expect(knowledgeLimitsOf(parsed)).toEqual({
      working_state: { max_entries: 8, max_entry_bytes: 4_096, max_total_bytes: 65_536 },
      context_pack: { max_items: 128, max_bytes: 2_048, allow_secret_references: false, include_session: true },
    });
    expect(knowledgeLimitsOf(parsePolicyDocument(document({})))).toEqual(DEFAULT_KNOWLEDGE_LIMITS);
  });

  it.each([
    ['zero entries', { working_state: { max_entries: 0 } }, 'knowledge.working_state.max_entries'],
    ['entries past the ceiling', { working_state: { max_entries: 1_025 } }, 'knowledge.working_state.max_entries'],
    ['a total past the ceiling', { working_state: { max_total_bytes: 1_048_577 } }, 'knowledge.working_state.max_total_bytes'],
    ['an entry larger than the total (given)', { working_state: { max_entry_bytes: 2_048, max_total_bytes: 1_024 } }, 'knowledge.working_state.max_entry_bytes'],
    ['an entry larger than the total (by default)', { working_state: { max_total_bytes: 1_024 } }, 'knowledge.working_state.max_entry_bytes'],
    ['a pack under 256 bytes', { context_pack: { max_bytes: 100 } }, 'knowledge.context_pack.max_bytes'],
    ['a pack of more than 4096 items', { context_pack: { max_items: 5_000 } }, 'knowledge.context_pack.max_items'],
    ['secret references as a string', { context_pack: { allow_secret_references: 'yes' } }, 'knowledge.context_pack.allow_secret_references'],
    ['an unknown key', { memory: {} }, 'knowledge.memory'],
  ])('given %s, then POLICY_PROFILE_INVALID at its path', (_note, knowledge, path) => {
    expect(issuesOf(document(knowledge)).map((issue) => issue.path)).toContain(path);
  });
});

describe('the knowledge limits in force for a task (from its log)', () => {
  const small: KnowledgeLimits = { working_state: { max_entries: 2, max_entry_bytes: 256, max_total_bytes: 512 }, context_pack: { max_items: 4, max_bytes: 1_024, allow_secret_references: false } };
  const large: KnowledgeLimits = { ...small, working_state: { max_entries: 100, max_entry_bytes: 1_024, max_total_bytes: 8_192 } };

  it('given no verdict, or verdicts without knowledge, then the defaults; given verdicts, then the latest that carries them', () => {
    expect(knowledgeLimitsInForce([])).toEqual(DEFAULT_KNOWLEDGE_LIMITS);
    expect(knowledgeLimitsInForce([verdict()])).toEqual(DEFAULT_KNOWLEDGE_LIMITS);
    expect(knowledgeLimitsInForce([verdict(small), verdict(large), verdict()])).toEqual(large);
  });

  it('given a verdict with malformed knowledge (past the ceilings), then it is not in force', () => {
    const forged = { event_type: 'policy.evaluated', payload: { knowledge: { ...small, working_state: { max_entries: 1_000_000, max_entry_bytes: 256, max_total_bytes: 512 } } } };
    expect(knowledgeLimitsInForce([verdict(small), forged])).toEqual(small);
  });

  it('given a working state opened with the small limits in force, when a revision passes them, then KNOWLEDGE_WORKING_STATE_TOO_LARGE with the limit named, and a later profile does not change the opened limits', () => {
    const entry = (key: string): WorkingStateEntry => ({ key, kind: 'objective', value: key });
    const opened = workingStateDecider.decide({ type: 'open-working-state', data: { task_id: 'task-1', limits: knowledgeLimitsInForce([verdict(small)]).working_state }, metadata: meta(0) }, workingStateDecider.initialState());
    const state = fold(workingStateDecider, opened);
    const revise = (keys: string[]) =>
      workingStateDecider.decide(
        { type: 'revise-working-state', data: { task_id: 'task-1', request_id: 'r-1', revised_by: 'agent-1', expected_revision: 0, set: keys.map(entry), remove: [] }, metadata: meta(1) },
        state,
      );
    expect(revise(['a', 'b'])).toHaveLength(1);
    try {
      revise(['a', 'b', 'c']);
      throw new Error('expected a refusal');
    } catch (error) {
      expect(error).toMatchObject({ code: 'KNOWLEDGE_WORKING_STATE_TOO_LARGE', details: { limit: 'max_entries', allowed: 2, actual: 3 } });
    }
    expect(state).toMatchObject({ status: 'open', limits: small.working_state });
  });
});
