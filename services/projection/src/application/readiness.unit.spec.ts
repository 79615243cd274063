import { describe, expect, it } from 'vitest';
import { happyPath, storyIds, toProjectedEvents } from '../../test/governed-path.fixture.js';
import { MemoryLog, MemoryProjectionStore } from '../../test/memory-store.js';
import { applyEvent } from './apply-event.js';
import type { ReadModel } from './ports.js';
import { Readiness } from './readiness.js';

const PREFIX = 'writ.evt';
const raws = toProjectedEvents(happyPath(storyIds('rd1'))).map((e) => ({ streamSeq: e.streamSeq, subject: `${PREFIX}.${e.aggregate.type}.${e.aggregate.id}`, payload: e.envelope }));
const wiring = { natsConnected: () => true, streamsEnsured: () => true, boundConsumers: () => ['projection__writ_evt'] };

describe('Readiness.lag', () => {
  it('given the views 5 events behind, when measured, then the lag is 5 events and the age of the oldest one not folded', async () => {
    // the log stores event n at second n; now is second 20; the checkpoint is 16, so event 17 waits since second 17
    const store = new MemoryProjectionStore();
    const events = toProjectedEvents(happyPath(storyIds('rd1')));
    for (const event of events.slice(0, 16)) await applyEvent(store, event.streamSeq, event);
    const readiness = new Readiness({ wiring, store, log: new MemoryLog(raws), model: {} as ReadModel, now: () => new Date(20_000) });
    expect(await readiness.lag()).toEqual({ last_stream_seq: 21, checkpoint: 16, events_behind: 5, lag_ms: 3_000 });
  });

  it('given the views caught up, when measured, then both are 0', async () => {
    const store = new MemoryProjectionStore();
    for (const event of toProjectedEvents(happyPath(storyIds('rd1')))) await applyEvent(store, event.streamSeq, event);
    const readiness = new Readiness({ wiring, store, log: new MemoryLog(raws), model: {} as ReadModel, now: () => new Date(99_000) });
    expect(await readiness.lag()).toEqual({ last_stream_seq: 21, checkpoint: 21, events_behind: 0, lag_ms: 0 });
  });
});

describe('Readiness.check', () => {
  const quietModel = { ping: async () => undefined } as unknown as ReadModel;

  it('given the views behind with the checkpoint still past the bound, then it is not ready and says the views are stalled; once they move, it is ready again', async () => {
    // given the views at 16 of 21, measured at second 20 and again at second 200 (bound 60 s)
    const store = new MemoryProjectionStore();
    const events = toProjectedEvents(happyPath(storyIds('rd1')));
    for (const event of events.slice(0, 16)) await applyEvent(store, event.streamSeq, event);
    let now = 20_000;
    const readiness = new Readiness({ wiring, store, log: new MemoryLog(raws), model: quietModel, now: () => new Date(now), stallAfterMs: 60_000 });
    await expect(readiness.check()).resolves.toMatchObject({ status: 'ready', quarantined: { total: 0 } });
    now = 200_000;
    // then it is not ready, naming the stall
    await expect(readiness.check()).rejects.toMatchObject({ code: 'PROJECTION_NOT_READY', details: { problems: [expect.stringMatching(/views are stalled: stuck after stream seq 16 for 180 s while 5 message/)] } });
    // when the checkpoint moves, then it is ready
    await applyEvent(store, 17, events[16]);
    await expect(readiness.check()).resolves.toMatchObject({ status: 'ready' });
  });

  it('given a consumer stalled on the server, then it is not ready and names it', async () => {
    const store = new MemoryProjectionStore();
    const readiness = new Readiness({ wiring: { ...wiring, stalledConsumers: () => ['projection__writ_evt: 3 message(s) waiting, no progress for 200 s'] }, store, log: new MemoryLog([]), model: quietModel });
    await expect(readiness.check()).rejects.toMatchObject({ details: { problems: ['consumer stalled: projection__writ_evt: 3 message(s) waiting, no progress for 200 s'] } });
  });
});
