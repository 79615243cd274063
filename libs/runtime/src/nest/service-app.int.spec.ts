import type { NatsConnection } from '@nats-io/transport-node';
import { Controller, Inject, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { BusClient, DeadLetterHeaders, busOptions } from '@writ/bus';
import { WritError, hasErrorCode } from '@writ/contracts';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quiet, testStreams } from '../../test/test-streams.js';
import { ServiceRuntime } from '../service-runtime.js';
import { HealthController } from './health.controller.js';
import { runtimeProviders, startServiceApp, type ServiceApp } from './service-app.js';

/**
 * A probe service on the shared runtime and app, against the real NATS on a
 * test-unique subject root and streams: what every service gets from them.
 */

const root = uniqueName('t');
const streams = testStreams(root);
const runSubject = `${root}.cmd.probe.run`;
const askSubject = `${root}.qry.probe.ask`;

let nc: NatsConnection;
let bus: BusClient;
const handled: unknown[] = [];
let bootstraps = 0;

class ProbeError extends WritError<'PROBE_BROKEN'> {}

@Controller()
class ProbeListener {
  @EventPattern<string>(runSubject, busOptions({ stream: streams.commands, deadLetterSubject: `${root}.dlq.probe.run`, errorActions: { PROBE_BROKEN: 'dead-letter' } }))
  async run(@Payload() body: { fail?: boolean }): Promise<void> {
    if (body.fail === true) throw new ProbeError('PROBE_BROKEN', 'the probe was told to fail');
    handled.push(body);
  }

  @MessagePattern(askSubject)
  async ask(@Payload() body: { fail?: boolean }): Promise<{ answer: number }> {
    if (body.fail === true) throw new ProbeError('PROBE_BROKEN', 'the probe was told to fail');
    return { answer: 42 };
  }
}

class BootCounter implements OnApplicationBootstrap {
  onApplicationBootstrap(): void {
    bootstraps += 1;
  }
}

@Module({})
class ProbeModule {
  static register(runtime: ServiceRuntime): DynamicModule {
    return {
      module: ProbeModule,
      controllers: [HealthController, ProbeListener],
      providers: [...runtimeProviders(runtime), { provide: BootCounter, useValue: new BootCounter() }],
    };
  }
}

async function startProbe(): Promise<{ runtime: ServiceRuntime; service: ServiceApp }> {
  const runtime = await ServiceRuntime.start({ serviceName: 'probe', natsUrl: NATS_URL, subjectRoot: root, streams, logger: quiet });
  runtime.readiness.add('consumers_bound', runtime.bus.boundCheck(1));
  const service = await startServiceApp({
    serviceName: 'probe',
    runtime,
    module: ProbeModule.register(runtime),
    http: { host: '127.0.0.1', port: 0 },
    logger: quiet,
    nestLogger: false,
    bus: { pullExpiresMs: 1_000 },
  });
  return { runtime, service };
}

beforeAll(async () => {
  nc = await connectTestNats('runtime-service-app');
  bus = new BusClient(nc);
});

afterAll(async () => {
  await bus?.close();
  if (nc !== undefined) {
    await deleteStreams(nc, streams.events, streams.ingress, streams.commands, streams.dlq);
    await nc.close();
  }
});

