import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectTestNats, deleteStreams, uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quiet } from '../test/test-streams.js';
import { ConsumerStallWatch } from './consumer-stall.js';

let nc: NatsConnection;
const stream = uniqueName('STALL');

beforeAll(async () => {
  nc = await connectTestNats('consumer-stall-test');
  await (await jetstreamManager(nc)).streams.add({ name: stream, subjects: [`${stream.toLowerCase()}.>`] });
});

afterAll(async () => {
  await deleteStreams(nc, stream);
  await nc.close();
});

describe('ConsumerStallWatch (real NATS)', () => {
  it('given a durable with messages it never acknowledges, then it is reported stalled past the bound, and moves again once they are acknowledged', async () => {
    // given a durable and two messages waiting for it
    const jsm = await jetstreamManager(nc);
    const durable = uniqueName('d');
    await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit, filter_subject: `${stream.toLowerCase()}.>` });
    const js = jetstream(nc);
    await js.publish(`${stream.toLowerCase()}.a`, 'one');
    await js.publish(`${stream.toLowerCase()}.a`, 'two');
    let now = 0;
    const watch = new ConsumerStallWatch(jsm, { stallAfterMs: 1_000, checkMs: 50, consumers: () => [{ stream, durable }], logger: quiet, now: () => now });
    // when it is sampled, then again later than the bound with nothing acknowledged
    await watch.sample();
    expect(watch.check()()).toEqual({ ok: true, value: [] });
    now = 1_500;
    await watch.sample();
    // then it is stalled, and readiness says so
    expect(watch.stalled).toEqual([{ durable, stream, pending: 2, stuckMs: 1_500 }]);
    expect(watch.check()()).toMatchObject({ ok: false, value: [`${durable}: 2 message(s) waiting, no progress for 2 s`] });
    // when the messages are acknowledged
    const consumer = await js.consumers.get(stream, durable);
    for (let acked = 0; acked < 2; ) {
      const message = await consumer.next({ expires: 2_000 });
      if (message !== null) {
        await message.ackAck();
        acked++;
      }
    }
    now = 3_000;
    await watch.sample();
    // then it is no longer stalled
    expect(watch.check()()).toEqual({ ok: true, value: [] });
  });
});
