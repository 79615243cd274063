import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { hasErrorCode, type WritError } from '@writ/contracts';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quiet, testStreams } from '../test/test-streams.js';
import { serviceDraft } from './event-drafts.js';
import { ServiceRuntime, connectNats } from './service-runtime.js';
import { EventStoreTaskLog } from './task-log.js';

/** The runtime against the real NATS, on a test-unique subject root and streams (deleted afterwards). */

const root = uniqueName('t');
const streams = testStreams(root);

let nc: NatsConnection;
let keyDir: string;

beforeAll(async () => {
  nc = await connectTestNats('runtime-service-runtime');
  keyDir = await mkdtemp(join(tmpdir(), 'writ-runtime-svc-'));
});

afterAll(async () => {
  if (nc !== undefined) {
    await deleteStreams(nc, streams.events, streams.ingress, streams.commands, streams.dlq);
    await nc.close();
  }
  await rm(keyDir, { recursive: true, force: true });
});

describe('ServiceRuntime', () => {
  it('given the configured names and root, then it ensures the bus streams and the log, once per start', async () => {
    // when a service starts twice on the same names
    const first = await ServiceRuntime.start({ serviceName: 'probe', natsUrl: NATS_URL, subjectRoot: root, streams, logger: quiet });
    const second = await ServiceRuntime.start({ serviceName: 'probe', natsUrl: NATS_URL, subjectRoot: root, streams, logger: quiet });
    try {
      // then the streams capture the root's subjects
      expect((await first.jsm.streams.info(streams.commands)).config.subjects).toEqual([`${root}.cmd.>`]);
      expect((await first.jsm.streams.info(streams.dlq)).config.subjects).toEqual([`${root}.dlq.>`]);
      expect((await first.jsm.streams.info(streams.events)).config.subjects).toEqual([`${root}.evt.>`]);
      expect(first.subjects.commands.policyEvaluate).toBe(`${root}.cmd.policy.evaluate`);
      expect(first.readiness.report().checks).toEqual({ nats_connected: true, streams_ensured: true, quarantined: { total: 0 }, consumers_stalled: [] });
    } finally {
      await first.close();
      await second.close();
    }
    // and a closed runtime is not connected (closing twice is harmless)
    await first.close();
    expect(first.connected).toBe(false);
    expect(first.readiness.report().ready).toBe(false);
  });

  it('given junk on a task subject, when the service reads the task, then readiness counts it as quarantined, once, and stays ready', async () => {
    const runtime = await ServiceRuntime.start({ serviceName: 'probe', natsUrl: NATS_URL, subjectRoot: root, streams, logger: quiet });
    try {
      // given a task with junk after its first event
      const taskId = uniqueName('task');
      await runtime.store.append(taskId, [serviceDraft({ key: `${taskId}:note`, eventType: 'task.note_added', entityType: 'task', entityId: taskId, occurredAt: new Date().toISOString(), actorId: 'probe', payload: {}, causationId: null, correlationId: taskId })], 0);
      await jetstream(runtime.nc).publish(`${streams.eventsPrefix}.task.${taskId}`, 'junk');
      // when it is read twice
      await runtime.store.read(taskId);
      await runtime.store.read(taskId);
      // then the junk is counted once, by reason, and the service is still ready
      expect(runtime.readiness.report()).toMatchObject({ ready: true, checks: { quarantined: { total: 1, QUARANTINE_NOT_JSON: 1 } } });
    } finally {
      await runtime.close();
    }
  });

  it('given a signing key file, then the key is created once and registered for the service principal', async () => {
    const runtime = await ServiceRuntime.start({ serviceName: 'probe', natsUrl: NATS_URL, subjectRoot: root, streams, logger: quiet });
    try {
      const principalId = uniqueName('svc');
      const keyFile = join(keyDir, 'probe.jwk.json');
      const key = await runtime.useSigningKey({ principalId, displayName: 'probe', keyFile });
      const again = await runtime.useSigningKey({ principalId, displayName: 'probe', keyFile });
      expect(again.kid).toBe(key.kid);
      const registry = await runtime.startPrincipalRegistry();
      expect((await registry.verificationKeys(principalId)).kids()).toEqual([key.kid]);
      expect(await runtime.startPrincipalRegistry()).toBe(registry);
    } finally {
      await runtime.close();
    }
  });

  it('given NATS cannot be reached, then RUNTIME_NATS_UNAVAILABLE without the credentials of the URL', async () => {
    const failure = await connectNats('nats://user:s3cret@127.0.0.1:1', 'probe').catch((error: unknown) => error);
    expect(hasErrorCode(failure, 'RUNTIME_NATS_UNAVAILABLE')).toBe(true);
    expect(JSON.stringify((failure as WritError).toJSON())).not.toContain('s3cret');
  });

  it('given a task log on its store, then an append is guarded by the seq read and a redelivered draft appends nothing', async () => {
    const runtime = await ServiceRuntime.start({ serviceName: 'probe', natsUrl: NATS_URL, subjectRoot: root, streams, logger: quiet });
    try {
      const log = new EventStoreTaskLog(runtime.store);
      const taskId = uniqueName('tsk');
      expect(await log.read(taskId)).toEqual({ events: [], seq: 0 });
      const draft = serviceDraft({
        key: `${taskId}:task.created`,
        eventType: 'task.created',
        entityType: 'task',
        entityId: taskId,
        occurredAt: new Date().toISOString(),
        actorId: 'probe',
        payload: { title: 'probe' },
        causationId: null,
        correlationId: taskId,
      });
      expect(await log.append(taskId, [draft], 0)).toEqual({ duplicates: 0, duplicate: false });
      const history = await log.read(taskId);
      expect(history.seq).toBe(1);
      expect(history.events.map((event) => event.event_id)).toEqual([draft.event_id]);
      expect(await log.append(taskId, [draft], 1)).toEqual({ duplicates: 1, duplicate: true });
      const other = { ...draft, event_id: `${draft.event_id}x`, idempotency_key: 'other' };
      await expect(log.append(taskId, [other], 0)).rejects.toSatisfy((error) => hasErrorCode(error, 'EVENTSTORE_CONFLICT'));
    } finally {
      await runtime.close();
    }
  });

  it('given its closing hook, then it runs after the connection drained', async () => {
    const order: string[] = [];
    const runtime = await ServiceRuntime.start({
      serviceName: 'probe',
      natsUrl: NATS_URL,
      subjectRoot: root,
      streams,
      logger: quiet,
      onClose: async () => {
        order.push(runtime.nc.isClosed() ? 'closed' : 'open');
      },
    });
    await runtime.close();
    await runtime.close();
    expect(order).toEqual(['closed']);
  });
});
