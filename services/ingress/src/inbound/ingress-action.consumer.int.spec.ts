import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { DeadLetterHeaders } from '@writ/bus';
import { WritError } from '@writ/contracts';
import { ensureWritStreams } from '@writ/runtime';
import { createLogger } from '@writ/telemetry';
import { connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishRaw } from '../../test/fixtures.js';
import type { InboundAction, IngressReply, ReceiveActionHandler } from '../application/receive-action.handler.js';
import { IngressActionConsumer } from './ingress-action.consumer.js';

/** The consumer's ack table against the real server, with a scripted handler in place of the application. */
let nc: NatsConnection;
const root = uniqueName('t');
const names = { ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };

beforeAll(async () => {
  nc = await connectTestNats('ingress-consumer-test');
  await ensureWritStreams(await jetstreamManager(nc), {
    names,
    subjects: { ingress: `${root}.ingress.>`, commands: `${root}.cmd.>`, dlq: `${root}.dlq.>` },
    maxBytes: 8 * 1024 ** 2,
  });
});

afterAll(async () => {
  await deleteStreams(nc, ...Object.values(names));
  await nc.close();
});

/** Each test binds its own subjects (`<root>.ingress.<serviceName>.<principal>`), so it sees only its messages. */
function consumerWith(receive: (input: InboundAction) => Promise<IngressReply>, serviceName: string): IngressActionConsumer {
  return new IngressActionConsumer(
    nc,
    { receive } as unknown as ReceiveActionHandler,
    { serviceName, stream: names.ingress, pattern: `${root}.ingress.${serviceName}.*`, deadLetterSubject: `${root}.dlq.${serviceName}`, maxDeliver: 2, ackWaitMs: 30_000 },
    createLogger('ingress-consumer-test', { level: 'fatal' }),
  );
}

describe('IngressActionConsumer', () => {
  it('hands the raw body, the subject principal, Nats-Msg-Id and the time the bus stored it to the handler, and retries a lost race at once', async () => {
    // given a handler that loses a race once, then succeeds
    const serviceName = uniqueName('svc');
    const seen: InboundAction[] = [];
    const consumer = consumerWith(async (input) => {
      seen.push(input);
      if (seen.length === 1) throw new WritError('EVENTSTORE_CONFLICT', 'lost the race');
      return { ingress_id: 'ing-1', status: 'accepted' };
    }, serviceName);
    await consumer.start();
    try {
      // when a non-JSON body arrives for principal agent-7
      await publishRaw(nc, `${root}.ingress.${serviceName}.agent-7`, 'aGVhZGVy.cGF5bG9hZA.c2ln', 'msg-1');
      // then the handler sees it as is, twice, and the message is acked
      await waitFor(() => (seen.length >= 2 ? true : undefined), { what: 'the retry' });
      const jsm = await jetstreamManager(nc);
      const stored = await jsm.streams.getMessage(names.ingress, { last_by_subj: `${root}.ingress.${serviceName}.agent-7` });
      expect(seen[1]).toEqual({ channel: 'nats', raw: 'aGVhZGVy.cGF5bG9hZA.c2ln', rawBytes: 24, subjectPrincipalId: 'agent-7', idempotencyKey: 'msg-1', storedAt: stored?.time });
      await waitFor(async () => ((await jsm.consumers.info(names.ingress, consumer.durable)).num_ack_pending === 0 ? true : undefined), { what: 'the ack' });
    } finally {
      await consumer.stop();
    }
    expect(consumer.bound).toBe(false);
  });

  it('dead-letters a message whose handling keeps failing, with the bus headers and the original body', async () => {
    // given a handler whose infrastructure is down
    const serviceName = uniqueName('svc');
    const consumer = consumerWith(async () => {
      throw new WritError('EVENTSTORE_UNAVAILABLE', 'the log is down');
    }, serviceName);
    await consumer.start();
    try {
      // when a message arrives
      await publishRaw(nc, `${root}.ingress.${serviceName}.agent-8`, 'not-even-a-jws', 'msg-2', 'msg-id');
      // then after maxDeliver attempts it is parked on the dead-letter subject
      const jsm = await jetstreamManager(nc);
      const letter = await waitFor(
        async () => (await jsm.streams.getMessage(names.dlq, { last_by_subj: `${root}.dlq.${serviceName}` }).catch(() => null)) ?? undefined,
        { what: 'the dead letter' },
      );
      expect(letter.string()).toBe('not-even-a-jws');
      expect(letter.header.get(DeadLetterHeaders.REASON)).toBe('exhausted');
      expect(letter.header.get(DeadLetterHeaders.ERROR_CODE)).toBe('EVENTSTORE_UNAVAILABLE');
      expect(letter.header.get(DeadLetterHeaders.MSG_ID)).toBe('msg-2');
      expect(letter.header.get(DeadLetterHeaders.DELIVERY_COUNT)).toBe('2');
    } finally {
      await consumer.stop();
    }
  });
});
