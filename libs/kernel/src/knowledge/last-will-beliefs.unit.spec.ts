import { EpistemicType, type LastWillDelta } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { meta } from '../../test/decider-spec.js';
import { HASH, lastWill } from '../../test/lineage-flow.js';
import { beliefDecider, type BeliefSetState } from './belief.decider.js';
import { compileContextPack } from './context-compiler.js';
import { EPISTEMIC_TRUST_TIERS, epistemicTrustTier, lastWillArtifactId, lastWillBeliefId, lastWillBeliefs, type LastWillLanding } from './last-will-beliefs.js';
import { TRUST_TIER_GATES } from './trust-tier.gates.js';

const WILL_HASH = 'd'.repeat(64);
const delta = (epistemic_type: EpistemicType, content = `a ${epistemic_type} delta`): LastWillDelta => ({ epistemic_type, confidence: 0.6, content, provenance: 'docs/a.md', support: ['docs/a.md'] });

const landing = (over: Partial<LastWillLanding> = {}, deltas: LastWillDelta[] = [delta('retrieved')]): LastWillLanding => ({
  seed_id: 'seed-1',
  last_will: lastWill(HASH.anchor, { deltas }),
  last_will_hash: WILL_HASH,
  evidence_artifact_id: lastWillArtifactId('e'.repeat(64)),
  task: { task_id: 'task-1', owner_principal_id: 'seed-1' },
  actor: { seed_id: 'seed-1', reconstituted_from: null },
  ...over,
});

/** Asserts every draft through the belief decider, as the orchestrator does. */
function assertAll(land: LastWillLanding): BeliefSetState {
  const { asserter, beliefs } = lastWillBeliefs(land);
  let state = beliefDecider.initialState();
  for (const [n, belief] of beliefs.entries()) {
    for (const event of beliefDecider.decide({ type: 'assert-belief', data: { belief, asserted_by: asserter }, metadata: meta(n) }, state)) state = beliefDecider.evolve(state, event);
  }
  return state;
}

