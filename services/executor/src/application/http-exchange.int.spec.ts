import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleRequest } from '../../test/grants.js';
import { closeServer, listenAnywhere, recordRequests, type SeenRequest } from '../../test/recording-server.js';
import { TestPki, type TestCa } from '../../test/test-pki.js';
import { EgressProxy } from '../outbound/egress/egress-proxy.js';
import { egressRules } from '../outbound/egress/egress-rules.js';
import { HTTPS_EXIT, httpExchangeArgv, parseHttpResponse, planHttpExchange, type HttpExchange } from './http-exchange.js';

/**
 * The in-cell half of a network action, without Docker: the exchange scripts under the host's
 * busybox (the same static binary the cell image carries) and, for https, the host's curl (the
 * Debian 12 build the image unpacks) through the real egress proxy to real local servers. The
 * Docker path (cell on its egress network) is in executor-actions.int.spec.ts.
 */

const HOST_ADDRESS = Object.values(networkInterfaces()).flat().find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address ?? '127.0.0.1';
const TOKEN = `tok-${Math.random().toString(36).slice(2)}`;

let server: Server;
let port = 0;
let proxy: EgressProxy;
let proxyPort = 0;
const seen: SeenRequest[] = [];
let pki: TestPki;
let ca: TestCa;
let tlsServer: HttpsServer;
let tlsPort = 0;
/** TLS handshakes the https server completed (a request reaches `tlsSeen` only after one). */
let handshakes = 0;
const tlsSeen: SeenRequest[] = [];
let curlHome: string;

beforeAll(async () => {
  server = createServer(
    recordRequests(seen, (req, res) => {
      res.setHeader('x-served-by', 'test');
      // Written in pieces with no length: chunked towards the proxy, which de-chunks for its HTTP/1.0 client.
      res.write('hello ');
      res.end(`${req.method} ${req.url}`);
    }),
  );
  port = await listenAnywhere(server);

  // One https server, its certificate chosen by the name the client asks for (SNI): api.test is
  // issued by the test CA; untrusted.test by a CA nobody trusts; wrong.test gets api.test's.
  pki = new TestPki();
  ca = pki.createCa('writ-test-ca');
  const trusted = pki.issueServerCert(ca, ['api.test']);
  const untrusted = pki.issueServerCert(pki.createCa('writ-untrusted-ca'), ['untrusted.test']);
  tlsServer = createHttpsServer(
    { cert: trusted.certPem, key: trusted.keyPem, SNICallback: (name, done) => done(null, name === 'untrusted.test' ? untrusted.context : trusted.context) },
    recordRequests(tlsSeen, (req, res) => {
      res.setHeader('x-served-by', 'tls-test');
      // Chunked towards curl, which relays it raw (--raw): parseHttpResponse de-chunks.
      res.write('secure ');
      res.end(`${req.method} ${req.url}`);
    }),
  );
  tlsServer.on('secureConnection', () => {
    handshakes += 1;
  });
  tlsPort = await listenAnywhere(tlsServer);
  curlHome = await mkdtemp(path.join(tmpdir(), 'writ-curl-home-'));

  const names = new Set(['api.test', 'untrusted.test', 'wrong.test']);
  proxy = new EgressProxy({
    rules: egressRules([`api.test:${port}`, `*.test:${tlsPort}`]),
    lookup: async (host) => (names.has(host) ? [HOST_ADDRESS] : []),
  });
  proxyPort = await proxy.listen('127.0.0.1');
});

afterAll(async () => {
  await proxy?.close();
  await closeServer(server);
  await closeServer(tlsServer);
  pki?.remove();
  if (curlHome) await rm(curlHome, { recursive: true, force: true });
});

function exchangeOf(params: Record<string, unknown>, actionClass: 'network_read' | 'network_write', handles: string[] = []): HttpExchange {
  const plan = planHttpExchange(sampleRequest({ action_class: actionClass, target_resources: [String(params['url'])], params } as never), [`api.test:${port}`, `*.test:${tlsPort}`], handles);
  if (!plan.ok) throw new Error(`${plan.code}: ${plan.message}`);
  return plan.exchange;
}

