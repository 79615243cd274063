import { METRIC_CATALOGUE, exportedBy, seriesNames, startTelemetry, type TelemetryHandle } from '@writ/telemetry';
import { waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { append, createRig, disposeRig, startApp, waitForEvents, type Rig } from '../test/rig.js';
import { commandRequest, evaluateCommandFor, ingressDrafts, taskIds } from '../test/task-fixtures.js';
import type { PolicyApp } from './bootstrap.js';

/**
 * `/metrics` of a real policy service on the real NATS, with telemetry
 * started as `main.ts` starts it: every metric the catalogue says policy
 * exports is on its own HTTP port once the thing it counts has happened, and
 * no series names a task.
 */

let rig: Rig;
let policy: PolicyApp;
let telemetry: TelemetryHandle | undefined;
const unique = (name: string) => `${name}-${Math.random().toString(16).slice(2, 8)}`;

beforeAll(async () => {
  telemetry = startTelemetry({ serviceName: 'policy' });
  rig = await createRig('metrics');
  policy = await startApp(rig);
});

afterAll(async () => {
  await disposeRig(rig);
  await telemetry?.shutdown();
});

/** The sample names of an exposition (comment lines left out). */
function sampleNames(text: string): Set<string> {
  return new Set(
    text
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'))
      .map((line) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0] ?? ''),
  );
}

const policyMetrics = METRIC_CATALOGUE.filter((metric) => exportedBy(metric, 'policy') && metric.when === undefined);

describe('policy /metrics', () => {
  it('given a decision made, a command for an unknown attempt and a message that is not JSON, when /metrics is scraped, then every metric policy exports is there', async () => {
    // given: one decision...
    const ids = taskIds(unique('metrics'));
    const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    await append(rig, ids.task_id, ...ingressDrafts(ids, request));
    await rig.bus.publish(rig.config.subjects.policyEvaluate, evaluateCommandFor(ids, request), { msgId: `${ids.attempt_id}:cmd:policy.evaluate:1` });
    await waitForEvents(rig, ids.task_id, 'policy.evaluated');
    // ... a dead letter (POLICY_ATTEMPT_UNKNOWN) and a quarantined message (not JSON)
    const ghost = taskIds(unique('ghost'));
    await rig.bus.publish(rig.config.subjects.policyEvaluate, evaluateCommandFor(ghost, commandRequest(ghost, ['true'])), { msgId: `${ghost.attempt_id}:cmd` });
    rig.nc.publish(rig.config.subjects.policyEvaluate, new TextEncoder().encode('not json {'));

    // when: scraped until the consumer has been sampled (every WRIT_CONSUMER_STALL_CHECK_MS) and both letters counted
    const wanted = policyMetrics.flatMap((metric) => seriesNames(metric));
    const { response, text } = await waitFor(
      async () => {
        const res = await fetch(`${policy.url}/metrics`);
        const body = await res.text();
        const names = sampleNames(body);
        const letters = body.match(/^writ_dead_letters_total\{.*\} (\d+)$/gm) ?? [];
        return wanted.every((name) => names.has(name)) && letters.length >= 2 ? { response: res, text: body } : undefined;
      },
      { what: `every policy metric on /metrics (${wanted.join(', ')})`, timeoutMs: 20_000, intervalMs: 250 },
    );

    // then
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(text).toMatch(/^writ_policy_decision_duration_seconds_count\{action_class="execute_command",outcome="allow",service_name="policy"\} 1$/m);
    expect(text).toMatch(/^writ_dead_letters_total\{[^}]*reason="POLICY_ATTEMPT_UNKNOWN"[^}]*\} 1$/m);
    expect(text).toMatch(/^writ_dead_letters_total\{[^}]*reason="BUS_PAYLOAD_INVALID"[^}]*\} 1$/m);
    expect(text).toMatch(/^writ_quarantined_messages_total\{service="policy",reason="QUARANTINE_NOT_JSON",service_name="policy"\} 1$/m);
    expect(text).toMatch(/^writ_consumer_pending_messages\{stream="[^"]+",durable="policy",service_name="policy"\} \d+$/m);
    expect(text).toContain('writ_service_ready{service="policy",service_name="policy"} 1');
    // No series names a task or an attempt.
    for (const id of [ids.task_id, ids.attempt_id, ghost.task_id]) expect(text).not.toContain(id);
  });

  it('given no telemetry running in the process (WRIT_METRICS=off, or a test that starts none), when a service starts, then /metrics is not served', async () => {
    await telemetry?.shutdown();
    telemetry = undefined;
    const bare = await startApp(rig);
    expect((await fetch(`${bare.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${bare.url}/healthz`)).status).toBe(200);
  });
});
