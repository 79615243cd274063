import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusClient } from '@writ/bus';
import { generateEd25519Key } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { registerServicePrincipal } from '@writ/runtime';
import { createLogger } from '@writ/telemetry';
import { connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintGrant, newIds, request, runAction, testConfig, testStreams } from '../test/executor-rig.js';
import { createExecutorApp, type ExecutorApp } from './bootstrap.js';
import type { ExecutorConfig } from './config.js';

/**
 * An executor whose cell image is missing (a fresh host before
 * scripts/build-cell-image.sh ran): it starts, says why it is not ready, and
 * claims nothing — a RunAction is handed back for retry, the log stays empty.
 */

const quiet = createLogger('executor-test', { level: 'silent' });
let nc: NatsConnection;
let cellsRoot: string;
let config: ExecutorConfig;
let executor: ExecutorApp;
let store: EventStore;

beforeAll(async () => {
  nc = await connectTestNats('executor-readiness');
  cellsRoot = await mkdtemp(path.join(tmpdir(), 'writ-executor-ready-'));
  config = testConfig(cellsRoot, { WRIT_CELL_IMAGE: `writ/cell:${uniqueName('missing')}` });
  executor = await createExecutorApp(config, { logger: quiet, busLogger: quiet, nestLogLevels: false });
  store = await EventStore.open(nc, { stream: config.streams.events, subjectPrefix: config.subjects.eventsPrefix, maxBytes: 64 * 1024 ** 2 });
}, 60_000);

afterAll(async () => {
  await executor?.close();
  if (nc) {
    await deleteStreams(nc, ...testStreams(config));
    await nc.close();
  }
  if (cellsRoot) await rm(cellsRoot, { recursive: true, force: true });
});

describe('an executor without its cell image', () => {
  it('given the image is missing, then /healthz is 200 and /readyz is 503 naming CELL_IMAGE_MISSING and the build script', async () => {
    expect((await fetch(`${executor.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${executor.url}/readyz`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { ready: boolean; checks: Record<string, { ok: boolean; code?: string; message?: string }> };
    expect(body.ready).toBe(false);
    expect(body.checks['cell_image']).toMatchObject({ ok: false, code: 'CELL_IMAGE_MISSING' });
    expect(body.checks['cell_image']?.message).toContain('scripts/build-cell-image.sh');
    expect(body.checks['nats']).toEqual({ ok: true });
    expect(body.checks['consumer']).toEqual({ ok: true });
  });

  it('given a valid grant, when RunAction arrives, then it is retried and nothing is claimed or run', async () => {
    const key = await generateEd25519Key({ kid: 'approval-k1' });
    await registerServicePrincipal(store, { principalId: config.grant.issuer, displayName: 'approval (test)', key });
    const ids = newIds('no-image');
    const grant = await mintGrant(config, { ids, signer: key });
    const client = new BusClient(nc);
    try {
      await client.publish(config.subjects.run, runAction(ids, grant, request(ids)), { msgId: uniqueName('msg') });
    } finally {
      await client.close();
    }
    const jsm = await jetstreamManager(nc);
    // checkpoint: the command was delivered a second time (the first delivery was handed back)
    await waitFor(async () => ((await jsm.consumers.info(config.streams.commands, config.durable)).delivered.consumer_seq >= 2 ? true : undefined), {
      what: 'a redelivery of the RunAction',
      timeoutMs: 20_000,
    });
    expect(await store.read(ids.task_id)).toEqual([]);
  });
});
