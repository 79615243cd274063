import { spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleRequest } from '../../test/grants.js';
import { EgressProxy } from '../outbound/egress/egress-proxy.js';
import { egressRules } from '../outbound/egress/egress-rules.js';
import { HTTP_EXCHANGE_SCRIPT, parseHttpResponse, planHttpExchange, type HttpExchange } from './http-exchange.js';

/**
 * The in-cell half of a network action, without Docker: the exchange script under the host's
 * busybox (the same static binary the cell image carries) through the real egress proxy to a
 * real local server. The Docker path (cell on its egress network) is in executor-network.int.spec.ts.
 */

const HOST_ADDRESS = Object.values(networkInterfaces()).flat().find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address ?? '127.0.0.1';
const TOKEN = `tok-${Math.random().toString(36).slice(2)}`;

let server: Server;
let port = 0;
let proxy: EgressProxy;
let proxyPort = 0;
const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.setHeader('x-served-by', 'test');
      // Written in pieces with no length: chunked towards the proxy, which de-chunks for its HTTP/1.0 client.
      res.write('hello ');
      res.end(`${req.method} ${req.url}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  port = (server.address() as AddressInfo).port;
  proxy = new EgressProxy({ rules: egressRules([`api.test:${port}`]), lookup: async (host) => (host === 'api.test' ? [HOST_ADDRESS] : []) });
  proxyPort = await proxy.listen('127.0.0.1');
});

afterAll(async () => {
  await proxy?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function exchangeOf(params: Record<string, unknown>, actionClass: 'network_read' | 'network_write', handles: string[] = []): HttpExchange {
  const plan = planHttpExchange(sampleRequest({ action_class: actionClass, target_resources: [String(params['url'])], params } as never), [`api.test:${port}`], handles);
  if (!plan.ok) throw new Error(`${plan.code}: ${plan.message}`);
  return plan.exchange;
}

/** Runs the script under the host's busybox (asynchronously: the proxy lives in this process). */
function runInShell(exchange: HttpExchange, env: Record<string, string> = {}, proxied = true): Promise<{ status: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('busybox', ['sh', '-c', HTTP_EXCHANGE_SCRIPT, 'writ-http', exchange.head], {
      env: { PATH: '/usr/bin:/bin', ...(proxied ? { http_proxy: `http://127.0.0.1:${proxyPort}` } : {}), ...env },
      timeout: 20_000,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }));
    // A script that refuses (no proxy, exit 97) ends before it reads the body: its stdin is closed, which is no error here.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(exchange.body);
  });
}

describe('the exchange script through the egress proxy (busybox sh + nc, real servers)', () => {
  it('given a GET of a granted host, when it runs, then the server sees it and the response parses (status, headers, body)', async () => {
    const before = seen.length;
    const ran = await runInShell(exchangeOf({ url: `http://api.test:${port}/items?q=1`, headers: { Accept: 'text/plain' } }, 'network_read'));
    expect(ran.status).toBe(0);
    const response = parseHttpResponse(ran.stdout, false);
    expect(response).toMatchObject({ status: 200, reason: 'OK', body_truncated: false });
    expect(response?.headers).toContainEqual(['x-served-by', 'test']);
    expect(Buffer.from(response?.body ?? []).toString('utf8')).toBe('hello GET /items?q=1');
    expect(seen.slice(before)).toMatchObject([{ method: 'GET', url: '/items?q=1', headers: { accept: 'text/plain', host: `api.test:${port}`, 'user-agent': 'writ-executor' } }]);
  });

  it('given a PATCH with a body and a secret placeholder in a header, when it runs, then the body and the secret value arrive', async () => {
    const before = seen.length;
    const exchange = exchangeOf({ url: `http://api.test:${port}/doc`, method: 'PATCH', body: '{"a":1}', headers: { Authorization: 'Bearer {{secret:deploy_token}}' }, secret_handles: ['deploy_token'] }, 'network_write', ['deploy_token']);
    expect(exchange.head).not.toContain(TOKEN);
    const ran = await runInShell(exchange, { WRIT_SECRET_DEPLOY_TOKEN: TOKEN });
    expect(ran.status).toBe(0);
    expect(parseHttpResponse(ran.stdout, false)?.status).toBe(200);
    expect(seen.slice(before)).toMatchObject([{ method: 'PATCH', url: '/doc', body: '{"a":1}', headers: { authorization: `Bearer ${TOKEN}`, 'content-length': '7' } }]);
  });

  it('given a secret value with a line break, when it runs, then nothing is sent (exit 98)', async () => {
    const before = seen.length;
    const exchange = exchangeOf({ url: `http://api.test:${port}/x`, headers: { 'X-Token': '{{secret:t}}' }, secret_handles: ['t'] }, 'network_read', ['t']);
    const ran = await runInShell(exchange, { WRIT_SECRET_T: 'a\r\nX-Injected: 1' });
    expect(ran.status).toBe(98);
    expect(seen.length).toBe(before);
  });

  it('given no proxy in the environment, when it runs, then exit 97 and nothing is sent', async () => {
    const before = seen.length;
    const exchange = exchangeOf({ url: `http://api.test:${port}/x` }, 'network_read');
    const ran = await runInShell(exchange, {}, false);
    expect(ran.status).toBe(97);
    expect(seen.length).toBe(before);
  });

  it('given a host the proxy does not allow, when the head names it anyway, then the proxy answers 403 and the server sees nothing', async () => {
    const before = seen.length;
    const ran = await runInShell({ method: 'GET', url: `http://other.test:${port}/`, head: `GET http://other.test:${port}/ HTTP/1.0\nHost: other.test:${port}`, body: new Uint8Array() });
    expect(parseHttpResponse(ran.stdout, false)?.status).toBe(403);
    expect(seen.length).toBe(before);
  });
});
