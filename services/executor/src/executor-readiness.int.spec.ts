import 'reflect-metadata';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutorApp } from './bootstrap.js';
import { ExecutorRig, newIds, request, runAction } from '../test/executor-rig.js';

/**
 * An executor whose cell image is missing (a fresh host before
 * scripts/build-cell-image.sh ran): it starts, says why it is not ready, and
 * claims nothing — a RunAction is handed back for retry, the log stays empty.
 */

const rig = new ExecutorRig();
let executor: ExecutorApp;

beforeAll(async () => {
  [executor] = await rig.start('executor-readiness', { cellsRoots: ['writ-executor-ready-'], env: { WRIT_CELL_IMAGE: `writ/cell:${uniqueName('missing')}` }, cellImage: false });
}, 60_000);

afterAll(() => rig.close());

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
    await rig.registerApprovalKey('approval-k1', 'approval (test)');
    const ids = newIds('no-image');
    const grant = await rig.mint({ ids });
    await rig.publishRunAction(runAction(ids, grant, request(ids)));
    // checkpoint: the command was delivered a second time (the first delivery was handed back)
    await waitFor(async () => ((await rig.jsm.consumers.info(rig.config.streams.commands, rig.config.durable)).delivered.consumer_seq >= 2 ? true : undefined), {
      what: 'a redelivery of the RunAction',
      timeoutMs: 20_000,
    });
    expect(await rig.store.read(ids.task_id)).toEqual([]);
  });
});
