import { SAFE_HTTP_METHODS, type ActionRequest, type HttpMethod } from '@writ/contracts';
import { egressAllowed, egressRules } from '../outbound/egress/egress-rules.js';

/**
 * network_read / network_write as a request made from inside the cell: the executor
 * writes the request head (pure, here), the cell sends it with the body through the
 * action's egress proxy (`HTTP_EXCHANGE_SCRIPT` for http, `HTTPS_EXCHANGE_SCRIPT` for
 * https), and the raw response comes back as the exec's stdout, which `parseHttpResponse`
 * reads into the `http.response` artifact. The request never leaves from the executor
 * itself: the cell's isolation (its own network, the proxy's allowlist, the attestation)
 * holds for it as for any command.
 */

/** Methods a network_write may use (a write is never a safe method). */
export const WRITE_HTTP_METHODS: readonly HttpMethod[] = Object.freeze(['POST', 'PUT', 'PATCH', 'DELETE'] as const);

/** `{{secret:<handle>}}` in a header value: replaced in the cell by the handle's value (`WRIT_SECRET_<HANDLE>`). */
export const SECRET_PLACEHOLDER = /\{\{secret:([^}]*)\}\}/g;
const HANDLE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Headers the executor writes itself (or that would change how the exchange is framed or routed). */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade', 'expect']);

/**
 * awk: `subst(line)` is the line with every `{{secret:<h>}}` replaced by `$WRIT_SECRET_<H>`,
 * literally (a value is never read as a pattern or a command); a value holding CR or LF ends
 * the program with status 98 before anything is sent. Shared by both exchange scripts.
 */
const SUBST_AWK = `function subst(rest,    out, i, tail, j, name, value) {
  out = ""
  while ((i = index(rest, "{{secret:")) > 0) {
    tail = substr(rest, i + 9); j = index(tail, "}}")
    if (j == 0) break
    name = "WRIT_SECRET_" toupper(substr(tail, 1, j - 1)); gsub(/[^A-Z0-9]/, "_", name)
    value = ENVIRON[name]
    if (value ~ /[\\r\\n]/) { print "writ: a secret value holds a line break and cannot go in a header" > "/dev/stderr"; exit 98 }
    out = out substr(rest, 1, i - 1) value; rest = substr(tail, j + 2)
  }
  return out rest
}`;

/**
 * Runs in the cell (busybox sh, uid 10001) with the request head as "$1" (lines separated by
 * "\n", request line first) and the body on stdin. Header lines get their secrets substituted
 * (`SUBST_AWK`; exit 98: nothing sent). Exit 97: the cell has no egress proxy. Otherwise the exit
 * status is busybox nc's, and stdout is the raw response: the request is HTTP/1.0, so the proxy
 * answers unchunked and closes when done.
 */
export const HTTP_EXCHANGE_SCRIPT = [
  'p=${http_proxy#http://}',
  'if [ -z "$http_proxy" ] || [ "$p" = "$http_proxy" ]; then echo "writ: this cell has no egress proxy" >&2; exit 97; fi',
  `head=$(printf '%s\\n' "$1" | awk '${SUBST_AWK}
NR == 1 { printf "%s", $0; next }
{ printf "\\r\\n%s", subst($0) }') || exit 98`,
  `{ printf '%s\\r\\n\\r\\n' "$head"; cat; } | nc "\${p%:*}" "\${p##*:}"`,
].join('\n');

/** The public CA bundle in the cell image (scripts/build-cell-image.sh makes it from Debian's ca-certificates). */
export const CELL_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/**
 * Exit statuses of the https exchange. curl's own (https://curl.se/libcurl/c/libcurl-errors.html)
 * pass through; the script adds its refusals, each before anything is sent.
 */
export const HTTPS_EXIT = Object.freeze({
  /** curl 60 (CURLE_PEER_FAILED_VERIFICATION): the chain or the host name did not verify. */
  peerFailedVerification: 60,
  /** curl 51: how older curl builds report a host name mismatch. */
  peerCertificateMismatch: 51,
  /** The cell image has no curl (built with WRIT_CELL_TLS=0). */
  noTlsClient: 95,
  /** The cell lacks what the script needs: a writable /tmp for the extra trust roots, or /dev/fd. */
  cellUnfit: 96,
  /** No egress proxy in the environment (as the http script). */
  noProxy: 97,
  /** A secret value holds a line break (as the http script). */
  secretLineBreak: 98,
});