interface ShellRun {
  readonly extraCaPem?: string;
  readonly actionClass?: 'network_read' | 'network_write';
}

/** Runs the script of the exchange's scheme under the host's busybox (asynchronously: the proxy lives in this process). */
function runInShell(exchange: HttpExchange, env: Record<string, string> = {}, proxied = true, run: ShellRun = {}): Promise<{ status: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const argv = httpExchangeArgv(run.actionClass ?? 'network_read', exchange, run.extraCaPem);
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;
    const child = spawn('busybox', argv, {
      // As in the cell: the egress variables, curl's HOME being a directory the action could write.
      env: { PATH: '/usr/bin:/bin', HOME: curlHome, ...(proxied ? { http_proxy: proxyUrl, https_proxy: proxyUrl } : {}), ...env },
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
    const ran = await runInShell({ method: 'GET', url: `http://other.test:${port}/`, tls: false, head: `GET http://other.test:${port}/ HTTP/1.0\nHost: other.test:${port}`, body: new Uint8Array() });
    expect(parseHttpResponse(ran.stdout, false)?.status).toBe(403);
    expect(seen.length).toBe(before);
  });
});

describe('the https exchange script: curl through the egress proxy (CONNECT), verifying the server (host curl, real servers)', () => {
  const tlsUrl = (host: string, rest = '/') => `https://${host}:${tlsPort}${rest}`;

  it('given a GET of a server issued by the extra CA, when it runs with that CA, then the server sees it and the response parses (status, headers, de-chunked body)', async () => {
    const before = tlsSeen.length;
    const exchange = exchangeOf({ url: tlsUrl('api.test', '/items?q=1'), headers: { Accept: 'text/plain' } }, 'network_read');
    const ran = await runInShell(exchange, {}, true, { extraCaPem: ca.certPem });
    expect(ran.stderr).toBe('');
    expect(ran.status).toBe(0);
    const response = parseHttpResponse(ran.stdout, false);
    expect(response).toMatchObject({ http_version: 'HTTP/1.1', status: 200, body_truncated: false });
    expect(response?.headers).toContainEqual(['x-served-by', 'tls-test']);
    expect(Buffer.from(response?.body ?? []).toString('utf8')).toBe('secure GET /items?q=1');
    expect(tlsSeen.slice(before)).toMatchObject([{ method: 'GET', url: '/items?q=1', headers: { accept: 'text/plain', host: `api.test:${tlsPort}`, 'user-agent': 'writ-executor' } }]);
  });

  it('given a HEAD, when it runs, then the server sees HEAD and curl does not wait for a body', async () => {
    const before = tlsSeen.length;
    const ran = await runInShell(exchangeOf({ url: tlsUrl('api.test'), method: 'HEAD' }, 'network_read'), {}, true, { extraCaPem: ca.certPem });
    expect(ran.status).toBe(0);
    expect(parseHttpResponse(ran.stdout, false)?.status).toBe(200);
    expect(tlsSeen.slice(before)).toMatchObject([{ method: 'HEAD' }]);
  });

  it('given a PATCH with a body and a secret placeholder in a header, when it runs, then the body and the secret value arrive, without curl\'s own Accept, form Content-Type or Expect', async () => {
    const before = tlsSeen.length;
    const exchange = exchangeOf({ url: tlsUrl('api.test', '/doc'), method: 'PATCH', body: '{"a":1}', headers: { Authorization: 'Bearer {{secret:deploy_token}}', 'X-Empty': '' }, secret_handles: ['deploy_token'] }, 'network_write', ['deploy_token']);
    expect(exchange.head).not.toContain(TOKEN);
    const ran = await runInShell(exchange, { WRIT_SECRET_DEPLOY_TOKEN: TOKEN }, true, { extraCaPem: ca.certPem, actionClass: 'network_write' });
    expect(ran.status).toBe(0);
    expect(parseHttpResponse(ran.stdout, false)?.status).toBe(200);
    const [got] = tlsSeen.slice(before);
    expect(got).toMatchObject({ method: 'PATCH', url: '/doc', body: '{"a":1}', headers: { authorization: `Bearer ${TOKEN}`, 'content-length': '7', 'x-empty': '' } });
    expect(got?.headers).not.toHaveProperty('accept');
    expect(got?.headers).not.toHaveProperty('content-type');
    expect(got?.headers).not.toHaveProperty('expect');
  });

  it.each([
    ['the extra CA is not handed over (public roots only)', 'api.test', false],
    ['the server\'s CA is not the trusted one', 'untrusted.test', true],
    ['the certificate names another host', 'wrong.test', true],
  ] as const)('given %s, when it runs, then curl exits 60 and the server\'s handler sees nothing (not even the secret header)', async (_note, host, withCa) => {
    const before = tlsSeen.length;
    const exchange = exchangeOf({ url: tlsUrl(host, '/x'), method: 'POST', body: 'b', headers: { 'X-Token': '{{secret:t}}' }, secret_handles: ['t'] }, 'network_write', ['t']);
    const ran = await runInShell(exchange, { WRIT_SECRET_T: TOKEN }, true, { actionClass: 'network_write', ...(withCa ? { extraCaPem: ca.certPem } : {}) });
    expect(ran.status).toBe(HTTPS_EXIT.peerFailedVerification);
    expect(ran.stdout.byteLength).toBe(0);
    expect(ran.stderr).toMatch(/^curl: \(60\) /);
    expect(tlsSeen.length).toBe(before);
  });

  it('given a .curlrc in curl\'s HOME that turns verification off, when it runs, then it is ignored and the untrusted server is still refused', async () => {
    await writeFile(path.join(curlHome, '.curlrc'), 'insecure\nproxy = ""\n');
    try {
      const before = tlsSeen.length;
      const ran = await runInShell(exchangeOf({ url: tlsUrl('untrusted.test') }, 'network_read'), {}, true, { extraCaPem: ca.certPem });
      expect(ran.status).toBe(HTTPS_EXIT.peerFailedVerification);
      expect(tlsSeen.length).toBe(before);
    } finally {
      await rm(path.join(curlHome, '.curlrc'), { force: true });
    }
  });

  it('given a secret value with a line break, when it runs, then nothing is sent: no handshake, exit 98', async () => {
    const before = handshakes;
    const exchange = exchangeOf({ url: tlsUrl('api.test'), headers: { 'X-Token': '{{secret:t}}' }, secret_handles: ['t'] }, 'network_read', ['t']);
    const ran = await runInShell(exchange, { WRIT_SECRET_T: 'a\nX-Injected: 1' }, true, { extraCaPem: ca.certPem });
    expect(ran.status).toBe(HTTPS_EXIT.secretLineBreak);
    expect(handshakes).toBe(before);
  });

  it('given no proxy in the environment, when it runs, then exit 97 and no handshake', async () => {
    const before = handshakes;
    const ran = await runInShell(exchangeOf({ url: tlsUrl('api.test') }, 'network_read'), {}, false, { extraCaPem: ca.certPem });
    expect(ran.status).toBe(HTTPS_EXIT.noProxy);
    expect(handshakes).toBe(before);
  });

  it('given a host the proxy does not allow, when the exchange names it anyway, then the tunnel is refused and no handshake happens', async () => {
    const before = handshakes;
    const ran = await runInShell({ method: 'GET', url: `https://other.example:${tlsPort}/`, tls: true, head: 'User-Agent: writ-executor', body: new Uint8Array() }, {}, true, { extraCaPem: ca.certPem });
    expect(ran.status).not.toBe(0);
    expect(parseHttpResponse(ran.stdout, false)).toBeUndefined();
    expect(handshakes).toBe(before);
  });
});
