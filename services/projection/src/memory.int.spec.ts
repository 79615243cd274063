import { jetstreamManager } from '@nats-io/jetstream';
import type { EventStore } from '@writ/eventstore';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRequest, receiptIssued, storyIds, taskOpening, type StoryEvent, type StoryIds } from '../test/governed-path.fixture.js';
import { memoryReceipt, memoryStory } from '../test/knowledge.fixture.js';
import { createRig, http, type Rig } from '../test/projection-rig.js';
import { readerToken, registerReader, type Reader } from '../test/readers.js';
import { authorUnprovenCount, enforcedRig, sealedStore } from '../test/sealed-stores.js';
import { rebuildIntoFreshSchema } from './bootstrap.js';
import type { ProjectionApp } from './bootstrap.js';

/**
 * The memory view (issue 17) against the real NATS and Postgres: rows folded
 * from the records' own streams (`<events>.memory.<id>`) and the receipts of
 * the promoting and invalidating actions, served by `GET /v1/memory` under the
 * promoter's read scope, rebuilt identical from the log; and, with authorship
 * enforced, a memory event appended by another service than the executor is
 * quarantined and never folded.
 */

describe('memory view: rows, reads, rebuild', () => {
  let rig: Rig;
  let app: ProjectionApp;
  let ids: StoryIds;
  let owner: Reader;
  let stranger: Reader;

  beforeAll(async () => {
    rig = await createRig();
    app = await rig.start();
    ids = storyIds(uniqueName('mem'));
    owner = await registerReader(rig, ids.principal, 'agent', ['executor']);
    stranger = await registerReader(rig, uniqueName('agent'), 'agent', ['executor']);
    const receipt = receiptIssued(ids, 'succeeded', 20);
    const [promoted, invalidated] = memoryStory(ids, `mem-a-${ids.tag}`, { invalidateBy: `inv-${ids.tag}` });
    const last = await rig.append([
      ...taskOpening(ids, actionRequest(ids)),
      promoted!,
      memoryReceipt(receipt, ids.attempt, `rcpt-a-${ids.tag}`),
      ...memoryStory(ids, `mem-b-${ids.tag}`, { seconds: 400 }),
      invalidated!,
      memoryReceipt(receipt, `inv-${ids.tag}`, `rcpt-inv-${ids.tag}`),
    ]);
    await rig.caughtUp(last);
  });

  afterAll(async () => {
    await rig?.dispose();
  });

  it('given a promoted then invalidated record and an active one, then both have rows (the invalidated one kept, marked), with their policy and receipt refs', async () => {
    const { status, body } = await http(app, '/v1/memory');
    expect(status).toBe(200);
    const rows = body['memory'] as Array<Record<string, unknown>>;
    expect(rows.map((row) => [row['memory_id'], row['status']])).toEqual([
      [`mem-b-${ids.tag}`, 'active'],
      [`mem-a-${ids.tag}`, 'invalidated'],
    ]);
    expect(rows[1]).toMatchObject({ receipt_ref: `receipt:rcpt-a-${ids.tag}`, invalidation_receipt_ref: `receipt:rcpt-inv-${ids.tag}`, policy_result_ref: `policy_result:${ids.policyResult}`, invalidation_reason: 'the port moved' });
    expect((await http(app, `/v1/memory?status=invalidated`)).body['memory']).toHaveLength(1);
    expect(await http(app, `/v1/memory/mem-a-${ids.tag}`)).toMatchObject({ status: 200, body: { memory_id: `mem-a-${ids.tag}`, status: 'invalidated', claim: 'the API listens on 8080' } });
  });

  it('given an agent, then it reads the records it promoted, and another agent reads none of them', async () => {
    const asOwner = { authorization: `Bearer ${await readerToken(rig, owner)}` };
    const asStranger = { authorization: `Bearer ${await readerToken(rig, stranger)}` };
    expect(((await http(app, '/v1/memory', { headers: asOwner })).body['memory'] as unknown[]).length).toBe(2);
    expect((await http(app, '/v1/memory', { headers: asStranger })).body).toEqual({ memory: [] });
    expect(await http(app, `/v1/memory/mem-a-${ids.tag}`, { headers: asStranger })).toMatchObject({ status: 404, body: { code: 'PROJECTION_NOT_FOUND' } });
  });

  it('given the memory rows, then the changes feed serves them as published rows, versioned by the log', async () => {
    const { body } = await http(app, '/v1/changes?since=0&views=memory');
    const changes = body['changes'] as Array<{ view: string; id: string; row_version: number }>;
    expect([...new Set(changes.map((c) => c.id))].sort()).toEqual([`mem-a-${ids.tag}`, `mem-b-${ids.tag}`]);
    expect(changes.every((c) => c.view === 'memory' && c.row_version > 0)).toBe(true);
  });

  it('given the memory rows, when the projection is rebuilt from the log alone, then the memory view is identical (invariant 2)', async () => {
    const report = await rebuildIntoFreshSchema(rig.config);
    expect(report.views.filter((v) => !v.match)).toEqual([]);
    expect(report.views.find((v) => v.view === 'memory')?.live.rows).toBe(2);
    expect(report.identical).toBe(true);
  });
});

describe('memory view with authorship enforced: a forged memory event is quarantined, not folded', () => {
  const enforced = enforcedRig();

  it("given a memory.promoted appended by the receipt service (not the memory stream's author), then it is quarantined QUARANTINE_AUTHOR_UNPROVEN and only the executor's record is folded", async () => {
    const rig = enforced.rig();
    const app = enforced.app();
    const orchestrator = await sealedStore(rig, 'writ-orchestrator');
    const executor = await sealedStore(rig, 'writ-executor');
    // the forger: the receipt service's credential and key in a client that does not check what it may append
    const forger = await sealedStore(rig, 'writ-receipt', { checked: false });
    const ids = storyIds(uniqueName('forged'));
    const appendAs = async (store: EventStore, events: readonly StoryEvent[]) => {
      for (const { aggregate, aggregateId, draft } of events) {
        if (aggregate === 'task') await store.append(aggregateId, [draft], (await store.head(aggregateId)).taskSeq);
        else await store.appendToEntity(aggregate, aggregateId, [draft], (await store.headOfEntity(aggregate, aggregateId)).taskSeq);
      }
    };
    await appendAs(orchestrator, taskOpening(ids, actionRequest(ids)));
    // when the receipt service's stolen credential writes a well-formed promotion on a memory stream
    await appendAs(forger, memoryStory(ids, `mem-forged-${ids.tag}`, { trustTier: 'verified' }));
    // and the executor promotes a record of its own
    await appendAs(executor, memoryStory(ids, `mem-real-${ids.tag}`));
    const last = (await (await jetstreamManager(rig.nc)).streams.info(rig.config.streams.events)).state.last_seq;
    await rig.caughtUp(last);
    // then only the executor's record has a row
    const rows = (await http(app, '/v1/memory')).body['memory'] as Array<{ memory_id: string }>;
    expect(rows.map((row) => row.memory_id)).toEqual([`mem-real-${ids.tag}`]);
    expect((await http(app, `/v1/memory/mem-forged-${ids.tag}`)).status).toBe(404);
    expect(await authorUnprovenCount(app, 1)).toBe(1);
  });
});
