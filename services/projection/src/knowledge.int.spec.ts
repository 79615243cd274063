import { jetstreamManager } from '@nats-io/jetstream';
import type { EventStore } from '@writ/eventstore';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRequest, storyIds, taskOpening, type StoryIds } from '../test/governed-path.fixture.js';
import { beliefStory, observedBelief, workingStateStory } from '../test/knowledge.fixture.js';
import { createRig, http, type Rig } from '../test/projection-rig.js';
import { readerToken, registerReader, type Reader } from '../test/readers.js';
import { authorUnprovenCount, enforcedRig, sealedStore } from '../test/sealed-stores.js';
import { rebuildIntoFreshSchema } from './bootstrap.js';
import type { ProjectionApp } from './bootstrap.js';

/**
 * The working state and belief views (issue 17) against the real NATS and
 * Postgres: rows folded from the orchestrator's knowledge events, served by
 * `GET /v1/tasks/<id>/working-state` and `/beliefs` under the task's read
 * scope, rebuilt identical from the log; and, with authorship enforced, a
 * knowledge event appended by another service than the orchestrator is
 * quarantined and never folded.
 */

const entry = (key: string, value: unknown, kind = 'objective', extra: Record<string, unknown> = {}) => ({ key, kind, value, ...extra }) as never;

describe('knowledge views: rows, reads, rebuild', () => {
  let rig: Rig;
  let app: ProjectionApp;
  let ids: StoryIds;
  let owner: Reader;
  let stranger: Reader;

  beforeAll(async () => {
    rig = await createRig();
    app = await rig.start();
    ids = storyIds(uniqueName('kn'));
    owner = await registerReader(rig, ids.principal, 'agent', ['executor']);
    stranger = await registerReader(rig, uniqueName('agent'), 'agent', ['executor']);
    const last = await rig.append([
      ...taskOpening(ids, actionRequest(ids)),
      ...workingStateStory(
        ids,
        [
          { set: [entry('objective.main', 'fix the test', 'objective'), entry('cache.page', 'cached text', 'cache'), entry('resource.token', { secret_ref: 'vault:ci/token' }, 'resource_handle', { sensitivity: 'secret' })] },
          { set: [entry('plan.current', { step: 2 }, 'plan_pointer', { refs: ['objective.main'] })], remove: ['resource.token'] },
        ],
        { compact: true },
      ),
      ...beliefStory(ids, [
        { op: 'assert', belief: observedBelief('bel-a', 'the tests pass on main') },
        { op: 'assert', belief: observedBelief('bel-b', 'the tests pass everywhere', { supersedes: 'bel-a' }) },
        { op: 'assert', belief: observedBelief('bel-c', 'main is red', { contradicts: ['bel-b'] }) },
        { op: 'assert', belief: observedBelief('bel-v', 'deployed', { trust_tier: 'verified', evidence_refs: [{ kind: 'receipt', id: 'rct-1' }] }) },
        { op: 'revoke', belief_id: 'bel-v', reason: 'rolled back' },
        { op: 'assert', belief: observedBelief('bel-s', 'the signing key is kept in the vault', { structured_assertion: { secret_ref: 'vault:ci/signing-key' }, sensitivity: 'secret' }) },
      ]),
    ]);
    await rig.caughtUp(last);
  });

  afterAll(async () => {
    await rig?.dispose();
  });

  it('given revisions and a compaction, then the working state row holds the current entries at the last revision, a secret value withheld', async () => {
    const { status, body } = await http(app, `/v1/tasks/${ids.task}/working-state`);
    expect(status).toBe(200);
    // revision 1 set three, revision 2 set plan.current and removed the token; the compaction kept the root (the objective)
    // and dropped what nothing references (the cache, and the plan pointer, which references the objective but is referenced by nothing)
    expect(body).toMatchObject({ task_id: ids.task, revision: 3, entry_count: 1, compactions: 1, last_request_id: 'req-2', limits: { max_entries: 64 } });
    expect((body['entries'] as Array<{ key: string }>).map((e) => e.key)).toEqual(['objective.main']);
    const rows = await rig.db.query(`SELECT entries::text AS entries, row_version FROM ${rig.table('working_states')} WHERE task_id = $1`, [ids.task]);
    expect(rows.rows).toHaveLength(1);
    expect(String(rows.rows[0].entries)).not.toContain('vault:ci/token');
  });

  it('given asserted, superseded, contradicted and revoked beliefs, then every belief has its row with its status, tier and evidence; a secret claim is withheld', async () => {
    const { status, body } = await http(app, `/v1/tasks/${ids.task}/beliefs`);
    expect(status).toBe(200);
    const beliefs = body['beliefs'] as Array<Record<string, unknown>>;
    const byId = Object.fromEntries(beliefs.map((b) => [b['belief_id'], b]));
    expect(Object.keys(byId).sort()).toEqual(['bel-a', 'bel-b', 'bel-c', 'bel-s', 'bel-v']);
    expect(byId['bel-a']).toMatchObject({ status: 'superseded', superseded_by: 'bel-b', version: 2 });
    expect(byId['bel-b']).toMatchObject({ status: 'contradicted', contradicts: ['bel-c'] });
    expect(byId['bel-c']).toMatchObject({ status: 'contradicted', contradicts: ['bel-b'], supersedes: null });
    expect(byId['bel-v']).toMatchObject({ status: 'revoked', trust_tier: 'verified', evidence_refs: [{ kind: 'receipt', id: 'rct-1' }], revoke_reason: 'rolled back' });
    expect(byId['bel-s']).toMatchObject({ status: 'active', claim: null, claim_withheld: true });
    const raw = await rig.db.query(`SELECT string_agg(row_to_json(b)::text, ',') AS rows FROM ${rig.table('beliefs')} b`);
    expect(String(raw.rows[0].rows)).not.toContain('signing key is kept');
    expect((await http(app, `/v1/tasks/${ids.task}/beliefs?status=superseded`)).body['beliefs']).toHaveLength(1);
    expect((await http(app, `/v1/tasks/${ids.task}/beliefs?status=gone`)).body).toMatchObject({ code: 'PROJECTION_REQUEST_INVALID' });
  });

  it('given an agent, then it reads its own task\'s working state and beliefs, and another agent\'s task reads as not found and empty', async () => {
    const asOwner = { authorization: `Bearer ${await readerToken(rig, owner)}` };
    const asStranger = { authorization: `Bearer ${await readerToken(rig, stranger)}` };
    expect((await http(app, `/v1/tasks/${ids.task}/working-state`, { headers: asOwner })).status).toBe(200);
    expect(((await http(app, `/v1/tasks/${ids.task}/beliefs`, { headers: asOwner })).body['beliefs'] as unknown[]).length).toBe(5);
    expect(await http(app, `/v1/tasks/${ids.task}/working-state`, { headers: asStranger })).toMatchObject({ status: 404, body: { code: 'PROJECTION_NOT_FOUND' } });
    expect((await http(app, `/v1/tasks/${ids.task}/beliefs`, { headers: asStranger })).body).toEqual({ task_id: ids.task, beliefs: [] });
  });

  it('given the knowledge rows, then the changes feed serves them as published rows of working_states and beliefs, versioned by the log', async () => {
    const { status, body } = await http(app, '/v1/changes?since=0&views=working_states,beliefs');
    expect(status).toBe(200);
    const changes = body['changes'] as Array<{ view: string; id: string; row_version: number }>;
    expect(changes.filter((c) => c.view === 'working_states').map((c) => c.id)).toEqual([ids.task]);
    expect(changes.filter((c) => c.view === 'beliefs').map((c) => c.id).sort()).toEqual(['bel-a', 'bel-b', 'bel-c', 'bel-s', 'bel-v']);
    expect(changes.every((c) => c.row_version > 0)).toBe(true);
  });

  it('given the knowledge rows, when the projection is rebuilt from the log alone, then both views are identical (invariant 2)', async () => {
    const report = await rebuildIntoFreshSchema(rig.config);
    expect(report.views.filter((v) => !v.match)).toEqual([]);
    expect(report.views.find((v) => v.view === 'working_states')?.live.rows).toBe(1);
    expect(report.views.find((v) => v.view === 'beliefs')?.live.rows).toBe(5);
    expect(report.identical).toBe(true);
  });
});

