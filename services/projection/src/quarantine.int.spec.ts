import { jetstream } from '@nats-io/jetstream';
import { waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { happyPath, storyIds } from '../test/governed-path.fixture.js';
import { createRig, http, type Rig } from '../test/projection-rig.js';
import type { ProjectionApp } from './bootstrap.js';

/**
 * Invariant 10 on the projection, against the real NATS and Postgres: bytes
 * on the log that are not events never stall the views, are recorded with
 * their reason, and a projector that does stall makes `/readyz` say so.
 */

const notJson = new Uint8Array([0xff, 0x00, 0x7b, 0x22]);

describe('projection: junk on the log (invariant 10)', () => {
  let rig: Rig;
  let app: ProjectionApp;

  beforeAll(async () => {
    rig = await createRig();
  });

  afterAll(async () => {
    await rig?.dispose();
  });

  it('given bytes that are not events on a subject of no aggregate and inside a task, while it runs and while it is down, then the views catch up, the junk is recorded, and it stays ready', async () => {
    // given the projection running, half a story, then two messages that are not JSON: one on a subject that names no aggregate, one inside the task
    app = await rig.start();
    const prefix = rig.config.subjects.eventsPrefix;
    const ids = storyIds(`q${Date.now().toString(36)}`);
    const story = happyPath(ids);
    const js = jetstream(rig.nc);
    await rig.append(story.slice(0, 6));
    const nowhere = (await js.publish(`${prefix}.junk.x`, notJson)).seq;
    const inTask = (await js.publish(`${prefix}.task.${ids.task}`, notJson)).seq;
    // when the rest of the story follows
    const last = await rig.append(story.slice(6));
    // then the views reach the end of the log, folded as if the junk were not there
    await rig.caughtUp(last);
    expect((await http(app, `/v1/actions/${ids.actionRequest}`)).body).toMatchObject({ status: 'succeeded' });
    // and the junk is recorded with its reason, counted in the status and in /readyz, which is 200
    const status = (await http(app, '/v1/projections/status')).body as { events_behind: number; quarantined: { total: number; by_reason: Record<string, number>; latest: Array<Record<string, unknown>> } };
    expect(status.events_behind).toBe(0);
    expect(status.quarantined).toMatchObject({ total: 2, by_reason: { QUARANTINE_WRONG_SUBJECT: 1, QUARANTINE_NOT_JSON: 1 } });
    expect(status.quarantined.latest.map((record) => [record['stream_seq'], record['reason'], record['bytes']])).toEqual([
      [inTask, 'QUARANTINE_NOT_JSON', 4],
      [nowhere, 'QUARANTINE_WRONG_SUBJECT', 4],
    ]);
    const ready = await http(app, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', quarantined: { total: 2 } });

    // given the projection down, a second story, and junk after it (the last messages of the log)
    await app.close();
    const other = storyIds(`r${Date.now().toString(36)}`);
    await rig.append(happyPath(other));
    await js.publish(`${prefix}.task.${other.task}`, notJson);
    const tail = (await js.publish(`${prefix}.principal.${other.principal}`, JSON.stringify({ not: 'an event' }))).seq;
    // when it starts again, then its catch-up goes through the junk to the very end of the log
    app = await rig.start();
    await rig.caughtUp(tail);
    expect((await http(app, `/v1/actions/${other.actionRequest}`)).body).toMatchObject({ status: 'succeeded' });
    expect((await http(app, '/v1/projections/status')).body).toMatchObject({ events_behind: 0, quarantined: { total: 4, by_reason: { QUARANTINE_NOT_JSON: 2, QUARANTINE_NOT_ENVELOPE: 1 } } });
    expect((await http(app, '/readyz')).status).toBe(200);
  });
});

describe('projection: a stalled projector (readiness tells)', () => {
  let rig: Rig;
  let app: ProjectionApp;

  beforeAll(async () => {
    rig = await createRig({ WRIT_CONSUMER_STALL_SECONDS: '1', WRIT_CONSUMER_STALL_CHECK_MS: '200' });
    app = await rig.start();
  });

  afterAll(async () => {
    await rig?.dispose();
  });

  it('given the projector unable to move its checkpoint while events wait, then /readyz turns 503 naming the stall, and ready again once it moves', async () => {
    // given the views caught up with half a story
    const ids = storyIds(`s${Date.now().toString(36)}`);
    const story = happyPath(ids);
    await rig.caughtUp(await rig.append(story.slice(0, 4)));
    expect((await http(app, '/readyz')).status).toBe(200);
    // when another session holds the checkpoint row, so that no event can be applied, and the rest of the story arrives
    await rig.db.query('BEGIN');
    await rig.db.query(`SELECT last_seq FROM ${rig.table('checkpoints')} WHERE projector = 'projection' FOR UPDATE`);
    let last = 0;
    try {
      last = await rig.append(story.slice(4));
      // then readiness turns 503 and says the views (and their consumer) are stalled
      const unready = await waitFor(
        async () => {
          const ready = await http(app, '/readyz');
          return ready.status === 503 ? ready : undefined;
        },
        { what: '/readyz to report the stall', timeoutMs: 20_000, intervalMs: 200 },
      );
      expect(JSON.stringify(unready.body)).toMatch(/stalled/);
    } finally {
      await rig.db.query('COMMIT');
    }
    // and once the checkpoint moves again, the views catch up and it is ready
    await rig.caughtUp(last);
    await waitFor(async () => ((await http(app, '/readyz')).status === 200 ? true : undefined), { what: '/readyz to be ready again', timeoutMs: 20_000, intervalMs: 200 });
  });
});
