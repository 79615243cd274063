import { SAFE_HTTP_METHODS, type ActionRequest, type HttpMethod } from '@writ/contracts';
import { egressAllowed, egressRules } from '../outbound/egress/egress-rules.js';

/**
 * network_read / network_write as a request made from inside the cell: the executor
 * writes the request head (pure, here), the cell sends it with the body through the
 * action's egress proxy (`HTTP_EXCHANGE_SCRIPT`), and the raw response comes back as
 * the exec's stdout, which `parseHttpResponse` reads into the `http.response` artifact.
 * The request never leaves from the executor itself: the cell's isolation (its own
 * network, the proxy's allowlist, the attestation) holds for it as for any command.
 */

/** Methods a network_write may use (a write is never a safe method). */
export const WRITE_HTTP_METHODS: readonly HttpMethod[] = Object.freeze(['POST', 'PUT', 'PATCH', 'DELETE'] as const);

/** `{{secret:<handle>}}` in a header value: replaced in the cell by the handle's value (`WRIT_SECRET_<HANDLE>`). */
export const SECRET_PLACEHOLDER = /\{\{secret:([^}]*)\}\}/g;
const HANDLE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Headers the executor writes itself (or that would change how the exchange is framed or routed). */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade', 'expect']);

/**
 * Runs in the cell (busybox sh, uid 10001) with the request head as "$1" (lines separated by
 * "\n", request line first) and the body on stdin. Header lines get their `{{secret:<h>}}`
 * replaced by `$WRIT_SECRET_<H>` (awk, literally: a value is never read as a pattern or a
 * command; one holding CR or LF is refused, exit 98, nothing sent). Exit 97: the cell has no
 * egress proxy. Otherwise the exit status is busybox nc's, and stdout is the raw response: the
 * request is HTTP/1.0, so the proxy answers unchunked and closes when done.
 */
export const HTTP_EXCHANGE_SCRIPT = [
  'p=${http_proxy#http://}',
  'if [ -z "$http_proxy" ] || [ "$p" = "$http_proxy" ]; then echo "writ: this cell has no egress proxy" >&2; exit 97; fi',
  `head=$(printf '%s\\n' "$1" | awk 'NR == 1 { printf "%s", $0; next }
{ out = ""; rest = $0
  while ((i = index(rest, "{{secret:")) > 0) {
    tail = substr(rest, i + 9); j = index(tail, "}}")
    if (j == 0) break
    name = "WRIT_SECRET_" toupper(substr(tail, 1, j - 1)); gsub(/[^A-Z0-9]/, "_", name)
    value = ENVIRON[name]
    if (value ~ /[\\r\\n]/) { print "writ: a secret value holds a line break and cannot go in a header" > "/dev/stderr"; exit 98 }
    out = out substr(rest, 1, i - 1) value; rest = substr(tail, j + 2)
  }
  printf "\\r\\n%s%s", out, rest }') || exit 98`,
  `{ printf '%s\\r\\n\\r\\n' "$head"; cat; } | nc "\${p%:*}" "\${p##*:}"`,
].join('\n');

export interface HttpExchange {
  readonly method: HttpMethod;
  /** The absolute URL as sent (no fragment). */
  readonly url: string;
  /** The request head handed to the cell ("\n"-separated lines; secret placeholders unresolved). */
  readonly head: string;
  readonly body: Uint8Array;
}

export type HttpRefusalCode = 'EXECUTOR_PARAMS_INVALID' | 'EXECUTOR_TLS_UNAVAILABLE' | 'EXECUTOR_EGRESS_HOST_NOT_GRANTED';

