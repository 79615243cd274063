import type { NatsConnection } from '@nats-io/transport-node';
import type { JetStreamServerStatus } from '@writ/bus';
import { describe, expect, it } from 'vitest';
import { BusWatch, ReadinessRegistry, natsConnected, type BusServer } from './readiness.js';

/** A bus server whose status and bound consumers the test sets. */
function fakeServer() {
  const observers = new Set<(status: JetStreamServerStatus) => void>();
  const durables: string[] = [];
  const server: BusServer = {
    status: {
      subscribe(observer) {
        observers.add(observer);
        return { unsubscribe: () => observers.delete(observer) };
      },
    },
    boundConsumers: () => durables.map((durable) => ({ pattern: `p.${durable}`, durable })),
  };
  return {
    server,
    emit: (status: JetStreamServerStatus) => observers.forEach((observer) => observer(status)),
    bind: (durable: string) => durables.push(durable),
    watchers: () => observers.size,
  };
}

describe('ReadinessRegistry', () => {
  it('given no checks, then ready', () => {
    expect(new ReadinessRegistry().report()).toEqual({ ready: true, status: 'ready', checks: {} });
  });

  it('given checks, then each value is shown and the process is ready only when all pass', () => {
    let bound = false;
    const registry = new ReadinessRegistry()
      .add('nats_connected', () => true)
      .add('consumers_bound', () => ({ ok: bound, value: bound ? ['policy'] : [] }));
    expect(registry.report()).toEqual({ ready: false, status: 'not_ready', checks: { nats_connected: true, consumers_bound: [] } });
    bound = true;
    expect(registry.report()).toEqual({ ready: true, status: 'ready', checks: { nats_connected: true, consumers_bound: ['policy'] } });
  });

  it('given a check added again, then it replaces the first in its place', () => {
    const registry = new ReadinessRegistry().add('a', () => false).add('b', () => true).add('a', () => true);
    expect(Object.keys(registry.report().checks)).toEqual(['a', 'b']);
    expect(registry.report().ready).toBe(true);
  });
});

describe('natsConnected', () => {
  it('given an open, a draining and a closed connection, then only the open one passes', () => {
    const nc = (closed: boolean, draining: boolean) => ({ isClosed: () => closed, isDraining: () => draining }) as unknown as NatsConnection;
    expect(natsConnected(nc(false, false))()).toBe(true);
    expect(natsConnected(nc(false, true))()).toBe(false);
    expect(natsConnected(nc(true, false))()).toBe(false);
  });
});

describe('BusWatch', () => {
  it('given no server yet, then not started and nothing bound', () => {
    const bus = new BusWatch();
    expect(bus.statusCheck()()).toEqual({ ok: false, value: 'not_started' });
    expect(bus.durablesCheck(1)()).toEqual({ ok: false, value: [] });
    expect(bus.boundCheck(1)()).toBe(false);
  });

  it('given a server that connects and binds its consumers, then the checks follow it', () => {
    const bus = new BusWatch();
    const fake = fakeServer();
    bus.attach(fake.server);
    fake.emit('connecting');
    fake.bind('approval__a');
    expect(bus.statusCheck()()).toEqual({ ok: false, value: 'connecting' });
    expect(bus.boundCheck(1)()).toBe(false);
    fake.emit('connected');
    expect(bus.statusCheck()()).toEqual({ ok: true, value: 'connected' });
    expect(bus.boundCheck(2)()).toBe(false);
    fake.bind('approval__b');
    expect(bus.boundCheck(2)()).toBe(true);
    expect(bus.durablesCheck(2)()).toEqual({ ok: true, value: ['approval__a', 'approval__b'] });
  });

  it('given it detaches, then it stops listening and keeps the last status', () => {
    const bus = new BusWatch();
    const fake = fakeServer();
    bus.attach(fake.server);
    fake.emit('connected');
    bus.detach();
    expect(fake.watchers()).toBe(0);
    fake.emit('closed');
    expect(bus.status).toBe('connected');
  });
});
