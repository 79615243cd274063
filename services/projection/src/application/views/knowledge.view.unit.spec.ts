import { describe, expect, it } from 'vitest';
import { actionRequest, storyIds, taskOpening, toProjectedEvents, type StoryEvent } from '../../../test/governed-path.fixture.js';
import { beliefStory, observedBelief, workingStateStory } from '../../../test/knowledge.fixture.js';
import { foldStory } from '../../../test/memory-store.js';
import { beliefsView } from './beliefs.view.js';
import { workingStatesView } from './working-states.view.js';

const ids = storyIds('kv1');
const opening = taskOpening(ids, actionRequest(ids));
const entry = (key: string, value: unknown, kind = 'objective', extra: Record<string, unknown> = {}) => ({ key, kind, value, ...extra }) as never;

/** `event` with its payload changed, as a forger (or a bug) would append it. */
function withPayload(event: StoryEvent, change: (payload: Record<string, unknown>) => Record<string, unknown>): StoryEvent {
  return { ...event, draft: { ...event.draft, event_id: `${event.draft.event_id}-x`, payload: change(event.draft.payload) } };
}

describe('working_states view', () => {
  it('given an opening and two revisions, when folded, then one row holds the entries at revision 2, sorted by key', async () => {
    const story = [...opening, ...workingStateStory(ids, [{ set: [entry('b.second', 2, 'cache'), entry('a.first', 1)] }, { set: [entry('c.third', 3, 'uncertainty')], remove: ['b.second'] }])];
    const rows = (await foldStory(toProjectedEvents(story))).rows('working_states');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ task_id: ids.task, revision: 2, entry_count: 2, last_request_id: 'req-2', last_revised_by: ids.principal, compactions: 0 });
    expect(rows[0]?.entries.map((e) => e.key)).toEqual(['a.first', 'c.third']);
  });

  it('given a revision that skips a number or passes the recorded limits, when folded, then the kernel does not apply it and the row stays', async () => {
    const story = [...opening, ...workingStateStory(ids, [{ set: [entry('a.first', 1)] }])];
    const revised = story.at(-1)!;
    const skipped = withPayload(revised, (payload) => ({ ...payload, revision: 3, request_id: 'req-skip' }));
    const oversized = withPayload(revised, (payload) => ({ ...payload, revision: 2, request_id: 'req-big', set: [entry('big', 'x'.repeat(5_000), 'cache')] }));
    const rows = (await foldStory(toProjectedEvents([...story, skipped, oversized]))).rows('working_states');
    expect(rows[0]).toMatchObject({ revision: 1, last_request_id: 'req-1', entry_count: 1 });
  });

  it('given a secret entry (held by reference), when folded, then its key and kind are kept and its value withheld; a later revision keeps it withheld', async () => {
    const story = [...opening, ...workingStateStory(ids, [{ set: [entry('resource.token', { secret_ref: 'vault:ci/token' }, 'resource_handle', { sensitivity: 'secret' })] }, { set: [entry('a.first', 1)] }])];
    const row = (await foldStory(toProjectedEvents(story))).rows('working_states')[0]!;
    expect(row.entries.find((e) => e.key === 'resource.token')).toMatchObject({ kind: 'resource_handle', value: null, value_withheld: true });
    expect(JSON.stringify(row)).not.toContain('vault:ci/token');
  });

  it('given a revision forged with a secret entry held by value, when folded, then the kernel does not apply it and the value is in no row', async () => {
    const story = [...opening, ...workingStateStory(ids, [{ set: [entry('a.first', 1)] }])];
    const forged = withPayload(story.at(-1)!, (payload) => ({ ...payload, revision: 2, request_id: 'req-forged', set: [entry('resource.token', 'CANARY-view-p4ss', 'resource_handle', { sensitivity: 'secret' })] }));
    const row = (await foldStory(toProjectedEvents([...story, forged]))).rows('working_states')[0]!;
    expect(row).toMatchObject({ revision: 1, last_request_id: 'req-1', entry_count: 1 });
    expect(JSON.stringify(row)).not.toContain('CANARY-view-p4ss');
  });

  it('given a redelivered revision, when folded again, then the row is returned unchanged', async () => {
    const events = toProjectedEvents([...opening, ...workingStateStory(ids, [{ set: [entry('a.first', 1)] }])]);
    const row = (await foldStory(events)).rows('working_states')[0]!;
    expect(workingStatesView.fold(row, events.at(-1)!)).toBe(row);
  });
});

