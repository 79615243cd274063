import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { natsConnectOptions } from '@writ/bus';
import { freePort, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busLayout, dashboardPermissions } from './bus-permissions.js';
import { NatsAuthority, pushAccountJwt } from './nats-authority.js';
import { initWritHome, type WritHome } from './writ-home.js';

/**
 * A director's or dashboard's credential is a user of the Writ account: revoking it
 * re-signs that account with a revocation. A server of its own (started and restarted
 * here) shows that the revocation holds across a restart, whose config still preloads
 * the account as `writ init` first wrote it.
 */
let dir: string;
let home: WritHome;
let server: ChildProcess | undefined;

async function startServer(): Promise<void> {
  server = spawn('nats-server', ['-c', home.serverConfig], { stdio: 'ignore' });
  await waitFor(() => connectAs(home.creds.operator).then((nc) => nc.close().then(() => true), () => undefined), { timeoutMs: 15_000, intervalMs: 100, what: "Writ's nats-server" });
}

async function stopServer(): Promise<void> {
  if (server === undefined || server.exitCode !== null) return;
  const exited = once(server, 'exit');
  server.kill('SIGTERM');
  await exited;
}

function connectAs(credsFile: string): Promise<NatsConnection> {
  return connect({ servers: home.natsUrl, reconnect: false, timeout: 2_000, ...natsConnectOptions({ WRIT_NATS_CREDS: credsFile }) });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'writ-revoke-'));
  home = await initWritHome({ home: join(dir, 'writ'), server: { port: await freePort(), monitorPort: await freePort() } });
  await startServer();
}, 60_000);

afterAll(async () => {
  await stopServer();
  await rm(dir, { recursive: true, force: true });
});

describe("revoking a Writ-account user (a director's or dashboard's credential)", () => {
  it('given a dashboard credential issued to a principal, when it is revoked and the server restarts, then it stays refused while the operator and the services still connect', async () => {
    // given a credential issued to a principal, connected
    const authority = await NatsAuthority.load(home.home);
    const creds = new TextEncoder().encode(await authority.issueWritUser('wall-screen', 'wall-screen', dashboardPermissions(busLayout())));
    const live = await connect({ servers: home.natsUrl, reconnect: false, authenticator: credsAuthenticator(creds) });
    // when the operator revokes it and pushes the re-signed account
    const accountJwt = await authority.revokeWritUsers('wall-screen', new Date());
    const system = await connectAs(home.creds.system);
    await pushAccountJwt(system, accountJwt ?? '');
    await system.close();
    // then its live connection is closed at once
    await waitFor(() => (live.isClosed() ? true : undefined), { timeoutMs: 10_000, what: 'the revoked user disconnected' });
    // and after a restart (the config's preload is the account without the revocation) it is still refused
    await stopServer();
    await startServer();
    await expect(connect({ servers: home.natsUrl, reconnect: false, timeout: 2_000, authenticator: credsAuthenticator(creds) })).rejects.toThrow();
    for (const credsFile of [home.creds.operator, home.creds.services.ingress]) await (await connectAs(credsFile)).close();
  }, 60_000);

  it('given a principal never issued a Writ-account credential, then there is nothing to revoke', async () => {
    const authority = await NatsAuthority.load(home.home);
    expect(await authority.revokeWritUsers('nobody-at-all', new Date())).toBeUndefined();
  });
});
