import { describe, expect, it } from 'vitest';
import { approval, artifact, evidenceRef, ingressRecord, policyResult, stepAttempt, task } from '../test/samples.js';
import { issuesOf, pathsOf } from '../test/issues.js';
import { KNOWN_ARTIFACT_KINDS, Name, TaskStatus } from './index.js';

describe('Approval', () => {
  it('given a pending approval that names a resolver, when parsed, then resolved_at and resolved_by are offending', () => {
    const input = { ...approval, resolved_at: '2026-01-15T10:01:00Z', resolved_by: 'user-1' };
    expect(issuesOf('Approval', input)).toEqual([
      { path: 'resolved_at', code: 'custom' },
      { path: 'resolved_by', code: 'custom' },
    ]);
  });

  it.each(['granted', 'denied', 'expired', 'cancelled', 'invalidated'])('given a %s approval without resolver, when parsed, then both resolution fields are offending', (status) => {
    expect(pathsOf('Approval', { ...approval, status })).toEqual(['resolved_at', 'resolved_by']);
  });

  it('given a granted approval with its resolver, when parsed, then it is accepted', () => {
    expect(issuesOf('Approval', { ...approval, status: 'granted', resolved_at: '2026-01-15T10:01:00Z', resolved_by: 'user-1' })).toEqual([]);
  });
});

describe('PolicyResult', () => {
  it('given a downgrade without what it downgrades to, when parsed, then downgrade is the offending path', () => {
    expect(issuesOf('PolicyResult', { ...policyResult, outcome: 'downgrade' })).toEqual([{ path: 'downgrade', code: 'custom' }]);
  });

  it('given a downgrade with neither a rewritten request nor a restricted mode, when parsed, then downgrade.restricted_mode is offending', () => {
    const input = { ...policyResult, outcome: 'downgrade', downgrade: { summary: 'network_write downgraded' } };
    expect(issuesOf('PolicyResult', input)).toEqual([{ path: 'downgrade.restricted_mode', code: 'custom' }]);
  });

  it('given a downgrade to readonly, when parsed, then it is accepted', () => {
    const input = { ...policyResult, outcome: 'downgrade', downgrade: { restricted_mode: 'readonly', summary: 'write downgraded to inspection' } };
    expect(issuesOf('PolicyResult', input)).toEqual([]);
  });

  it('given an allow that carries a downgrade, when parsed, then downgrade is the offending path', () => {
    const input = { ...policyResult, downgrade: { restricted_mode: 'readonly', summary: 's' } };
    expect(issuesOf('PolicyResult', input)).toEqual([{ path: 'downgrade', code: 'custom' }]);
  });

  it.each(['allow', 'require_approval', 'deny', 'downgrade'])('given outcome %s, then it is one of the four policy results', (outcome) => {
    expect(pathsOf('PolicyResult', { ...policyResult, outcome })).not.toContain('outcome');
  });

  it('given an outcome outside 16.5, when parsed, then outcome is the offending path', () => {
    expect(issuesOf('PolicyResult', { ...policyResult, outcome: 'maybe' })).toEqual([{ path: 'outcome', code: 'invalid_value' }]);
  });
});

describe('IngressRecord', () => {
  it('given a bound record without resolution, when parsed, then resolution is offending', () => {
    expect(issuesOf('IngressRecord', { ...ingressRecord, resolution: null })).toEqual([{ path: 'resolution', code: 'custom' }]);
  });

  it('given a rejected record without a rejection code, when parsed, then rejection_code is offending', () => {
    expect(issuesOf('IngressRecord', { ...ingressRecord, status: 'rejected', resolution: null })).toEqual([{ path: 'rejection_code', code: 'custom' }]);
  });

  it('given a received record awaiting disambiguation, when parsed, then it is accepted (ambiguity is legal)', () => {
    expect(issuesOf('IngressRecord', { ...ingressRecord, status: 'received', resolution: 'pending_disambiguation' })).toEqual([]);
  });
});

describe('EvidenceRef', () => {
  it.each([
    { kind: 'byte_range', start: 0, end: 10 },
    { kind: 'line_range', start: 3, end: 3 },
    { kind: 'json_path', path: '$.items[0].id' },
    { kind: 'dom_selector', selector: 'main > h1' },
    { kind: 'timestamp_span', start: '2026-01-15T10:00:00+02:00', end: '2026-01-15T09:00:00Z' },
    { kind: 'record_id', record_id: 'row-17' },
  ])('given a $kind selector, when parsed, then it is accepted', (selector) => {
    expect(issuesOf('EvidenceRef', { ...evidenceRef, selector })).toEqual([]);
  });

  it.each([
    [{ kind: 'line_range', start: 5, end: 4 }, 'selector.end'],
    [{ kind: 'timestamp_span', start: '2026-01-15T10:00:00Z', end: '2026-01-15T11:00:00+02:00' }, 'selector.end'],
    [{ kind: 'line_range', start: 0, end: 4 }, 'selector.start'],
    [{ kind: 'xpath', path: '//a' }, 'selector.kind'],
  ])('given selector %j, when parsed, then %s is offending', (selector, want) => {
    expect(pathsOf('EvidenceRef', { ...evidenceRef, selector })).toEqual([want]);
  });

  it('given a confidence above 1, when parsed, then confidence is offending', () => {
    expect(issuesOf('EvidenceRef', { ...evidenceRef, confidence: 1.5 })).toEqual([{ path: 'confidence', code: 'too_big' }]);
  });
});

describe('Task, StepAttempt, Artifact', () => {
  it('given a task status outside 12.1, when parsed, then status is offending', () => {
    expect(TaskStatus.options).not.toContain('archived');
    expect(issuesOf('Task', { ...task, status: 'archived' })).toEqual([{ path: 'status', code: 'invalid_value' }]);
  });

  it('given a fresh attempt, when parsed, then not-yet-known minimum fields are null rather than absent', () => {
    const fresh = { ...stepAttempt, status: 'created', context_pack_ref: null, workspace_lease_ref: null, started_at: null };
    expect(issuesOf('StepAttempt', fresh)).toEqual([]);
    const { finished_at: _omitted, ...absent } = fresh;
    expect(pathsOf('StepAttempt', absent)).toEqual(['finished_at']);
  });

  it('given attempt_no 0, when parsed, then attempt_no is offending', () => {
    expect(pathsOf('StepAttempt', { ...stepAttempt, attempt_no: 0 })).toEqual(['attempt_no']);
  });

  it('given every kind the spec suggests, then each is a valid artifact kind name', () => {
    for (const kind of KNOWN_ARTIFACT_KINDS) expect(Name.safeParse(kind).success, kind).toBe(true);
  });

  it('given an artifact with a negative size and a bad media type, when parsed, then both are listed', () => {
    expect(pathsOf('Artifact', { ...artifact, byte_size: -1, media_type: 'text' })).toEqual(['byte_size', 'media_type']);
  });

  it('given a ref with whitespace, when parsed, then the ref is offending', () => {
    expect(pathsOf('Task', { ...task, task_contract_ref: 'artifact: x' })).toEqual(['task_contract_ref']);
  });
});