describe('startServiceApp', () => {
  let probe: { runtime: ServiceRuntime; service: ServiceApp };

  beforeAll(async () => {
    handled.length = 0;
    bootstraps = 0;
    probe = await startProbe();
  });

  afterAll(async () => {
    await probe?.service.close();
  });

  it('given it started, then the init hooks ran once and /healthz and /readyz answer with the checks', async () => {
    expect(bootstraps).toBe(1);
    expect(probe.service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${probe.service.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${probe.service.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, status: 'ready', checks: { nats_connected: true, streams_ensured: true, quarantined: { total: 0 }, consumers_stalled: [], consumers_bound: true } });
  });

  it('given a command, then its handler runs; given one that fails with a code, then the code reaches the ack table (dead-lettered at once)', async () => {
    await bus.publish(runSubject, { n: 1 }, { msgId: uniqueName('ok') });
    await waitFor(async () => (handled.length === 1 ? true : undefined), { what: 'the probe command handled' });

    await bus.publish(runSubject, { fail: true }, { msgId: uniqueName('fail') });
    const letter = await waitFor(
      async () => (await probe.runtime.jsm.streams.getMessage(streams.dlq, { last_by_subj: `${root}.dlq.probe.run` }).catch(() => null)) ?? undefined,
      { what: 'the dead letter' },
    );
    expect(letter.header.get(DeadLetterHeaders.ERROR_CODE)).toBe('PROBE_BROKEN');
    expect(letter.header.get(DeadLetterHeaders.REASON)).toBe('terminal');
    expect(letter.header.get(DeadLetterHeaders.DELIVERY_COUNT)).toBe('1');
  });

  it('given a request that fails with a code, then the reply carries it', async () => {
    await expect(bus.request(askSubject, {})).resolves.toEqual({ answer: 42 });
    await expect(bus.request(askSubject, { fail: true })).rejects.toSatisfy((error) => hasErrorCode(error, 'PROBE_BROKEN'));
  });

  it('given it closes, then the bus drains, HTTP closes and the runtime closes with it; closing again is harmless', async () => {
    const { runtime, service } = await startProbe();
    await service.close();
    await service.close();
    expect(runtime.nc.isClosed()).toBe(true);
    expect(runtime.bus.status).not.toBe('connected');
    await expect(fetch(`${service.url}/healthz`)).rejects.toThrow();
  });

  it('given a start that fails once HTTP listens and a shutdown hook that never returns, then the error is thrown after the cleanup deadline (the process can exit)', async () => {
    // given a module whose shutdown never finishes, and a catch-up before the consumers that fails
    class NeverStops implements OnApplicationShutdown {
      onApplicationShutdown(): Promise<void> {
        return new Promise(() => undefined);
      }
    }
    const runtime = await ServiceRuntime.start({ serviceName: 'probe', natsUrl: NATS_URL, subjectRoot: root, streams, logger: quiet });
    const stuck: DynamicModule = { module: ProbeModule, controllers: [HealthController], providers: [...runtimeProviders(runtime), { provide: NeverStops, useValue: new NeverStops() }] };
    // when it starts
    const started = startServiceApp({
      serviceName: 'probe',
      runtime,
      module: stuck,
      http: { host: '127.0.0.1', port: 0 },
      logger: quiet,
      nestLogger: false,
      cleanupDeadlineMs: 500,
      beforeConsumers: async () => {
        throw new ProbeError('PROBE_BROKEN', 'the catch-up failed');
      },
    });
    // then it fails with the start's error, and the runtime is closed
    await expect(started).rejects.toSatisfy((error) => hasErrorCode(error, 'PROBE_BROKEN'));
    expect(runtime.nc.isClosed()).toBe(true);
  }, 30_000);

  it('given the composition root cannot be built, then the runtime is closed and the error thrown', async () => {
    const runtime = await ServiceRuntime.start({ serviceName: 'probe', natsUrl: NATS_URL, subjectRoot: root, streams, logger: quiet });
    const broken: DynamicModule = { module: ProbeModule, controllers: [ProbeListener], providers: [{ provide: 'NEEDS', useFactory: (x: unknown) => x, inject: ['MISSING'] }] };
    @Controller()
    class NeedsMissing {
      constructor(@Inject('NEEDS') readonly needs: unknown) {}
    }
    await expect(
      startServiceApp({ serviceName: 'probe', runtime, module: { ...broken, controllers: [NeedsMissing] }, http: { host: '127.0.0.1', port: 0 }, logger: quiet, nestLogger: false }),
    ).rejects.toBeDefined();
    expect(runtime.nc.isClosed()).toBe(true);
  });
});
