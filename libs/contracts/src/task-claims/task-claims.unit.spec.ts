import { describe, expect, it } from 'vitest';
import { actionRequestWithNewTask, blockedClaim, brief, doneClaim } from '../../test/samples.js';
import { issuesOf, pathsOf } from '../../test/issues.js';
import { BRIEF_SECTIONS, parseActionRequest, safeParseActionRequest } from '../index.js';

describe('Brief (seed 003 brief.json)', () => {
  it('given a brief without any section, when parsed, then every section is listed, once each', () => {
    // when
    const result = issuesOf('Brief', {});
    // then
    expect(result.map((issue) => issue.path).sort()).toEqual([...BRIEF_SECTIONS].sort());
  });

  it('given a brief missing spec.scope.files_owned and verify_command, when parsed, then both paths are listed', () => {
    // given
    const { verify_command: _argv, ...rest } = brief;
    // when / then
    expect(pathsOf('Brief', { ...rest, spec: { scope: {} } })).toEqual(['spec.scope.files_owned', 'verify_command']);
  });

  it('given empty list and text sections, when parsed, then the brief is accepted (empty is allowed, absent is not)', () => {
    expect(pathsOf('Brief', { ...brief, purpose: '', current_task: '', whats_done: [], key_decisions: [], relevant_memories: [], audit_gates: [], context: {} })).toEqual([]);
  });

  it('given a mission of 201 characters, when parsed, then it is refused (decompose the mission)', () => {
    expect(pathsOf('Brief', { ...brief, mission: 'm'.repeat(201) })).toEqual(['mission']);
    expect(pathsOf('Brief', { ...brief, mission: 'm'.repeat(200) })).toEqual([]);
  });

  it('given an empty mission, done criteria or verify command, when parsed, then each is refused', () => {
    expect(pathsOf('Brief', { ...brief, mission: '', done_criteria: '', verify_command: [] })).toEqual(['done_criteria', 'mission', 'verify_command']);
    expect(pathsOf('Brief', { ...brief, verify_command: [''] })).toEqual(['verify_command']);
  });

  it('given a verify command as a shell string, when parsed, then it is refused: argv only', () => {
    expect(pathsOf('Brief', { ...brief, verify_command: 'npm test' })).toEqual(['verify_command']);
  });
});

describe('TaskSpec.brief', () => {
  const withBrief = { ...actionRequestWithNewTask, task: { ...actionRequestWithNewTask.task, files_owned: ['src/retry/**'], brief } };

  it('given a new task with a brief whose scope equals files_owned, when parsed, then it is accepted', () => {
    expect(parseActionRequest(withBrief).task?.brief?.id).toBe('brief-01');
  });

  it("given files_owned other than the brief's scope, when parsed, then task.files_owned is refused", () => {
    const result = safeParseActionRequest({ ...withBrief, task: { ...withBrief.task, files_owned: ['**'] } });
    expect(result.ok ? [] : result.error.issues.map((issue) => issue.path)).toEqual(['task.files_owned']);
  });
});

describe('DoneClaim and BlockedClaim', () => {
  it('given a done claim that finished before it started, when parsed, then finished_at is refused', () => {
    expect(pathsOf('DoneClaim', { ...doneClaim, finished_at: '2026-01-15T09:00:00Z' })).toEqual(['finished_at']);
  });

  it('given a done claim with an unknown status, when parsed, then status is refused', () => {
    expect(pathsOf('DoneClaim', { ...doneClaim, status: 'done_with_concerns' })).toEqual(['status']);
  });

  it('given an illegal block (not resumable, no fallback), when parsed, then the contract still takes it: legality is judged with codes', () => {
    expect(pathsOf('BlockedClaim', { ...blockedClaim, can_resume_without_answer: false, fallback_action: '', reason: 'preference' })).toEqual([]);
  });
});
