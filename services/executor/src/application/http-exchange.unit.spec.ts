import type { ActionRequest } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { sampleRequest } from '../../test/grants.js';
import { planAction } from './action-plan.js';
import { HTTP_EXCHANGE_SCRIPT, HTTPS_EXCHANGE_SCRIPT, HTTPS_EXIT, httpExchangeProblem, parseHttpResponse, planHttpExchange } from './http-exchange.js';

const HOSTS = ['api.example.com'];
const net = (actionClass: 'network_read' | 'network_write', params: ActionRequest['params']): ActionRequest =>
  sampleRequest({ action_class: actionClass, target_resources: [String(params.url)], params });

describe('planHttpExchange: what a network action sends, or why it sends nothing', () => {
  it('given a GET, then an HTTP/1.0 absolute-form head with Host and a User-Agent, no body, no fragment', () => {
    const plan = planHttpExchange(net('network_read', { url: 'http://API.example.com/a b?x=1#frag', headers: { Accept: 'application/json' } }), HOSTS, []);
    expect(plan).toEqual({
      ok: true,
      exchange: { method: 'GET', url: 'http://api.example.com/a%20b?x=1', tls: false, head: 'GET http://api.example.com/a%20b?x=1 HTTP/1.0\nHost: api.example.com\nUser-Agent: writ-executor\nAccept: application/json', body: new Uint8Array() },
    });
  });

  it('given a network_write without a method, then POST with Content-Length of the (base64) body', () => {
    const plan = planHttpExchange(net('network_write', { url: 'http://api.example.com/o', body: Buffer.from([0, 1, 2]).toString('base64'), encoding: 'base64', headers: { 'User-Agent': 'me' } }), HOSTS, []);
    expect(plan.ok && plan.exchange.head).toBe('POST http://api.example.com/o HTTP/1.0\nHost: api.example.com\nContent-Length: 3\nUser-Agent: me');
    expect(plan.ok && [...plan.exchange.body]).toEqual([0, 1, 2]);
  });

  it.each([
    ['network_write with GET', 'network_write', { url: 'http://api.example.com/', method: 'GET' }, 'EXECUTOR_PARAMS_INVALID'],
    ['network_read with a body', 'network_read', { url: 'http://api.example.com/', body: 'x' }, 'EXECUTOR_PARAMS_INVALID'],
    ['another scheme', 'network_read', { url: 'ftp://api.example.com/' }, 'EXECUTOR_PARAMS_INVALID'],
    ['credentials in an https URL', 'network_read', { url: 'https://u:p@api.example.com/' }, 'EXECUTOR_PARAMS_INVALID'],
    ['an https host the grant does not name', 'network_read', { url: 'https://evil.example.net/' }, 'EXECUTOR_EGRESS_HOST_NOT_GRANTED'],
    ['an https port a portless pattern does not allow', 'network_read', { url: 'https://api.example.com:8443/' }, 'EXECUTOR_EGRESS_HOST_NOT_GRANTED'],
    ['credentials in the URL', 'network_read', { url: 'http://u:p@api.example.com/' }, 'EXECUTOR_PARAMS_INVALID'],
    ['a host the grant does not name', 'network_read', { url: 'http://evil.example.net/' }, 'EXECUTOR_EGRESS_HOST_NOT_GRANTED'],
    ['a port a portless pattern does not allow', 'network_read', { url: 'http://api.example.com:8080/' }, 'EXECUTOR_EGRESS_HOST_NOT_GRANTED'],
    ['a Host header', 'network_read', { url: 'http://api.example.com/', headers: { Host: 'evil' } }, 'EXECUTOR_PARAMS_INVALID'],
    ['a Proxy-Authorization header', 'network_read', { url: 'http://api.example.com/', headers: { 'Proxy-Authorization': 'x' } }, 'EXECUTOR_PARAMS_INVALID'],
    ['a line break in a header value', 'network_read', { url: 'http://api.example.com/', headers: { 'X-A': 'a\r\nX-B: b' } }, 'EXECUTOR_PARAMS_INVALID'],
    ['a secret placeholder of a handle the request does not name', 'network_read', { url: 'http://api.example.com/', headers: { Authorization: '{{secret:other}}' } }, 'EXECUTOR_PARAMS_INVALID'],
    ['a bad base64 body', 'network_write', { url: 'http://api.example.com/', body: '!!', encoding: 'base64' }, 'EXECUTOR_PARAMS_INVALID'],
  ] as const)('given %s, then %s', (_note, actionClass, params, code) => {
    expect(planHttpExchange(net(actionClass, params as ActionRequest['params']), HOSTS, ['token'])).toMatchObject({ ok: false, code });
  });

  it('given no egress hosts at all, then EXECUTOR_EGRESS_HOST_NOT_GRANTED', () => {
    expect(planHttpExchange(net('network_read', { url: 'http://api.example.com/' }), undefined, [])).toMatchObject({ ok: false, code: 'EXECUTOR_EGRESS_HOST_NOT_GRANTED' });
  });

  it('given a placeholder of a named handle, then the head keeps the placeholder (the value is resolved in the cell only)', () => {
    const plan = planHttpExchange(net('network_read', { url: 'http://api.example.com/', headers: { Authorization: 'Bearer {{secret:token}}' } }), HOSTS, ['token']);
    expect(plan.ok && plan.exchange.head).toContain('Authorization: Bearer {{secret:token}}');
  });
});

