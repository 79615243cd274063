import { DEFAULT_KNOWLEDGE_LIMITS, PolicyEvaluated, type ActionRequest, type EvaluatePolicy, type EventEnvelope, type PolicyOutcome } from '@writ/contracts';
import { attemptDecider, fold } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import { participantSnapshot } from '../../test/participant-fixtures.js';
import { builtinCatalog, builtinVersion, recordOf, teamDocument } from '../../test/profiles.js';
import { ProfileCatalog } from './profile-catalog.js';
import { commandRequest, evaluateCommandFor, ingressDrafts, reenteredDraft, taskIds, writeRequest, type TaskIds } from '../../test/task-fixtures.js';
import { foldAttemptPolicy } from './evaluate-policy.handler.js';
import { evaluateCommand } from './policy-evaluation.js';

const META = { policy_result_id: 'pr-1', decision_id: 'dec-1', now: '2030-01-01T00:00:05.000Z', evaluated_by: 'writ-policy' };
const ids: TaskIds = taskIds('unit');
const PROFILES = builtinCatalog();

interface Case {
  readonly note: string;
  readonly request: ActionRequest;
  readonly profile: string;
  readonly filesOwned?: string[];
  readonly want: { outcome: PolicyOutcome; rules: string[]; witness?: boolean };
}

const ECHO = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
const RM = commandRequest(ids, ['rm', '-rf', 'build']);
const WRITE = writeRequest(ids);

// Policy cases as a table (STYLE.md): note, input, want.
const CASES: Case[] = [
  { note: 'a plain command inside files_owned is allowed', request: ECHO, profile: 'local_edit_allowed', want: { outcome: 'allow', rules: ['action_class_allowed'] } },
  {
    note: 'rm -rf needs approval under local_edit_allowed, with a state witness',
    request: RM,
    profile: 'local_edit_allowed',
    want: { outcome: 'require_approval', rules: ['destructive_command'], witness: true },
  },
  { note: 'rm -rf is denied outright under destructive_denied', request: RM, profile: 'destructive_denied', want: { outcome: 'deny', rules: ['destructive_command'] } },
  { note: 'a write under readonly_analysis is downgraded to a read', request: WRITE, profile: 'readonly_analysis', want: { outcome: 'downgrade', rules: ['action_class_downgraded'] } },
  { note: 'a command under readonly_analysis is not permitted (deny by default)', request: ECHO, profile: 'readonly_analysis', want: { outcome: 'deny', rules: ['action_class_not_permitted'] } },
  { note: 'an unknown profile is a recorded deny, not a crash', request: ECHO, profile: 'no_such_profile', want: { outcome: 'deny', rules: ['policy_profile_unknown'] } },
  {
    note: 'files_owned reaching outside the workspace is a recorded deny',
    request: ECHO,
    profile: 'local_edit_allowed',
    filesOwned: ['../elsewhere/**'],
    want: { outcome: 'deny', rules: ['policy_facts_invalid'] },
  },
];