export type HttpExchangePlan = { readonly ok: true; readonly exchange: HttpExchange } | { readonly ok: false; readonly code: HttpRefusalCode; readonly message: string };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The exchange of a network_read / network_write, or why it cannot run (before any side effect):
 * the method must fit the class (read: GET, HEAD, OPTIONS, no body; write: POST, PUT, PATCH,
 * DELETE), the URL plain `http://` without credentials (`https://` is refused: the cell's busybox
 * TLS does not verify certificates), its host:port one the grant's egress hosts allow (as the
 * proxy will judge it), headers free of line breaks and of the ones the executor writes, and every
 * secret placeholder naming a handle the request names (`params.secret_handle(s)`).
 */
export function planHttpExchange(request: ActionRequest, egressHosts: readonly string[] | undefined, secretHandles: readonly string[]): HttpExchangePlan {
  const params = request.params;
  const cls = request.action_class;
  const refuse = (code: HttpRefusalCode, message: string): HttpExchangePlan => ({ ok: false, code, message });
  if (typeof params.url !== 'string') return refuse('EXECUTOR_PARAMS_INVALID', `${cls} needs params.url`);
  const method: HttpMethod = params.method ?? (cls === 'network_read' ? 'GET' : 'POST');
  const allowed = cls === 'network_read' ? SAFE_HTTP_METHODS : WRITE_HTTP_METHODS;
  if (!allowed.includes(method)) return refuse('EXECUTOR_PARAMS_INVALID', `${cls} allows ${allowed.join(', ')}, not ${method}`);
  if (cls === 'network_read' && params.body !== undefined) return refuse('EXECUTOR_PARAMS_INVALID', 'a network_read sends no body: use network_write');

  let url: URL;
  try {
    url = new URL(params.url);
  } catch {
    return refuse('EXECUTOR_PARAMS_INVALID', `params.url ${JSON.stringify(params.url)} is not an absolute URL`);
  }
  if (url.protocol === 'https:') {
    return refuse('EXECUTOR_TLS_UNAVAILABLE', "https is not available in cells: busybox's TLS client does not verify certificates, so the peer could not be attested; use http:// or execute_command with a verifying client");
  }
  if (url.protocol !== 'http:') return refuse('EXECUTOR_PARAMS_INVALID', `params.url must be http:// (got ${url.protocol})`);
  if (url.username !== '' || url.password !== '') return refuse('EXECUTOR_PARAMS_INVALID', 'params.url holds credentials: name a secret handle and use {{secret:<handle>}} in a header instead');
  const port = url.port === '' ? 80 : Number(url.port);
  if (!egressAllowed(egressRules(egressHosts ?? []), url.hostname, port)) {
    return refuse('EXECUTOR_EGRESS_HOST_NOT_GRANTED', `${url.hostname}:${port} is not among the grant's egress hosts (${(egressHosts ?? []).join(', ') || 'none'}); nothing was sent`);
  }

  const lines: string[] = [];
  for (const [name, value] of Object.entries(params.headers ?? {})) {
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower) || lower.startsWith('proxy-')) return refuse('EXECUTOR_PARAMS_INVALID', `header ${name} is written by the executor (or would reframe the exchange) and cannot be set`);
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) return refuse('EXECUTOR_PARAMS_INVALID', `header ${name} holds a control character`);
    for (const match of value.matchAll(SECRET_PLACEHOLDER)) {
      const handle = match[1] ?? '';
      if (!HANDLE.test(handle)) return refuse('EXECUTOR_PARAMS_INVALID', `header ${name} names the secret handle ${JSON.stringify(handle)}, which is not a handle name`);
      if (!secretHandles.includes(handle)) return refuse('EXECUTOR_PARAMS_INVALID', `header ${name} uses the secret handle ${handle}, which params.secret_handles does not name`);
    }
    lines.push(`${name}: ${value}`);
  }

  let body: Uint8Array = new Uint8Array();
  if (typeof params.body === 'string') {
    if (params.encoding === 'base64') {
      if (!BASE64.test(params.body)) return refuse('EXECUTOR_PARAMS_INVALID', 'params.body is not base64');
      body = Buffer.from(params.body, 'base64');
    } else {
      body = Buffer.from(params.body, 'utf8');
    }
  }
  url.hash = '';
  const head = [`${method} ${url.href} HTTP/1.0`, `Host: ${url.host}`];
  if (!lines.some((line) => line.toLowerCase().startsWith('user-agent:'))) head.push('User-Agent: writ-executor');
  if (cls === 'network_write') head.push(`Content-Length: ${body.byteLength}`);
  head.push(...lines);
  return { ok: true, exchange: { method, url: url.href, head: head.join('\n'), body } };
}

