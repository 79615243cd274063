import { METRIC_CATALOGUE, exportedBy, startTelemetry, type TelemetryHandle } from '@writ/telemetry';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalPath, at, storyIds } from '../test/governed-path.fixture.js';
import { createRig, type Rig } from '../test/projection-rig.js';
import type { ProjectionApp } from './bootstrap.js';
import { TypeormProjectionStore } from './outbound/database/typeorm-projection-store.js';

/**
 * `/metrics` of a real projection on the real NATS and Postgres, telemetry
 * started as `main.ts` starts it: its lag and the pending approvals, counted
 * in the views by the same query every scrape runs.
 */

let rig: Rig;
let app: ProjectionApp;
let telemetry: TelemetryHandle | undefined;

beforeAll(async () => {
  telemetry = startTelemetry({ serviceName: 'projection' });
  rig = await createRig();
  app = await rig.start();
});

afterAll(async () => {
  await rig?.dispose();
  await telemetry?.shutdown();
});

/** The value of one unlabelled (but for service_name) sample. */
function sample(text: string, name: string): number | undefined {
  const match = new RegExp(`^${name}\\{service_name="projection"\\} (\\S+)$`, 'm').exec(text);
  return match === null ? undefined : Number(match[1]);
}

describe('projection /metrics', () => {
  it('given two approvals waiting for a director, folded into the views, when /metrics is scraped, then it shows them, the oldest one\'s age and no lag', async () => {
    // given
    const first = storyIds(uniqueName('pend'));
    const second = storyIds(uniqueName('pend'));
    await rig.caughtUp(await rig.append([...approvalPath(first), ...approvalPath(second)]));

    // when
    const text = await waitFor(
      async () => {
        const body = await (await fetch(`${app.url}/metrics`)).text();
        return sample(body, 'writ_approvals_pending') === 2 && sample(body, 'writ_projection_lag_events') === 0 ? body : undefined;
      },
      { what: 'two pending approvals and no lag on /metrics', timeoutMs: 20_000, intervalMs: 250 },
    );

    // then: both requested at at(6) of the fixture's clock, which runs in 2030: an age in the future reads 0
    expect(await app.app.get(TypeormProjectionStore).pendingApprovals()).toEqual({ count: 2, oldestRequestedAt: new Date(at(6)) });
    expect(sample(text, 'writ_approvals_pending_oldest_age_seconds')).toBe(0);
    expect(sample(text, 'writ_projection_lag_seconds')).toBe(0);
    const projectionOwn = METRIC_CATALOGUE.filter((metric) => exportedBy(metric, 'projection') && metric.services !== 'all').map((metric) => metric.name);
    for (const name of [...projectionOwn, 'writ_service_ready']) expect(text, name).toMatch(new RegExp(`^${name}\\{`, 'm'));
    for (const id of [first.task, first.approval]) expect(text).not.toContain(id);
  });
});
