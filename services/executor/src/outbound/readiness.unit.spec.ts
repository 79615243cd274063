import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import type { CellPort } from '../application/ports.js';
import { ExecutorReadiness, type StalledConsumers } from './readiness.js';

const connected = { isClosed: () => false, isDraining: () => false, flush: async () => undefined } as unknown as NatsConnection;
const imageBuilt = { ensureImage: async () => undefined } as unknown as CellPort;

function readyExecutor(stalls: StalledConsumers): ExecutorReadiness {
  const readiness = new ExecutorReadiness(connected, imageBuilt, 'executor');
  readiness.markStreamsEnsured();
  readiness.markArtifactsEnsured();
  readiness.attachBus({ boundConsumers: () => [{ pattern: 'writ.cmd.executor.run', durable: 'executor' }] });
  readiness.watchStalls(stalls);
  return readiness;
}

describe('executor readiness', () => {
  it('given its durables moving, then it is ready', async () => {
    // given a bound durable and a stall watch that finds nothing stalled
    const readiness = readyExecutor({ stalled: [] });
    // when /readyz is asked
    const report = await readiness.check();
    // then every check passes
    expect(report.ready).toBe(true);
    expect(report.checks.consumers_stalled).toEqual({ ok: true });
  });

  it('given a durable stalled past WRIT_CONSUMER_STALL_SECONDS, then it is not ready and consumers_stalled names the durable, as in every service', async () => {
    // given the stall watch's last sample: the RunAction durable with work waiting and no ack for 130 s
    const readiness = readyExecutor({ stalled: [{ durable: 'executor', pending: 3, stuckMs: 130_000 }] });
    // when /readyz is asked
    const report = await readiness.check();
    // then it is not ready, and the check names the durable and how long
    expect(report.ready).toBe(false);
    expect(report.checks.consumers_stalled).toMatchObject({ ok: false, code: 'EXECUTOR_NOT_READY' });
    expect(report.checks.consumers_stalled.message).toContain('executor: 3 message(s) waiting, no progress for 130 s');
  });
});