describe('evaluateCommand', () => {
  it.each(CASES)('$note', ({ request, profile, filesOwned, want }) => {
    const command: EvaluatePolicy = evaluateCommandFor(ids, request, profile, filesOwned);
    const evaluated = evaluateCommand(command, request, META, PROFILES);
    expect(PolicyEvaluated.safeParse(evaluated).success).toBe(true);
    const result = evaluated.policy_result;
    expect(result.outcome).toBe(want.outcome);
    expect(result.matched_rules).toEqual(want.rules);
    expect(result.witness_required).toBe(want.witness ?? false);
    expect(result).toMatchObject({ ...ids, action_request_id: request.action_request_id, policy_result_id: 'pr-1', evaluated_by: 'writ-policy', evaluated_at: META.now });
    expect(evaluated.decision).toMatchObject({
      decision_id: 'dec-1',
      ...ids,
      decision_type: 'safety',
      decided_by: 'writ-policy',
      risk_level: result.risk_band,
      rationale: result.reasoning_summary,
      evidence_refs: [],
      created_at: META.now,
    });
  });

  it('given a downgrade, then the result references the rewritten request and its restricted mode', () => {
    const result = evaluateCommand(evaluateCommandFor(ids, WRITE), WRITE, META, PROFILES).policy_result;
    expect(result.downgrade).toEqual({
      rewritten_action_request_ref: `action_request:${WRITE.action_request_id}-dg`,
      restricted_mode: 'readonly',
      summary: 'write_local downgraded to read_local in readonly mode',
    });
  });

  it('given an unknown profile, then the deny names POLICY_PROFILE_UNKNOWN and no profile version', () => {
    const result = evaluateCommand(evaluateCommandFor(ids, ECHO, 'no such profile'), ECHO, META, PROFILES).policy_result;
    expect(result.reasoning_summary).toContain('POLICY_PROFILE_UNKNOWN');
    expect(result).toMatchObject({ policy_version: 'unknown', policy_profile_ref: 'no_such_profile@unknown' });
  });

  it('given a known profile, then the result records its content version', () => {
    const version = builtinVersion('local_edit_allowed');
    expect(version).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(evaluateCommand(evaluateCommandFor(ids, ECHO), ECHO, META, PROFILES).policy_result).toMatchObject({ policy_profile_ref: `local_edit_allowed@${version}`, policy_version: version });
  });

  it('given a downgrade, then the event carries the rewritten request the result references', () => {
    const evaluated = evaluateCommand(evaluateCommandFor(ids, WRITE), WRITE, META, PROFILES);
    expect(evaluated.rewritten_action_request).toMatchObject({ action_request_id: `${WRITE.action_request_id}-dg`, action_class: 'read_local', target_resources: ['notes.txt'] });
    expect(evaluated.policy_result.downgrade?.rewritten_action_request_ref).toBe(`action_request:${evaluated.rewritten_action_request?.action_request_id}`);
  });

  it('given no downgrade, then the event carries no rewritten request', () => {
    expect(evaluateCommand(evaluateCommandFor(ids, ECHO), ECHO, META, PROFILES).rewritten_action_request).toBeUndefined();
  });
});

describe('foldAttemptPolicy', () => {
  const logged = (drafts: ReturnType<typeof ingressDrafts>): EventEnvelope[] =>
    drafts.map((d, i) => ({ ...d, task_id: ids.task_id, task_seq: i + 1, prev_event_hash: null, hash: 'a'.repeat(64) }));

  it('given an attempt awaiting policy, then its entry is the awaiting_policy event and nothing is evaluated yet', () => {
    const events = logged(ingressDrafts(ids, ECHO));
    const folded = foldAttemptPolicy(events, ids.attempt_id);
    expect(folded.state.status).toBe('awaiting_policy');
    expect(folded.entry?.event_type).toBe('attempt.awaiting_policy');
    expect(folded.evaluated).toBeNull();
  });

  it('given an evaluation and then a policy re-entry, then the new entry is not evaluated yet', () => {
    const drafts = ingressDrafts(ids, ECHO);
    const attemptEvents = drafts.filter((d) => d.entity_type === 'attempt').map((d) => ({ type: d.event_type, data: d.payload }));
    const awaiting = fold(attemptDecider, attemptEvents);
    const policy = { policy_result_id: 'pr-1', outcome: 'allow' as const, risk_band: 'moderate' as const, profile_id: 'local_edit_allowed', policy_version: '1', witness_required: false };
    const [authorized] = attemptDecider.decide({ type: 'record-policy-result', data: { policy }, metadata: { now: META.now } }, awaiting);
    const evaluated = { ...drafts[drafts.length - 1]!, event_id: 'pol-1', event_type: 'policy.evaluated', entity_type: 'decision' as const, payload: { policy_result: { attempt_id: ids.attempt_id } } };
    const authorizedDraft = { ...drafts[drafts.length - 1]!, event_id: 'orc-1', event_type: authorized!.type, payload: authorized!.data as Record<string, unknown> };
    const after = fold(attemptDecider, [...attemptEvents, authorized]);
    const reentered = reenteredDraft(ids, after);

    const firstEntry = foldAttemptPolicy(logged([...drafts, evaluated]), ids.attempt_id);
    expect(firstEntry.evaluated?.event_id).toBe('pol-1');
    const secondEntry = foldAttemptPolicy(logged([...drafts, evaluated, authorizedDraft, reentered]), ids.attempt_id);
    expect(secondEntry.state).toMatchObject({ status: 'awaiting_policy', policy_entries: 2 });
    expect(secondEntry.entry?.event_type).toBe('attempt.policy_reentered');
    expect(secondEntry.evaluated).toBeNull();
  });
});