describe('beliefs view', () => {
  it('given an assertion, a supersession, a contradiction in the same scope and a revocation, when folded, then every belief keeps its row with its status and version', async () => {
    const story = [
      ...opening,
      ...beliefStory(ids, [
        { op: 'assert', belief: observedBelief('bel-a', 'A') },
        { op: 'assert', belief: observedBelief('bel-b', 'B', { supersedes: 'bel-a' }) },
        { op: 'assert', belief: observedBelief('bel-c', 'not B', { contradicts: ['bel-b'] }) },
        { op: 'assert', belief: observedBelief('bel-d', 'D elsewhere', { scope: 'repo:other' }) },
        { op: 'revoke', belief_id: 'bel-d', reason: 'wrong' },
      ]),
    ];
    const rows = Object.fromEntries((await foldStory(toProjectedEvents(story))).rows('beliefs').map((row) => [row.belief_id, row]));
    expect(rows['bel-a']).toMatchObject({ status: 'superseded', superseded_by: 'bel-b', version: 2 });
    expect(rows['bel-b']).toMatchObject({ status: 'contradicted', contradicts: ['bel-c'], version: 2, needs_review: false });
    expect(rows['bel-c']).toMatchObject({ status: 'contradicted', contradicts: ['bel-b'], version: 2 });
    expect(rows['bel-d']).toMatchObject({ status: 'revoked', revoke_reason: 'wrong', revoked_by: ids.principal, version: 2 });
  });

  it('given a contradiction across scopes, when folded, then both stay active and name each other', async () => {
    const story = [
      ...opening,
      ...beliefStory(ids, [
        { op: 'assert', belief: observedBelief('bel-x', 'X') },
        { op: 'assert', belief: observedBelief('bel-y', 'not X', { scope: 'path:src/a.ts', contradicts: ['bel-x'] }) },
      ]),
    ];
    const rows = Object.fromEntries((await foldStory(toProjectedEvents(story))).rows('beliefs').map((row) => [row.belief_id, row]));
    expect(rows['bel-x']).toMatchObject({ status: 'active', contradicts: ['bel-y'] });
    expect(rows['bel-y']).toMatchObject({ status: 'active', contradicts: ['bel-x'] });
  });

  it('given an assertion whose tier its evidence or asserter cannot support, when folded, then no row is made (a forged tier is not shown)', async () => {
    const [asserted] = beliefStory(ids, [{ op: 'assert', belief: observedBelief('bel-v', 'deployed', { trust_tier: 'verified', evidence_refs: [{ kind: 'receipt', id: 'rct-1' }] }) }]);
    const noReceipt = withPayload(asserted!, (payload) => ({ ...payload, belief: { ...(payload['belief'] as object), evidence_refs: [{ kind: 'artifact', id: 'a-1' }] } }));
    const agentAsUser = withPayload(asserted!, (payload) => ({ ...payload, belief: { ...(payload['belief'] as object), belief_id: 'bel-u', trust_tier: 'user_asserted' } }));
    const rows = (await foldStory(toProjectedEvents([...opening, noReceipt, agentAsUser]))).rows('beliefs');
    expect(rows).toEqual([]);
  });

  it('given a secret belief and a revoked one, when folded again after the revocation, then the claim stays withheld and nothing changes', async () => {
    const events = toProjectedEvents([...opening, ...beliefStory(ids, [
        { op: 'assert', belief: observedBelief('bel-s', 'the signing key is kept in the vault', { structured_assertion: { secret_ref: 'vault:ci/signing-key' }, sensitivity: 'secret' }) },
        { op: 'revoke', belief_id: 'bel-s', reason: 'rotated' },
      ]),
    ]);
    const row = (await foldStory(events)).rows('beliefs')[0]!;
    expect(row).toMatchObject({ claim: null, claim_withheld: true, status: 'revoked' });
    expect(JSON.stringify(row)).not.toContain('signing key');
    expect(beliefsView.fold(row, events.at(-1)!, { task_id: ids.task, belief_id: 'bel-s' })).toBe(row);
  });

  it('given a secret belief forged into the log with its secret by value, when folded, then no row holds it (as the kernel folds it)', async () => {
    const story = [...opening, ...beliefStory(ids, [{ op: 'assert', belief: observedBelief('bel-s', 'the signing key', { structured_assertion: { secret_ref: 'vault:ci/signing-key' }, sensitivity: 'secret' }) }])];
    const forged = withPayload(story.at(-1)!, (payload) => ({ ...payload, belief: { ...(payload['belief'] as object), structured_assertion: { key: 'CANARY-view-b3l13f' } } }));
    const rows = (await foldStory(toProjectedEvents([...story.slice(0, -1), forged]))).rows('beliefs');
    expect(rows).toEqual([]);
  });
});