/**
 * Runs in the cell (busybox sh, uid 10001): "$1" method, "$2" URL (https, no credentials), "$3"
 * the header lines ("\n"-separated, secrets unresolved), "$4" extra trust roots (PEM, may be
 * empty); the body on stdin (sent only by a write). curl makes the request through the egress
 * proxy (CONNECT), verifying the server's chain against the image's public bundle plus "$4" and
 * its name against the URL's host; a failure of either ends it before a byte of the request is
 * sent (exit 60). Secrets are substituted by `SUBST_AWK` and reach curl on a pipe the shell
 * makes (fd 4, `--header @/dev/fd/4`), never in its argv or a file; the body is curl's stdin
 * (`--data-binary @-`: read, never reopened, whatever kind of descriptor it is). `-q` first: a `.curlrc` planted in the
 * workspace (curl's HOME) is never read. `--include --raw --http1.1`: stdout is the response as
 * received (status line, headers, body still chunked if it was), like the http path's;
 * `--suppress-connect-headers` keeps the proxy's CONNECT answer out of it. No redirects.
 */
export const HTTPS_EXCHANGE_SCRIPT = [
  'p=${https_proxy:-$http_proxy}',
  `case "$p" in http://?*) ;; *) echo "writ: this cell has no egress proxy" >&2; exit ${HTTPS_EXIT.noProxy};; esac`,
  `command -v curl >/dev/null 2>&1 || { echo "writ: this cell image has no TLS client (rebuild it with WRIT_CELL_TLS=1)" >&2; exit ${HTTPS_EXIT.noTlsClient}; }`,
  // curl skips a header file it cannot open and sends the request without those headers.
  `[ -d /dev/fd/ ] || { echo "writ: this cell has no /dev/fd" >&2; exit ${HTTPS_EXIT.cellUnfit}; }`,
  `method=$1; url=$2; ca=${CELL_CA_BUNDLE}`,
  'if [ -n "$4" ]; then',
  `  ca=$(mktemp /tmp/writ-ca.XXXXXX) || exit ${HTTPS_EXIT.cellUnfit}`,
  `  trap 'rm -f "$ca"' EXIT`,
  `  { cat ${CELL_CA_BUNDLE}; printf '%s\\n' "$4"; } >"$ca" || exit ${HTTPS_EXIT.cellUnfit}`,
  'fi',
  `headers=$(printf '%s\\n' "$3" | awk '${SUBST_AWK}
{ printf "%s\\n", subst($0) }') || exit ${HTTPS_EXIT.secretLineBreak}`,
  'case "$method" in',
  '  HEAD) set -- --head ;;',
  '  GET|OPTIONS) set -- --request "$method" ;;',
  '  *) set -- --request "$method" --data-binary @- ;;',
  'esac',
  // fd 3 keeps the body (the exec's stdin) while the pipeline gives curl the headers' pipe; curl
  // then gets that pipe as fd 4 and the body back as its stdin.
  'exec 3<&0',
  `printf '%s' "$headers" | curl -q --silent --show-error --include --raw --http1.1 --globoff --proto =https --max-redirs 0 \\`,
  `  --proxy "$p" --noproxy '' --suppress-connect-headers --tlsv1.2 --cacert "$ca" --header @/dev/fd/4 "$@" --url "$url" 4<&0 <&3 3<&-`,
].join('\n');

export interface HttpExchange {
  readonly method: HttpMethod;
  /** The absolute URL as sent (no fragment). */
  readonly url: string;
  /** https: sent by curl in the cell, the server's certificate verified (else nc through the proxy). */
  readonly tls: boolean;
  /**
   * What the cell is handed ("\n"-separated lines; secret placeholders unresolved): http, the whole
   * request head, request line first; https, the header lines curl adds to its own (`Name:` alone
   * removes one of curl's defaults, `Name;` sends an empty value).
   */
  readonly head: string;
  readonly body: Uint8Array;
}

export type HttpRefusalCode = 'EXECUTOR_PARAMS_INVALID' | 'EXECUTOR_EGRESS_HOST_NOT_GRANTED';