describe('planHttpExchange for https: the header lines curl adds to its own', () => {
  it('given a GET, then no request line or Host (curl writes them), the User-Agent, and curl\'s Accept and Expect dropped', () => {
    const plan = planHttpExchange(net('network_read', { url: 'https://API.example.com/a?x=1#frag', headers: { 'X-A': 'b' } }), HOSTS, []);
    expect(plan).toEqual({ ok: true, exchange: { method: 'GET', url: 'https://api.example.com/a?x=1', tls: true, head: 'User-Agent: writ-executor\nAccept:\nExpect:\nX-A: b', body: new Uint8Array() } });
  });

  it('given a write without a Content-Type, then curl\'s form Content-Type is dropped; given its own Accept and an empty value, then they are kept (empty as `Name;`)', () => {
    const plan = planHttpExchange(net('network_write', { url: 'https://api.example.com/o', body: 'x', headers: { Accept: 'application/json', 'X-Empty': ' ' } }), HOSTS, []);
    expect(plan.ok && plan.exchange.head).toBe('User-Agent: writ-executor\nContent-Type:\nExpect:\nAccept: application/json\nX-Empty;');
  });

  it('given the default https port, then a portless grant pattern allows it (443)', () => {
    expect(planHttpExchange(net('network_read', { url: 'https://api.example.com/' }), HOSTS, [])).toMatchObject({ ok: true, exchange: { tls: true } });
  });
});

describe('httpExchangeProblem: the code of an exchange that ran', () => {
  const https = { method: 'GET' as const, url: 'https://api.example.com/', tls: true };
  const response = parseHttpResponse(Buffer.from('HTTP/1.1 200 OK\r\n\r\n'), false);

  it.each([
    ['curl 60 (chain or name did not verify)', https, HTTPS_EXIT.peerFailedVerification, undefined, 'EXECUTOR_TLS_VERIFY_FAILED'],
    ['curl 51 (older curl: name mismatch)', https, HTTPS_EXIT.peerCertificateMismatch, undefined, 'EXECUTOR_TLS_VERIFY_FAILED'],
    ['no TLS client in the image', https, HTTPS_EXIT.noTlsClient, undefined, 'EXECUTOR_TLS_UNAVAILABLE'],
    ['curl 56 (the proxy refused the tunnel)', https, 56, undefined, 'EXECUTOR_HTTP_RESPONSE_INVALID'],
    ['http with no response', { ...https, url: 'http://api.example.com/', tls: false }, 1, undefined, 'EXECUTOR_HTTP_RESPONSE_INVALID'],
    ['http exiting 60 (nc, not curl)', { ...https, url: 'http://api.example.com/', tls: false }, 60, undefined, 'EXECUTOR_HTTP_RESPONSE_INVALID'],
  ] as const)('given %s, then %s', (_note, exchange, exit, got, code) => {
    expect(httpExchangeProblem(exchange, exit, got)?.code).toBe(code);
  });

  it('given a response and exit 0, then no problem (a non-2xx status is the host\'s answer, not an error)', () => {
    expect(httpExchangeProblem(https, 0, response)).toBeUndefined();
  });
});