/** At most this many response headers are kept, each value cut to this many characters. */
export const RESPONSE_HEADERS_MAX = 64;
export const RESPONSE_HEADER_VALUE_MAX = 1024;
/** A response head longer than this is not parsed (the transcript still holds it). */
const RESPONSE_HEAD_MAX = 64 * 1024;

export interface HttpResponse {
  readonly http_version: string;
  readonly status: number;
  readonly reason: string;
  /** In order, names lower-cased; bounded (see `headers_truncated`). */
  readonly headers: readonly (readonly [string, string])[];
  readonly headers_truncated: boolean;
  readonly body: Uint8Array;
  /** The body was cut by the output cap (or its chunked framing was). */
  readonly body_truncated: boolean;
}

/**
 * The response in the cell's stdout (as the proxy relayed it), or undefined when it holds no
 * HTTP status line. A `Transfer-Encoding: chunked` body is de-chunked; `truncated` (the
 * output cap cut stdout) marks the body as cut.
 */
export function parseHttpResponse(raw: Uint8Array, truncated: boolean): HttpResponse | undefined {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1 || end > RESPONSE_HEAD_MAX) return undefined;
  const [statusLine = '', ...headerLines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^(HTTP\/\d(?:\.\d)?) (\d{3})(?: (.*))?$/.exec(statusLine);
  if (status === null) return undefined;
  const headers: [string, string][] = [];
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim().slice(0, RESPONSE_HEADER_VALUE_MAX)]);
  }
  let body: Uint8Array = bytes.subarray(end + 4);
  let bodyTruncated = truncated;
  if (headers.some(([name, value]) => name === 'transfer-encoding' && /chunked/i.test(value))) {
    const dechunked = dechunk(Buffer.from(body));
    body = dechunked.body;
    bodyTruncated ||= !dechunked.complete;
  }
  return {
    http_version: status[1] as string,
    status: Number(status[2]),
    reason: (status[3] ?? '').slice(0, 256),
    headers: headers.slice(0, RESPONSE_HEADERS_MAX),
    headers_truncated: headers.length > RESPONSE_HEADERS_MAX,
    body,
    body_truncated: bodyTruncated,
  };
}

function dechunk(bytes: Buffer): { readonly body: Uint8Array; readonly complete: boolean } {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd === -1) return { body: Buffer.concat(parts), complete: false };
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1').split(';')[0] ?? '', 16);
    if (!Number.isFinite(size) || size < 0) return { body: Buffer.concat(parts), complete: false };
    if (size === 0) return { body: Buffer.concat(parts), complete: true };
    const start = lineEnd + 2;
    if (start + size > bytes.length) {
      parts.push(bytes.subarray(start));
      return { body: Buffer.concat(parts), complete: false };
    }
    parts.push(bytes.subarray(start, start + size));
    at = start + size + 2;
  }
}

/** The `http.response` artifact's JSON document (the body is its own artifact, named by hash). */
export function httpResponseDocument(exchange: Pick<HttpExchange, 'method' | 'url'>, response: HttpResponse, bodySha256: string): Record<string, unknown> {
  return {
    format: 'writ.http-response/1',
    request: { method: exchange.method, url: exchange.url },
    http_version: response.http_version,
    status: response.status,
    reason: response.reason,
    headers: response.headers.map(([name, value]) => ({ name, value })),
    headers_truncated: response.headers_truncated,
    body_sha256: bodySha256,
    body_bytes: response.body.byteLength,
    body_truncated: response.body_truncated,
  };
}
