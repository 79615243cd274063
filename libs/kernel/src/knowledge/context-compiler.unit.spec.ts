import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Belief, MemoryRecord } from '@writ/contracts';
import { ContextSection } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { at, codeOf } from '../../test/decider-spec.js';
import { compileContextPack, type ContextCompileInput, type ContextPackCodec } from './context-compiler.js';

// The adapter passes @writ/crypto's canonicalJson and sha256Hex; the kernel's tests build the same pair from the same libraries.
const codec: ContextPackCodec = {
  canonicalJson: (value) => canonicalize(value) as string,
  sha256Hex: (text) => createHash('sha256').update(text, 'utf8').digest('hex'),
};

const CANARY = 'sk-CANARY-7f3a9c1e5b';
const belief = (id: string, over: Partial<Belief> = {}): Belief => ({
  belief_id: id,
  task_id: 'task-1',
  claim: `claim ${id}`,
  scope: 'repo:writ',
  evidence_refs: [{ kind: 'observation', id: `obs-${id}` }],
  confidence: 0.8,
  trust_tier: 'observed',
  status: 'active',
  created_at: at(0),
  asserted_by: 'agent-1',
  version: 1,
  ...over,
});
const memory = (id: string, over: Partial<MemoryRecord> = {}): MemoryRecord => ({
  memory_id: id,
  task_id: 'task-0',
  claim: `memory ${id}`,
  scope: 'repo:writ',
  evidence_refs: [{ kind: 'receipt', id: `rcpt-${id}` }],
  trust_tier: 'verified',
  promotion_reason: 'reused across tasks',
  source: { kind: 'belief', id: 'b-0' },
  invalidation_policy: { mode: 'manual' },
  retention_class: 'project',
  status: 'active',
  created_at: at(0),
  promoted_by: 'agent-0',
  policy_result_ref: 'policy_result:p-0',
  ...over,
});

const inputs = (over: Partial<ContextCompileInput> = {}): ContextCompileInput => ({
  task_id: 'task-1',
  attempt_id: 'attempt-1',
  as_of: at(100),
  task_contract: { ref: 'artifact:contract-1', content: { goal: 'make the build green' } },
  step_contract: { ref: 'artifact:step-1', content: { step: 'run the tests' } },
  policy_constraints: [{ ref: 'policy:local_edit_allowed', content: 'files_owned: src/**' }],
  decisions: [{ decision_id: 'dec-1', summary: 'use vitest' }],
  working_state: [
    { key: 'objective.main', kind: 'objective', value: 'green build' },
    { key: 'handle.deploy_token', kind: 'resource_handle', value: { secret_ref: 'vault:deploy/token' }, sensitivity: 'secret' },
  ],
  beliefs: [
    belief('b-obs'),
    belief('b-ver', { trust_tier: 'verified', evidence_refs: [{ kind: 'receipt', id: 'r-1' }], confidence: 0.6 }),
    belief('b-untrusted', { trust_tier: 'untrusted', evidence_refs: [] }),
    belief('b-revoked', { status: 'revoked' }),
    belief('b-expiring', { expires_at: at(50) }),
    belief('b-secret', { claim: 'the deploy token is rotated daily', structured_assertion: { secret_ref: 'vault:deploy/token-rotation' }, sensitivity: 'secret' }),
  ],
  memory: [memory('m-1'), memory('m-old', { status: 'invalidated' })],
  artifacts: [
    { artifact_id: 'art-log', kind: 'command.transcript', content_hash: 'a'.repeat(64), sensitivity_class: 'internal', summary: '3 tests failed' },
    { artifact_id: 'art-env', kind: 'environment.snapshot', content_hash: 'b'.repeat(64), sensitivity_class: 'secret', summary: `TOKEN=${CANARY}` },
  ],
  ingress_deltas: [{ ingress_id: 'in-2', at: at(90), text: 'also fix the lint' }],
  focus: { task_id: 'task-1', summary: 'the build task' },
  session: [{ ref: 'msg-1', seq: 1, content: 'hello' }],
  profile: { max_items: 64, max_bytes: 65_536, allow_secret_references: false },
  ...over,
});