describe('evaluateCommand for a participant (a spawned seed)', () => {
  const now = () => ({ ...META, now: new Date().toISOString() });

  it('given an action outside its manifest that the profile allows, then a deny led by the participant code, naming the scope version', async () => {
    const { participant, snapshot } = await participantSnapshot();
    const request = { ...ECHO, proposed_by: participant.seedId };
    const evaluated = evaluateCommand(evaluateCommandFor(ids, request), request, now(), PROFILES, { snapshot, calls: 0 });
    expect(PolicyEvaluated.parse(evaluated).policy_result).toMatchObject({
      outcome: 'deny',
      matched_rules: ['participant_command_denied'],
      participant_scope_ref: `participant:${participant.seedId}@${participant.manifestHash}`,
    });
    expect(evaluated.capability_scope).toBeDefined();
  });

  it('given its calls used up, then PARTICIPANT_LIMIT_EXCEEDED; one left, the profile decides', async () => {
    const { participant, snapshot } = await participantSnapshot({ resource_limits: { max_tokens: 10, max_calls: 3, max_wallclock_seconds: 3_600 } });
    const request = { ...commandRequest(ids, ['ls', 'docs']), target_resources: ['docs/'], proposed_by: participant.seedId };
    const at = (calls: number) => evaluateCommand(evaluateCommandFor(ids, request), request, now(), PROFILES, { snapshot, calls }).policy_result;
    expect(at(2)).toMatchObject({ outcome: 'allow', matched_rules: ['participant_scope_allowed', 'action_class_allowed'] });
    expect(at(3)).toMatchObject({ outcome: 'deny', matched_rules: ['participant_limit_exceeded'] });
  });

  it('given a profile the store does not hold, then the recorded deny still names the participant scope', async () => {
    const { participant, snapshot } = await participantSnapshot();
    const request = { ...ECHO, proposed_by: participant.seedId };
    const evaluated = evaluateCommand(evaluateCommandFor(ids, request, 'no_such_profile'), request, now(), PROFILES, { snapshot, calls: 0 });
    expect(evaluated.policy_result).toMatchObject({ outcome: 'deny', matched_rules: ['policy_profile_unknown'], participant_scope_ref: `participant:${participant.seedId}@${participant.manifestHash}` });
  });
});

describe('evaluateCommand records the profile knowledge bounds (issue 17)', () => {
  it('given a profile with a knowledge section, then every verdict carries it with the defaults filled in; a built-in without one carries the defaults; an unknown profile none', () => {
    const knowledge = { working_state: { max_entries: 4, max_total_bytes: 8_192 }, context_pack: { max_items: 6, allow_secret_references: true } };
    const catalog = new ProfileCatalog({ trust: { verify: async () => undefined }, builtins: [recordOf(teamDocument({ knowledge }))] });
    const evaluated = evaluateCommand(evaluateCommandFor(ids, ECHO, 'team_profile'), ECHO, META, catalog);
    expect(PolicyEvaluated.parse(evaluated).knowledge).toEqual({
      working_state: { max_entries: 4, max_entry_bytes: 4_096, max_total_bytes: 8_192 },
      context_pack: { max_items: 6, max_bytes: 65_536, allow_secret_references: true },
    });
    expect(evaluateCommand(evaluateCommandFor(ids, ECHO, 'local_edit_allowed'), ECHO, META, PROFILES).knowledge).toEqual(DEFAULT_KNOWLEDGE_LIMITS);
    expect(evaluateCommand(evaluateCommandFor(ids, ECHO, 'no_such_profile'), ECHO, META, PROFILES).knowledge).toBeUndefined();
  });
});