describe('Last Will deltas as beliefs (seed 002, Hermit 15.4; issue 17)', () => {
  it.each([
    ['retrieved', 'observed'],
    ['forensic_insight', 'observed'],
    ['inferred', 'untrusted'],
    ['hypothesis', 'untrusted'],
    ['unknown', 'untrusted'],
  ] as const)('given a %s delta, then it lands %s', (type, tier) => {
    expect(epistemicTrustTier(type)).toBe(tier);
    expect(lastWillBeliefs(landing({}, [delta(type)])).beliefs[0]).toMatchObject({ trust_tier: tier, epistemic_type: type });
  });

  it('given every epistemic type, then none lands verified, user_asserted or policy_asserted, and only retrieved and forensic insight may steer planning', () => {
    expect(Object.keys(EPISTEMIC_TRUST_TIERS).sort()).toEqual([...EpistemicType.options].sort());
    for (const tier of Object.values(EPISTEMIC_TRUST_TIERS)) expect(['observed', 'untrusted']).toContain(tier);
    expect(EpistemicType.options.filter((type) => TRUST_TIER_GATES[epistemicTrustTier(type)].influence_planning).sort()).toEqual(['forensic_insight', 'retrieved']);
    expect(epistemicTrustTier('verified_fact')).toBe('untrusted');
  });

  it('given a Last Will of three deltas on the participant own task, then three beliefs the decider admits, each citing the stored Last Will at its delta, asserted by the participant', () => {
    const land = landing({}, [delta('retrieved'), delta('hypothesis'), delta('inferred')]);
    const { asserter, beliefs } = lastWillBeliefs(land);
    expect(asserter).toEqual({ principal_id: 'seed-1', principal_type: 'agent' });
    expect(beliefs.map((b) => b.belief_id)).toEqual([0, 1, 2].map((i) => lastWillBeliefId(WILL_HASH, i)));
    expect(beliefs[1]).toMatchObject({
      task_id: 'task-1',
      claim: 'a hypothesis delta',
      scope: 'anchor:docs',
      confidence: 0.6,
      evidence_refs: [{ kind: 'artifact', id: `sha256-${'e'.repeat(64)}`, selector: { kind: 'json_path', path: '$.deltas[1]' } }],
      structured_assertion: { last_will: { seed_id: 'seed-1', delta: 1, provenance: 'docs/a.md', support: ['docs/a.md'] } },
    });
    const state = assertAll(land);
    expect(state.beliefs.map((b) => [b.trust_tier, b.asserted_by])).toEqual([
      ['observed', 'seed-1'],
      ['untrusted', 'seed-1'],
      ['untrusted', 'seed-1'],
    ]);
  });

  it('given the same Last Will twice, then the same belief ids (a redelivery asserts nothing new: KNOWLEDGE_BELIEF_EXISTS)', () => {
    const land = landing();
    expect(lastWillBeliefs(land).beliefs.map((b) => b.belief_id)).toEqual(lastWillBeliefs(land).beliefs.map((b) => b.belief_id));
    const state = assertAll(land);
    const { asserter, beliefs } = lastWillBeliefs(land);
    expect(() => beliefDecider.decide({ type: 'assert-belief', data: { belief: beliefs[0]!, asserted_by: asserter }, metadata: meta(9) }, state)).toThrow(
      expect.objectContaining({ code: 'KNOWLEDGE_BELIEF_EXISTS' }),
    );
  });

  it('given a reconstituted participant that owns the task, when its prior Last Will lands, then the beliefs land asserted by the prior participant', () => {
    const land = landing({ task: { task_id: 'task-2', owner_principal_id: 'seed-2' }, actor: { seed_id: 'seed-2', reconstituted_from: 'seed-1' } });
    expect(lastWillBeliefs(land).beliefs.map((b) => [b.task_id, b.trust_tier])).toEqual([['task-2', 'observed']]);
    expect(lastWillBeliefs(land).asserter.principal_id).toBe('seed-1');
  });

  it.each([
    ['the task belongs to another principal', landing({ task: { task_id: 'task-1', owner_principal_id: 'agent-9' } })],
    ['the actor owns the task but is not of the writer line', landing({ task: { task_id: 'task-3', owner_principal_id: 'seed-3' }, actor: { seed_id: 'seed-3', reconstituted_from: 'seed-8' } })],
    ['the actor claims the lineage but another principal owns the task', landing({ task: { task_id: 'task-1', owner_principal_id: 'seed-1' }, actor: { seed_id: 'seed-2', reconstituted_from: 'seed-1' } })],
    ['the Last Will is another participant own', landing({ seed_id: 'seed-7', task: { task_id: 'task-7', owner_principal_id: 'seed-7' }, actor: { seed_id: 'seed-7', reconstituted_from: null } })],
  ])('given %s, then KNOWLEDGE_LAST_WILL_NOT_OF_TASK and no belief', (_note, land) => {
    expect(() => lastWillBeliefs(land)).toThrow(expect.objectContaining({ code: 'KNOWLEDGE_LAST_WILL_NOT_OF_TASK' }));
  });

  it('given a delta longer than a claim may be and an anchor that is not a scope, then the claim is clipped and the scope names the participant', () => {
    const long = 'x'.repeat(10_000);
    const land = landing({ last_will: lastWill(HASH.anchor, { deltas: [delta('retrieved', long)], anchor_id: `anchor:${'y'.repeat(300)}` }) });
    const [belief] = lastWillBeliefs(land).beliefs;
    expect(belief?.claim).toHaveLength(4_096);
    expect(belief?.scope).toBe('participant:seed-1');
    expect(assertAll(land).beliefs).toHaveLength(1);
  });

  it('given the beliefs, when an attempt pack is compiled, then the retrieved delta is an item and the hypothesis is omitted as barred from planning', () => {
    const state = assertAll(landing({}, [delta('retrieved'), delta('hypothesis')]));
    const compiled = compileContextPack(
      {
        task_id: 'task-1',
        attempt_id: 'att-1',
        as_of: '2026-01-01T00:00:10.000Z',
        task_contract: { ref: 'task:task-1', content: {} },
        beliefs: [...state.beliefs],
        profile: { max_items: 16, max_bytes: 65_536, allow_secret_references: false },
      },
      { canonicalJson: JSON.stringify, sha256Hex: () => 'f'.repeat(64) },
    );
    expect(compiled.pack.items.filter((item) => item.section === 'beliefs').map((item) => item.source.id)).toEqual([lastWillBeliefId(WILL_HASH, 0)]);
    expect(compiled.pack.omitted).toContainEqual({ section: 'beliefs', source: { kind: 'belief', id: lastWillBeliefId(WILL_HASH, 1) }, reason: 'TRUST_TIER_BARRED_FROM_PLANNING' });
  });
});