describe('knowledge views with authorship enforced: a forged knowledge event is quarantined, not folded', () => {
  const enforced = enforcedRig();

  it('given a belief and a revision appended by the policy service, then they are quarantined QUARANTINE_AUTHOR_UNPROVEN and only the orchestrator\'s are folded', async () => {
    const rig = enforced.rig();
    const app = enforced.app();
    const orchestrator = await sealedStore(rig, 'writ-orchestrator');
    // the forger: the policy service's credential and key in a client that does not check what it may append
    const policy = await sealedStore(rig, 'writ-policy', { checked: false });
    const ids = storyIds(uniqueName('forged'));
    const appendAs = async (store: EventStore, events: readonly { draft: Parameters<EventStore['append']>[1][number] }[]) => {
      for (const { draft } of events) await store.append(ids.task, [draft], (await store.head(ids.task)).taskSeq);
    };
    // given a task and its working state, appended by the orchestrator (task state is the orchestrator's or ingress's)
    await appendAs(orchestrator, [...taskOpening(ids, actionRequest(ids)), ...workingStateStory(ids, [{ set: [entry('objective.main', 'honest')] }])]);
    // when the policy service (a stolen credential) appends well-formed knowledge events to the same task
    await appendAs(policy, [
      ...beliefStory(ids, [{ op: 'assert', belief: observedBelief('bel-forged', 'all checks passed'), by: { id: 'writ-policy', type: 'agent' } }]).map((e) => ({
        draft: { ...e.draft, event_id: uniqueName('forged'), idempotency_key: uniqueName('forged') },
      })),
    ]);
    const forgedRevision = workingStateStory(ids, [{ set: [entry('objective.main', 'honest')] }, { set: [entry('objective.main', 'forged')] }]).at(-1)!;
    await appendAs(policy, [{ draft: { ...forgedRevision.draft, event_id: uniqueName('forged'), idempotency_key: uniqueName('forged') } }]);
    // and the orchestrator appends a genuine belief after them
    await appendAs(orchestrator, beliefStory(ids, [{ op: 'assert', belief: observedBelief('bel-real', 'the build is green') }], 300));
    const last = (await (await jetstreamManager(rig.nc)).streams.info(rig.config.streams.events)).state.last_seq;
    await rig.caughtUp(last);
    // then only the orchestrator's events are folded
    const beliefs = (await http(app, `/v1/tasks/${ids.task}/beliefs`)).body['beliefs'] as Array<{ belief_id: string }>;
    expect(beliefs.map((b) => b.belief_id)).toEqual(['bel-real']);
    expect((await http(app, `/v1/tasks/${ids.task}/working-state`)).body).toMatchObject({ revision: 1, entries: [{ key: 'objective.main', value: 'honest' }] });
    expect(await authorUnprovenCount(app, 2)).toBe(2);
  });
});