export type HttpExchangePlan = { readonly ok: true; readonly exchange: HttpExchange } | { readonly ok: false; readonly code: HttpRefusalCode; readonly message: string };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The exchange of a network_read / network_write, or why it cannot run (before any side effect):
 * the method must fit the class (read: GET, HEAD, OPTIONS, no body; write: POST, PUT, PATCH,
 * DELETE), the URL `http://` or `https://` without credentials, its host:port one the grant's
 * egress hosts allow (as the proxy will judge it; the default port is the scheme's), headers free
 * of line breaks and of the ones the executor writes, and every secret placeholder naming a
 * handle the request names (`params.secret_handle(s)`).
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
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refuse('EXECUTOR_PARAMS_INVALID', `params.url must be http:// or https:// (got ${url.protocol})`);
  const tls = url.protocol === 'https:';
  if (url.username !== '' || url.password !== '') return refuse('EXECUTOR_PARAMS_INVALID', 'params.url holds credentials: name a secret handle and use {{secret:<handle>}} in a header instead');
  const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
  if (!egressAllowed(egressRules(egressHosts ?? []), url.hostname, port)) {
    return refuse('EXECUTOR_EGRESS_HOST_NOT_GRANTED', `${url.hostname}:${port} is not among the grant's egress hosts (${(egressHosts ?? []).join(', ') || 'none'}); nothing was sent`);
  }

  const given = new Set<string>();
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
    given.add(lower);
    // curl reads `Name:` with nothing after it as "drop this header": an empty value is spelled `Name;`.
    lines.push(tls && value.trim() === '' ? `${name};` : `${name}: ${value}`);
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
  const userAgent = given.has('user-agent') ? [] : ['User-Agent: writ-executor'];
  if (tls) {
    // The request carries what the http path's would: curl's own Accept, form Content-Type and
    // Expect (a 100-continue round trip) are dropped unless the request names them.
    const dropped = [...(given.has('accept') ? [] : ['Accept:']), ...(cls === 'network_write' && !given.has('content-type') ? ['Content-Type:'] : []), 'Expect:'];
    return { ok: true, exchange: { method, url: url.href, tls, head: [...userAgent, ...dropped, ...lines].join('\n'), body } };
  }
  const head = [`${method} ${url.href} HTTP/1.0`, `Host: ${url.host}`, ...userAgent];
  if (cls === 'network_write') head.push(`Content-Length: ${body.byteLength}`);
  head.push(...lines);
  return { ok: true, exchange: { method, url: url.href, tls, head: head.join('\n'), body } };
}

/**
 * The exec of a planned exchange: the fixed script for its scheme with the plan as arguments
 * (`extraCaPem`: the executor's extra trust roots, https only). The body goes on stdin.
 */
export function httpExchangeArgv(actionClass: 'network_read' | 'network_write', exchange: HttpExchange, extraCaPem: string | undefined): string[] {
  const name = `writ-${actionClass.replace('_', '-')}`;
  if (!exchange.tls) return ['sh', '-c', HTTP_EXCHANGE_SCRIPT, name, exchange.head];
  return ['sh', '-c', HTTPS_EXCHANGE_SCRIPT, name, exchange.method, exchange.url, exchange.head, extraCaPem ?? ''];
}

/** What went wrong with an exchange that ran, by the exec's status and stdout; undefined when it got a response. */
export function httpExchangeProblem(exchange: Pick<HttpExchange, 'method' | 'url' | 'tls'>, exitCode: number, response: HttpResponse | undefined): { readonly code: string; readonly message: string } | undefined {
  const what = `${exchange.method} ${exchange.url}`;
  if (exchange.tls && (exitCode === HTTPS_EXIT.peerFailedVerification || exitCode === HTTPS_EXIT.peerCertificateMismatch)) {
    return {
      code: 'EXECUTOR_TLS_VERIFY_FAILED',
      message: `${what}: the server's certificate did not verify (not issued for that host name, or by no root in the cell's CA bundle or WRIT_EXECUTOR_EXTRA_CA_FILE; curl exit ${exitCode}); the TLS handshake was abandoned, so no byte of the request was sent: see the stderr transcript`,
    };
  }
  if (exchange.tls && exitCode === HTTPS_EXIT.noTlsClient) {
    return { code: 'EXECUTOR_TLS_UNAVAILABLE', message: `${what}: the cell image has no TLS client (curl); rebuild it with scripts/build-cell-image.sh (WRIT_CELL_TLS=1). Nothing was sent` };
  }
  if (response !== undefined) return undefined;
  const client = exchange.tls ? 'curl' : 'the exchange';
  return { code: 'EXECUTOR_HTTP_RESPONSE_INVALID', message: `${what} got no HTTP response (${client} exit ${exitCode}); it may or may not have reached the host: see the transcript` };
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
 * The response in the cell's stdout (as the proxy or curl relayed it), or undefined when it holds
 * no HTTP status line. Interim 1xx answers before it are skipped. A `Transfer-Encoding: chunked`
 * body is de-chunked; `truncated` (the output cap cut stdout) marks the body as cut.
 */
export function parseHttpResponse(raw: Uint8Array, truncated: boolean): HttpResponse | undefined {
  let bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  let end: number;
  let headerLines: string[];
  let status: RegExpExecArray | null;
  for (;;) {
    end = bytes.indexOf('\r\n\r\n');
    if (end === -1 || end > RESPONSE_HEAD_MAX) return undefined;
    const [statusLine = '', ...rest] = bytes.subarray(0, end).toString('latin1').split('\r\n');
    status = /^(HTTP\/\d(?:\.\d)?) (\d{3})(?: (.*))?$/.exec(statusLine);
    if (status === null) return undefined;
    headerLines = rest;
    // An interim answer (100 Continue, 103 Early Hints) precedes the response curl relays with --include.
    const code = Number(status[2]);
    if (code < 100 || code > 199 || code === 101) break;
    bytes = bytes.subarray(end + 4);
  }
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
