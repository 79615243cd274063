import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { egressAllowed, splitHostPort, type EgressRule } from './egress-rules.js';

/** What the proxy logs through (pino's shape; `@writ/telemetry`'s Logger fits). */
export interface EgressLogger {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
}

/** Resolves a host name to addresses (default: the system resolver). Tests map names here. */
export type EgressLookup = (host: string) => Promise<readonly string[]>;

export interface EgressProxyOptions {
  readonly rules: readonly EgressRule[];
  /** Fields added to every log line (task, network). */
  readonly context?: Readonly<Record<string, unknown>>;
  readonly logger?: EgressLogger;
  readonly lookup?: EgressLookup;
  /** A connection with no bytes either way for this long is closed. Default 60 s. */
  readonly idleTimeoutMs?: number;
}

/** The decision about one request, as logged. */
export interface EgressDecision {
  readonly method: string;
  readonly host: string;
  readonly port: number;
  readonly allowed: boolean;
  readonly reason?: string;
}

const systemLookup: EgressLookup = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * Addresses a granted *name* may never lead to: the host itself, link-local (cloud
 * metadata lives at 169.254.169.254), unspecified and multicast. A grant that really
 * means such an address names the IP literal, which is then used as given.
 */
export function forbiddenTarget(address: string): boolean {
  const v4 = net.isIPv4(address) ? address : /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (v4 !== undefined) {
    const [a = 0, b = 0] = v4.split('.').map(Number);
    return a === 127 || a === 0 || (a === 169 && b === 254) || a >= 224;
  }
  const v6 = address.toLowerCase();
  return v6 === '::1' || v6 === '::' || v6.startsWith('fe8') || v6.startsWith('fe9') || v6.startsWith('fea') || v6.startsWith('feb') || v6.startsWith('ff');
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authorization', 'proxy-authenticate', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * The egress proxy of one cell's action: an HTTP proxy (CONNECT `host:port` for TLS and
 * anything else, absolute-form `http://` requests for plain HTTP) that connects only to
 * the grant's hosts and answers 403 to everything else, with one log line per decision.
 * The cell never resolves a name: the proxy does (the cell's network has no DNS route out).
 */
export class EgressProxy {
  readonly #options: EgressProxyOptions;
  readonly #server: http.Server;
  readonly #sockets = new Set<Duplex>();
  readonly #decisions: EgressDecision[] = [];

  constructor(options: EgressProxyOptions) {
    this.#options = options;
    this.#server = http.createServer({ requestTimeout: 0 });
    // A client that half-closes after its request (busybox nc at the end of its stdin, as a
    // network_read / network_write sends) still gets its answer: without this Node aborts the
    // request on the client's FIN. The socket is closed once the response is written.
    Object.assign(this.#server, { httpAllowHalfOpen: true });
    this.#server.on('connection', (socket: net.Socket) => this.#track(socket));
    this.#server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void this.#connect(req, socket, head));
    this.#server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => void this.#forward(req, res));
    this.#server.on('clientError', (_error, socket: Duplex) => socket.destroy());
  }

  /** Every decision so far (allowed and refused), in order. */
  get decisions(): readonly EgressDecision[] {
    return this.#decisions;
  }

  /** Listens on `host` (the cell network's gateway) at `port` (0: any free one); resolves to the port. */
  listen(host: string, port = 0): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen({ host, port, exclusive: true }, () => {
        this.#server.off('error', reject);
        resolve((this.#server.address() as net.AddressInfo).port);
      });
    });
  }

  /** Stops listening and cuts every open connection (the action is over). */
  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    if (!this.#server.listening) return;
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #track(socket: Duplex): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    const idle = this.#options.idleTimeoutMs ?? 60_000;
    if (socket instanceof net.Socket) socket.setTimeout(idle, () => socket.destroy());
  }

  #log(decision: EgressDecision): void {
    this.#decisions.push(decision);
    const line = { ...this.#options.context, method: decision.method, host: decision.host, port: decision.port, ...(decision.reason === undefined ? {} : { reason: decision.reason }) };
    if (decision.allowed) this.#options.logger?.info(line, 'egress allowed');
    else this.#options.logger?.warn(line, 'egress refused');
  }

  /** The address to connect to, or the reason it is refused (logged, answered 403). */
  async #target(method: string, host: string, port: number): Promise<{ readonly address: string } | { readonly refused: string }> {
    const refuse = (reason: string) => {
      this.#log({ method, host, port, allowed: false, reason });
      return { refused: reason };
    };
    if (!egressAllowed(this.#options.rules, host, port)) return refuse('not in the grant');
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    let address: string | undefined;
    if (net.isIP(bare) !== 0) address = bare;
    else {
      const addresses = await (this.#options.lookup ?? systemLookup)(bare).catch(() => [] as readonly string[]);
      if (addresses.length === 0) return refuse('does not resolve');
      if (addresses.some(forbiddenTarget)) return refuse('resolves to a loopback, link-local or unspecified address');
      address = addresses[0];
    }
    if (address === undefined) return refuse('does not resolve');
    this.#log({ method, host, port, allowed: true });
    return { address };
  }

  async #connect(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    this.#track(socket);
    socket.on('error', () => socket.destroy());
    const parts = splitHostPort(req.url ?? '');
    if (parts?.port === undefined) {
      this.#log({ method: 'CONNECT', host: req.url ?? '', port: 0, allowed: false, reason: 'not host:port' });
      socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    const target = await this.#target('CONNECT', parts.host, parts.port);
    if ('refused' in target) {
      socket.end(refusal(parts.host, parts.port));
      return;
    }
    const upstream = net.connect({ host: target.address, port: parts.port });
    this.#track(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => {
      if (!connected) socket.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      socket.destroy();
    });
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  }

  async #forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      url = new URL('invalid:');
    }
    if (url.protocol !== 'http:' || url.hostname === '') {
      // Origin-form (a request to the proxy itself) and https:// in absolute form are not proxied: TLS goes through CONNECT.
      this.#log({ method: req.method ?? '', host: url.hostname, port: 0, allowed: false, reason: 'not an absolute http:// URL' });
      res.writeHead(400, { 'content-type': 'text/plain', connection: 'close' }).end('egress proxy: absolute http:// URLs or CONNECT only\n');
      return;
    }
    const port = url.port === '' ? 80 : Number(url.port);
    const target = await this.#target(req.method ?? 'GET', url.hostname, port);
    if ('refused' in target) {
      res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' }).end(`egress to ${url.hostname}:${port} is not granted\n`);
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    headers.host = url.host;
    headers.connection = 'close';
    const upstream = http.request({ host: target.address, port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false, agent: false }, (answer) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
    });
    upstream.on('socket', (socket) => this.#track(socket));
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain', connection: 'close' }).end('egress proxy: upstream failed\n');
      else res.destroy();
    });
    req.pipe(upstream);
  }
}

function refusal(host: string, port: number): string {
  const body = `egress to ${host}:${port} is not granted\n`;
  return `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
