import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { natsConnectOptions } from '@writ/bus';
import { freePort, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initWritHome, type WritHome } from './writ-home.js';

/**
 * TLS for client connections, as documented (docs/security.md): `writ init
 * --tls-cert/--tls-key` writes a server config that requires TLS, and a client
 * trusts it through WRIT_NATS_TLS_CA. A real nats-server on a free port, a CA
 * and a server certificate made here with openssl for this run.
 */
const run = promisify(execFile);
let dir: string;
let home: WritHome;
let server: ChildProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'writ-tls-'));
  const file = (name: string) => join(dir, name);
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=writ-test-ca', '-keyout', file('ca.key'), '-out', file('ca.pem')]);
  await run('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', file('server.key'), '-out', file('server.csr')]);
  await writeFile(file('san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  await run('openssl', ['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '1', '-extfile', file('san.ext'), '-out', file('server.pem')]);
  home = await initWritHome({
    home: join(dir, 'writ'),
    server: { port: await freePort(), monitorPort: await freePort(), tls: { certFile: file('server.pem'), keyFile: file('server.key') } },
  });
  server = spawn('nats-server', ['-c', home.serverConfig], { stdio: 'ignore' });
  await waitFor(async () => (await connect({ servers: home.natsUrl, reconnect: false, timeout: 1_000, ...natsConnectOptions({ WRIT_NATS_CREDS: home.creds.operator, WRIT_NATS_TLS_CA: file('ca.pem') }) }).then((nc) => nc.close().then(() => true), () => undefined)), {
    timeoutMs: 15_000,
    intervalMs: 100,
    what: 'nats-server with TLS',
  });
}, 60_000);

afterAll(async () => {
  server?.kill('SIGTERM');
  await rm(dir, { recursive: true, force: true });
});

describe('TLS for client connections', () => {
  it('given the CA that signed the server certificate, then a credentialed client connects over TLS', async () => {
    const nc = await connect({ servers: home.natsUrl, reconnect: false, ...natsConnectOptions({ WRIT_NATS_CREDS: home.creds.operator, WRIT_NATS_TLS_CA: join(dir, 'ca.pem') }) });
    expect(nc.info?.tls_required).toBe(true);
    await nc.close();
  });

  it('given no trusted CA, then the connection is refused (the server certificate is not trusted)', async () => {
    await expect(connect({ servers: home.natsUrl, reconnect: false, timeout: 3_000, ...natsConnectOptions({ WRIT_NATS_CREDS: home.creds.operator }) })).rejects.toThrow();
  });

  it('given the trusted CA but no credential, then TLS alone does not let anyone in', async () => {
    await expect(connect({ servers: home.natsUrl, reconnect: false, timeout: 3_000, ...natsConnectOptions({ WRIT_NATS_TLS_CA: join(dir, 'ca.pem') }) })).rejects.toThrow(/Authorization Violation/);
  });

  it('given a credential file that does not exist, then BUS_CREDENTIALS_INVALID names the variable, never a secret', () => {
    expect(() => natsConnectOptions({ WRIT_NATS_CREDS: join(dir, 'missing.creds') })).toThrow(/WRIT_NATS_CREDS names .*missing\.creds/);
  });

  it('given the operator credential written by writ init, then the server config names the files it was given', async () => {
    expect(await readFile(home.serverConfig, 'utf8')).toContain(join(dir, 'server.pem'));
  });
});