describe('planAction for network classes', () => {
  it('given a granted https network_write and extra trust roots, then the fixed https script with method, URL, header lines and the roots as arguments, the body on stdin', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const plan = planAction(net('network_write', { url: 'https://api.example.com/x', method: 'PUT', body: 'b' }), { timeoutMs: 1_000, maxOutputBytes: 64, egressHosts: HOSTS, extraCaPem: pem });
    expect(plan).toMatchObject({
      kind: 'run',
      argv: ['sh', '-c', HTTPS_EXCHANGE_SCRIPT, 'writ-network-write', 'PUT', 'https://api.example.com/x', 'User-Agent: writ-executor\nAccept:\nContent-Type:\nExpect:', pem],
      http: { method: 'PUT', url: 'https://api.example.com/x', tls: true },
      egressHosts: HOSTS,
    });
    expect(plan.kind === 'run' && Buffer.from(plan.stdin ?? []).toString()).toBe('b');
  });

  it('given a granted network_write, then the fixed exchange script with the head as its argument, the body on stdin, and the egress hosts', () => {
    const plan = planAction(net('network_write', { url: 'http://api.example.com/x', method: 'PUT', body: 'b' }), { timeoutMs: 1_000, maxOutputBytes: 64, egressHosts: HOSTS });
    expect(plan).toMatchObject({ kind: 'run', argv: ['sh', '-c', HTTP_EXCHANGE_SCRIPT, 'writ-network-write', 'PUT http://api.example.com/x HTTP/1.0\nHost: api.example.com\nUser-Agent: writ-executor\nContent-Length: 1'], http: { method: 'PUT', url: 'http://api.example.com/x' }, egressHosts: HOSTS });
    expect(plan.kind === 'run' && Buffer.from(plan.stdin ?? []).toString()).toBe('b');
  });

  it('given a network_read without egress hosts, then it cannot run', () => {
    expect(planAction(net('network_read', { url: 'http://api.example.com/' }), { timeoutMs: 1_000, maxOutputBytes: 64 })).toMatchObject({ kind: 'cannot-run', code: 'EXECUTOR_EGRESS_HOST_NOT_GRANTED' });
  });
});

describe('parseHttpResponse', () => {
  const raw = (text: string) => Buffer.from(text, 'latin1');

  it('given a plain response, then status, reason, lower-cased headers and the body', () => {
    expect(parseHttpResponse(raw('HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nX-A:  b \r\n\r\nnope'), false)).toEqual({
      http_version: 'HTTP/1.1',
      status: 404,
      reason: 'Not Found',
      headers: [['content-type', 'text/plain'], ['x-a', 'b']],
      headers_truncated: false,
      body: raw('nope'),
      body_truncated: false,
    });
  });

  it('given a chunked body, then it is de-chunked; cut short, it is marked truncated', () => {
    expect(Buffer.from(parseHttpResponse(raw('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n'), false)?.body ?? []).toString()).toBe('abcde');
    expect(parseHttpResponse(raw('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab'), false)).toMatchObject({ body_truncated: true });
  });

  it('given output cut by the cap, then the body is marked truncated', () => {
    expect(parseHttpResponse(raw('HTTP/1.0 200 OK\r\n\r\npartial'), true)).toMatchObject({ status: 200, body_truncated: true });
  });

  it('given more headers than the bound, then the first ones are kept and the cut is flagged', () => {
    const many = [`X-long: ${'v'.repeat(2_000)}`, ...Array.from({ length: 69 }, (_, i) => `X-${i}: v`)].join('\r\n');
    const parsed = parseHttpResponse(raw(`HTTP/1.1 200 OK\r\n${many}\r\n\r\n`), false);
    expect(parsed?.headers).toHaveLength(64);
    expect(parsed?.headers[0]?.[1]).toHaveLength(1024);
    expect(parsed?.headers_truncated).toBe(true);
  });

  it('given interim 1xx answers before the response (as curl --include relays them), then the final response', () => {
    expect(parseHttpResponse(raw('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nA: b\r\n\r\nok'), false)).toMatchObject({ status: 201, headers: [['a', 'b']], body: raw('ok') });
  });

  it.each([['no status line', 'hello'], ['no end of head', 'HTTP/1.1 200 OK\r\nA: b'], ['an error line from nc', 'nc: can\'t connect\r\n\r\n']])('given %s, then undefined', (_note, text) => {
    expect(parseHttpResponse(raw(text), false)).toBeUndefined();
  });
});
