import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectBus } from '@writ/bus';
import { hasErrorCode } from '@writ/contracts';
import { freePort } from '@writ/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initWritHome, type WritHome } from './writ-home.js';

/**
 * A service started while Writ's nats-server is down or restarting (both crashed, a node
 * replaced) waits for it and for its JetStream instead of exiting (chaos run, issue 13:
 * an orchestrator restarted during a server restart died on its first stream call and
 * every task stopped). A server of its own, started late here.
 */
let dir: string;
let home: WritHome;
let server: ChildProcess | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'writ-bus-start-'));
  home = await initWritHome({ home: join(dir, 'writ'), server: { port: await freePort(), monitorPort: await freePort() } });
});

afterEach(async () => {
  if (server !== undefined && server.exitCode === null) {
    const exited = once(server, 'exit');
    server.kill('SIGTERM');
    await exited;
  }
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('connectBus at a service start', () => {
  it('given the server is down when the service starts, when it comes up a moment later, then the service connects and its JetStream answers', async () => {
    // given no server yet; a service starts
    const waits: string[] = [];
    const connecting = connectBus({ servers: home.natsUrl, name: 'late-start' }, { WRIT_NATS_CREDS: home.creds.services.orchestrator }, { waitForServer: true, onWait: (reason) => waits.push(reason) });
    // when the server starts after the first refusals
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    server = spawn('nats-server', ['-c', home.serverConfig], { stdio: 'ignore' });
    // then it connects, and JetStream already serves it
    const nc = await connecting;
    try {
      expect(waits[0]).toMatch(/did not accept the connection/);
      expect((await (await jetstreamManager(nc)).getAccountInfo()).streams).toBeGreaterThanOrEqual(0);
    } finally {
      await nc.close();
    }
  }, 60_000);

  it('given a service connected, when the server stays down past the client library\'s 10 reconnect attempts, then the service reconnects once it is back instead of closing for good', async () => {
    // given a connected service (attempts 50 ms apart: the library's 10 would be spent in half a second)
    server = spawn('nats-server', ['-c', home.serverConfig], { stdio: 'ignore' });
    const nc = await connectBus({ servers: home.natsUrl, name: 'outlives-an-outage', reconnectTimeWait: 50, reconnectJitter: 0 }, { WRIT_NATS_CREDS: home.creds.services.orchestrator }, { waitForServer: true });
    try {
      // when the server is down for two seconds (about 40 attempts)
      const exited = once(server, 'exit');
      server.kill('SIGKILL');
      await exited;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(nc.isClosed()).toBe(false);
      const reconnected = (async () => {
        for await (const status of nc.status()) if (status.type === 'reconnect') return true;
        return false;
      })();
      server = spawn('nats-server', ['-c', home.serverConfig], { stdio: 'ignore' });
      // then it reconnects on its own and JetStream serves it again
      expect(await reconnected).toBe(true);
      await nc.flush();
      expect(nc.isClosed()).toBe(false);
    } finally {
      await nc.close();
    }
  }, 60_000);

  it('given WRIT_NATS_URL names several servers separated by commas (a cluster), when the first does not answer, then the service connects to another', async () => {
    server = spawn('nats-server', ['-c', home.serverConfig], { stdio: 'ignore' });
    const nc = await connectBus({ servers: `nats://127.0.0.1:${await freePort()}, ${home.natsUrl}`, name: 'cluster-list' }, { WRIT_NATS_CREDS: home.creds.services.orchestrator }, { waitForServer: true });
    try {
      expect(nc.getServer()).toBe(home.natsUrl.replace(/^nats:\/\//, ''));
    } finally {
      await nc.close();
    }
  }, 60_000);

  it('given no server within WRIT_BUS_START_TIMEOUT_MS, then BUS_CONNECTION_FAILED names the setting and the script that starts it', async () => {
    const failure = await connectBus({ servers: home.natsUrl }, { WRIT_NATS_CREDS: home.creds.services.orchestrator, WRIT_BUS_START_TIMEOUT_MS: '600' }, { waitForServer: true }).catch((error: unknown) => error);
    expect(hasErrorCode(failure, 'BUS_CONNECTION_FAILED')).toBe(true);
    expect((failure as Error).message).toMatch(/WRIT_BUS_START_TIMEOUT_MS.*scripts\/writ-nats\.sh/);
  });

  it('given a client that is not a service starting (the CLI), then a refused connection fails at once', async () => {
    const startedAt = performance.now();
    await expect(connectBus({ servers: home.natsUrl }, { WRIT_NATS_CREDS: home.creds.operator })).rejects.toThrow(/refused/);
    // Not a timing assertion on the machine's speed: only that it did not wait out the 60 s start window.
    expect(performance.now() - startedAt).toBeLessThan(30_000);
  });
});
