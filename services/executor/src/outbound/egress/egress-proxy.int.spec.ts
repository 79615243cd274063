import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressProxy } from './egress-proxy.js';
import { egressRules } from './egress-rules.js';

/** The proxy alone against real local HTTP servers (no Docker): what it forwards, what it refuses. */

let allowed: Server;
let denied: Server;
let allowedHits = 0;
let deniedHits = 0;
let allowedPort = 0;
let deniedPort = 0;
let proxy: EgressProxy;
let proxyPort = 0;
const lines: { level: string; line: Record<string, unknown> }[] = [];

/** A non-loopback address of this host: a granted *name* may not resolve to loopback. */
const HOST_ADDRESS = Object.values(networkInterfaces()).flat().find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address ?? '127.0.0.1';

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  allowed = createServer((req, res) => {
    allowedHits += 1;
    res.end(`allowed ${req.method} ${req.url} host=${req.headers.host}`);
  });
  denied = createServer((_req, res) => {
    deniedHits += 1;
    res.end('denied server reached');
  });
  allowedPort = await listen(allowed);
  deniedPort = await listen(denied);
  proxy = new EgressProxy({
    rules: egressRules([`allowed.test:${allowedPort}`, `127.0.0.1:${allowedPort}`, `localhost:${deniedPort}`]),
    // Test names map to the loopback servers, as a resolver would map them to real hosts.
    lookup: async (host) => (host === 'allowed.test' || host === 'other.test' ? [HOST_ADDRESS] : []),
    logger: { info: (line, _m) => lines.push({ level: 'info', line }), warn: (line, _m) => lines.push({ level: 'warn', line }) },
  });
  proxyPort = await proxy.listen('127.0.0.1');
});

afterAll(async () => {
  await proxy?.close();
  await new Promise<void>((resolve) => allowed.close(() => resolve()));
  await new Promise<void>((resolve) => denied.close(() => resolve()));
});

function viaProxy(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: proxyPort, path: url, method: 'GET', headers: { host: new URL(url).host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** CONNECT host:port, then a plain HTTP request through the tunnel; the whole answer as text. */
function tunnel(target: string, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(proxyPort, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\nGET /tunnel HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

describe('egress proxy', () => {
  it('given a granted name:port, when an absolute-form GET goes through, then the allowed server answers with the Host kept', async () => {
    const before = allowedHits;
    const answer = await viaProxy(`http://allowed.test:${allowedPort}/ok?x=1`);
    expect(answer).toEqual({ status: 200, body: `allowed GET /ok?x=1 host=allowed.test:${allowedPort}` });
    expect(allowedHits).toBe(before + 1);
  });

  it('given a granted IP literal, when CONNECT tunnels to it, then 200 Connection Established and the server answers through the tunnel', async () => {
    const answer = await tunnel(`127.0.0.1:${allowedPort}`, `127.0.0.1:${allowedPort}`);
    expect(answer.startsWith('HTTP/1.1 200 Connection Established\r\n\r\n')).toBe(true);
    expect(answer).toContain('allowed GET /tunnel');
  });

  it('given a host or port not in the grant, when asked either way, then 403, a warn line, and the server sees nothing', async () => {
    const before = deniedHits;
    expect((await viaProxy(`http://other.test:${deniedPort}/`)).status).toBe(403);
    expect((await viaProxy(`http://127.0.0.1:${deniedPort}/`)).status).toBe(403);
    expect((await viaProxy(`http://allowed.test:${deniedPort}/`)).status).toBe(403);
    expect((await tunnel(`127.0.0.1:${deniedPort}`, 'x')).split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');
    expect(deniedHits).toBe(before);
    expect(lines.filter((entry) => entry.level === 'warn' && entry.line.port === deniedPort).length).toBeGreaterThanOrEqual(4);
  });

  it('given a granted name that resolves to loopback, when asked, then 403: a name never leads to the host itself', async () => {
    const before = deniedHits;
    // `localhost:<deniedPort>` is granted by name; the system resolver maps it to 127.0.0.1 / ::1.
    const answer = await new EgressProxy({ rules: egressRules([`localhost:${deniedPort}`]) });
    const port = await answer.listen('127.0.0.1');
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: `http://localhost:${deniedPort}/`, method: 'GET' }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(403);
      expect(answer.decisions.at(-1)).toMatchObject({ allowed: false, host: 'localhost' });
    } finally {
      await answer.close();
    }
    expect(deniedHits).toBe(before);
  });

  it('given https:// in absolute form or an origin-form request, when asked, then 400 and nothing is forwarded', async () => {
    expect((await viaProxy(`https://allowed.test:${allowedPort}/`)).status).toBe(400);
  });
});