const reverse = <T>(list: readonly T[] | undefined) => (list === undefined ? undefined : [...list].reverse());

describe('context compiler (Hermit 15.6, 15.7)', () => {
  it('given the inputs, then items come in the 15.7 precedence: contracts, policy, decisions, working state, beliefs, memory, artifacts, ingress and focus', () => {
    const { pack } = compileContextPack(inputs(), codec);
    const order = ContextSection.options;
    const sections = pack.items.map((item) => item.section);
    expect(sections.map((s) => order.indexOf(s))).toEqual([...sections.map((s) => order.indexOf(s))].sort((a, b) => a - b));
    expect([...new Set(sections)]).toEqual(['task_contract', 'step_contract', 'policy_constraints', 'decisions', 'working_state', 'beliefs', 'memory', 'artifacts', 'ingress_and_focus']);
    // Inside beliefs: the most trusted first.
    expect(pack.items.filter((i) => i.section === 'beliefs').map((i) => i.source.id)).toEqual(['b-ver', 'b-obs']);
  });

  it('given every item, then it traces to exactly one input id, and every left-out input is listed with why', () => {
    const { pack } = compileContextPack(inputs(), codec);
    const ids = [...pack.items, ...pack.omitted].map((entry) => `${entry.source.kind}:${entry.source.id}`).sort();
    expect(ids).toEqual(
      [
        'task_contract:artifact:contract-1', 'step_contract:artifact:step-1', 'policy:policy:local_edit_allowed', 'decision:dec-1',
        'working_state_entry:objective.main', 'working_state_entry:handle.deploy_token',
        'belief:b-obs', 'belief:b-ver', 'belief:b-untrusted', 'belief:b-revoked', 'belief:b-expiring', 'belief:b-secret',
        'memory:m-1', 'memory:m-old', 'artifact:art-log', 'artifact:art-env', 'ingress:in-2', 'focus:task-1', 'session:msg-1',
      ].sort(),
    );
    expect(Object.fromEntries(pack.omitted.map((o) => [o.source.id, o.reason]))).toEqual({
      'handle.deploy_token': 'SECRET_EXCLUDED',
      'b-untrusted': 'TRUST_TIER_BARRED_FROM_PLANNING',
      'b-revoked': 'BELIEF_NOT_ACTIVE',
      'b-expiring': 'BELIEF_EXPIRED',
      'b-secret': 'SECRET_EXCLUDED',
      'm-old': 'MEMORY_NOT_ACTIVE',
      'art-env': 'SECRET_EXCLUDED',
      'msg-1': 'SESSION_NOT_REQUESTED',
    });
  });

  it('given the same inputs in another order, then byte-identical packs with the same content hash, stored content-addressed', () => {
    const a = compileContextPack(inputs(), codec);
    const given = inputs();
    const shuffled = inputs({
      policy_constraints: reverse(given.policy_constraints),
      working_state: reverse(given.working_state),
      beliefs: reverse(given.beliefs),
      memory: reverse(given.memory),
      artifacts: reverse(given.artifacts),
    });
    const b = compileContextPack(shuffled, codec);
    expect(b.bytes).toBe(a.bytes);
    expect(b.content_hash).toBe(a.content_hash);
    expect(a.content_hash).toBe(`sha256:${createHash('sha256').update(a.bytes).digest('hex')}`);
    expect(a.uri).toBe(`cas://sha256/${a.content_hash.slice('sha256:'.length)}`);
    expect(JSON.parse(a.bytes)).toEqual(a.pack);
  });

  it('given secret knowledge held by reference and a secret canary in an artifact summary, then the pack leaves them out, or names each by its secret_ref, never by value', () => {
    const excluded = compileContextPack(inputs(), codec);
    expect(excluded.bytes).not.toContain(CANARY);
    expect(excluded.bytes).not.toContain('vault:deploy/token');
    expect(excluded.pack.secrets).toBe('excluded');
    const byReference = compileContextPack(inputs({ profile: { max_items: 64, max_bytes: 65_536, allow_secret_references: true } }), codec);
    expect(byReference.bytes).not.toContain(CANARY);
    expect(byReference.pack.secrets).toBe('by_reference');
    // A working state entry and a belief are named by the reference they hold; an artifact, holding none, by its source.
    expect(byReference.pack.items.filter((i) => i.secret_ref !== undefined)).toEqual([
      { section: 'working_state', source: { kind: 'working_state_entry', id: 'handle.deploy_token' }, secret_ref: 'vault:deploy/token' },
      { section: 'beliefs', source: { kind: 'belief', id: 'b-secret' }, secret_ref: 'vault:deploy/token-rotation' },
      { section: 'artifacts', source: { kind: 'artifact', id: 'art-env' }, secret_ref: 'secret:artifact:art-env' },
    ]);
    expect(byReference.bytes).not.toContain('rotated daily');
  });

  it('given a secret entry holding a value instead of a reference (no fold of the log yields one), then a pack allowing references names it by its source, never by value', () => {
    const working_state = [{ key: 'handle.legacy', kind: 'resource_handle' as const, value: CANARY, sensitivity: 'secret' as const }];
    const { pack, bytes } = compileContextPack(inputs({ working_state, profile: { max_items: 64, max_bytes: 65_536, allow_secret_references: true } }), codec);
    expect(bytes).not.toContain(CANARY);
    expect(pack.items.find((i) => i.source.id === 'handle.legacy')).toEqual({
      section: 'working_state',
      source: { kind: 'working_state_entry', id: 'handle.legacy' },
      secret_ref: 'secret:working_state_entry:handle.legacy',
    });
  });

  it('given a small budget, then the pack stays within it and the lower-precedence items are omitted as BUDGET_EXCEEDED', () => {
    const { pack } = compileContextPack(inputs({ profile: { max_items: 5, max_bytes: 65_536, allow_secret_references: false } }), codec);
    expect(pack.items).toHaveLength(5);
    expect(pack.items.map((i) => i.section)).toEqual(['task_contract', 'step_contract', 'policy_constraints', 'decisions', 'working_state']);
    expect(pack.omitted.filter((o) => o.reason === 'BUDGET_EXCEEDED').map((o) => o.source.id)).toEqual(['b-ver', 'b-obs', 'm-1', 'art-log', 'in-2', 'task-1']);
    const bytes = compileContextPack(inputs({ profile: { max_items: 64, max_bytes: 600, allow_secret_references: false } }), codec).pack;
    expect(bytes.budget.used_bytes).toBeLessThanOrEqual(600);
    expect(bytes.omitted.some((o) => o.reason === 'BUDGET_EXCEEDED')).toBe(true);
  });

  it('given a task contract larger than the whole budget, then KNOWLEDGE_CONTEXT_BUDGET_TOO_SMALL', () => {
    const huge = inputs({ task_contract: { ref: 'artifact:contract-1', content: 'x'.repeat(2_000) }, profile: { max_items: 64, max_bytes: 1_000, allow_secret_references: false } });
    expect(codeOf(() => compileContextPack(huge, codec))).toBe('KNOWLEDGE_CONTEXT_BUDGET_TOO_SMALL');
  });

  it('given malformed inputs or one source given twice, then KNOWLEDGE_CONTEXT_INPUT_INVALID', () => {
    expect(codeOf(() => compileContextPack({ ...inputs(), task_id: 'not an id' }, codec))).toBe('KNOWLEDGE_CONTEXT_INPUT_INVALID');
    expect(codeOf(() => compileContextPack(inputs({ beliefs: [belief('b-1'), belief('b-1')] }), codec))).toBe('KNOWLEDGE_CONTEXT_INPUT_INVALID');
  });

  it('given a profile that asks for the session, then the session comes last', () => {
    const { pack } = compileContextPack(inputs({ profile: { max_items: 64, max_bytes: 65_536, allow_secret_references: false, include_session: true } }), codec);
    expect(pack.items.at(-1)).toEqual({ section: 'session', source: { kind: 'session', id: 'msg-1' }, content: 'hello' });
  });
});
