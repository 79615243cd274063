import { existsSync, readFileSync } from 'node:fs';
import { connect, credsAuthenticator, errors, nkeyAuthenticator, tokenAuthenticator, usernamePasswordAuthenticator, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { BusError } from './bus-errors.js';

/**
 * The variables every Writ bus client reads its NATS credential from (the
 * conformance agent reads the same names). One of them is required on Writ's
 * own server, which refuses anonymous connections:
 *
 * - `WRIT_NATS_CREDS`: a `.creds` file (user JWT + nkey seed) issued by `writ init`
 *   or `writ principal add`;
 * - `WRIT_NATS_NKEY`: a file holding a user nkey seed;
 * - `WRIT_NATS_USER` + `WRIT_NATS_PASS`, or `WRIT_NATS_TOKEN` (servers configured so);
 *
 * and, for TLS (`tls://` URLs or a server that requires it): `WRIT_NATS_TLS_CA`
 * (the CA bundle that signed the server's certificate), `WRIT_NATS_TLS_CERT` +
 * `WRIT_NATS_TLS_KEY` (a client certificate, where the server asks for one).
 */
export type NatsCredentialEnvironment = Readonly<Record<string, string | undefined>>;

/** The inbox prefix of a `.creds` user whose subscriptions are limited to `_INBOX.<name>.>`. */
const SCOPED_INBOX = /^(_INBOX\.[A-Za-z0-9_-]+)\.>$/;

/**
 * The connect options (authenticator, inbox prefix, TLS) the environment's
 * credential calls for; empty when it names none (the server then decides, and
 * Writ's own refuses). Read at connect time so that a reissued file is picked
 * up by the next connection. Throws BUS_CREDENTIALS_INVALID naming the
 * variable, never the secret, when a file is missing or unusable.
 */
export function natsConnectOptions(env: NatsCredentialEnvironment = process.env): Partial<ConnectionOptions> {
  const options: Partial<ConnectionOptions> = {};
  const credsFile = nonEmpty(env['WRIT_NATS_CREDS']);
  const nkeyFile = nonEmpty(env['WRIT_NATS_NKEY']);
  if (credsFile !== undefined) {
    const creds = readSecret('WRIT_NATS_CREDS', credsFile);
    options.authenticator = credsAuthenticator(new TextEncoder().encode(creds));
    const prefix = inboxPrefixOf(creds);
    if (prefix !== undefined) options.inboxPrefix = prefix;
  } else if (nkeyFile !== undefined) {
    options.authenticator = nkeyAuthenticator(new TextEncoder().encode(readSecret('WRIT_NATS_NKEY', nkeyFile).trim()));
  } else if (nonEmpty(env['WRIT_NATS_USER']) !== undefined) {
    options.authenticator = usernamePasswordAuthenticator(env['WRIT_NATS_USER'] as string, env['WRIT_NATS_PASS'] ?? '');
  } else if (nonEmpty(env['WRIT_NATS_TOKEN']) !== undefined) {
    options.authenticator = tokenAuthenticator(env['WRIT_NATS_TOKEN'] as string);
  }
  const ca = nonEmpty(env['WRIT_NATS_TLS_CA']);
  const cert = nonEmpty(env['WRIT_NATS_TLS_CERT']);
  const key = nonEmpty(env['WRIT_NATS_TLS_KEY']);
  if (ca !== undefined || cert !== undefined) {
    if ((cert === undefined) !== (key === undefined)) {
      throw new BusError('BUS_CREDENTIALS_INVALID', 'WRIT_NATS_TLS_CERT and WRIT_NATS_TLS_KEY go together: set both for a client certificate, or neither');
    }
    options.tls = {
      ...(ca === undefined ? {} : { ca: readSecret('WRIT_NATS_TLS_CA', ca) }),
      ...(cert === undefined || key === undefined ? {} : { cert: readSecret('WRIT_NATS_TLS_CERT', cert), key: readSecret('WRIT_NATS_TLS_KEY', key) }),
    };
  }
  return options;
}

/**
 * The credential a service's durable consumers pull with: `WRIT_NATS_CONSUMER_CREDS`, else the file
 * `writ init` issues beside `WRIT_NATS_CREDS` (`<name>.consumer.creds` for `<name>.creds`) when it
 * is there; undefined otherwise, and the consumers then pull on the service's own connection. Its
 * user may not answer requests, which spares the server a reply-permission entry per delivery
 * (runtime `serviceConsumerPermissions`).
 */
export function consumerCredsFile(env: NatsCredentialEnvironment = process.env): string | undefined {
  const named = nonEmpty(env['WRIT_NATS_CONSUMER_CREDS']);
  if (named !== undefined) return named;
  const creds = nonEmpty(env['WRIT_NATS_CREDS']);
  if (creds === undefined || !creds.endsWith('.creds')) return undefined;
  const beside = `${creds.slice(0, -'.creds'.length)}.consumer.creds`;
  return existsSync(beside) ? beside : undefined;
}

/**
 * A service's connection for what it pulls from JetStream (its durable consumers, a follower of
 * the log), on its consumer credential (`consumerCredsFile`); undefined when it has none, and the
 * caller pulls on its own connection. Reconnects forever, like the service's own (`SERVICE_CONNECTION`).
 */
export async function connectConsumerBus(name: string, servers: string | string[], env: NatsCredentialEnvironment = process.env): Promise<NatsConnection | undefined> {
  const credentials = consumerCredsFile(env);
  if (credentials === undefined) return undefined;
  try {
    return await connectBus({ servers, name: `${name}-consumers`, ...SERVICE_CONNECTION }, { ...env, WRIT_NATS_CREDS: credentials });
  } catch (cause) {
    throw new BusError('BUS_CONNECTION_FAILED', `cannot connect ${name}'s consumers to NATS at ${String(servers)} with ${credentials}`, { cause });
  }
}

/**
 * The `_INBOX.<name>` prefix a Writ-issued user JWT confines its replies to
 * (its only `_INBOX` subscription permission), so nats.js's request inboxes
 * fall inside it; undefined for any other credential.
 */
export function inboxPrefixOf(creds: string): string | undefined {
  const payload = userJwtOf(creds)?.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { nats?: { sub?: { allow?: unknown } } };
    const allow = claims.nats?.sub?.allow;
    if (!Array.isArray(allow)) return undefined;
    for (const subject of allow) {
      const match = typeof subject === 'string' ? SCOPED_INBOX.exec(subject) : null;
      if (match !== null) return match[1];
    }
  } catch {
    // Not a JWT we can read: nats.js's default inbox, and the server decides.
  }
  return undefined;
}

/** The user JWT a `.creds` text carries (undefined when it carries none). */
export function userJwtOf(creds: string): string | undefined {
  return /-----BEGIN NATS USER JWT-----\s*([A-Za-z0-9_.-]+)\s*------END NATS USER JWT------/.exec(creds)?.[1];
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function readSecret(variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (cause) {
    throw new BusError('BUS_CREDENTIALS_INVALID', `${variable} names ${path}, which cannot be read (${(cause as NodeJS.ErrnoException).code ?? 'error'}); point it at the file writ init or writ principal add wrote`, { cause });
  }
}

/** Attempts at a first connection that timed out (a server or a host busy at start-up), before giving up. */
const CONNECT_ATTEMPTS = 3;

/** How long a service waits at start for the server and its JetStream (`WRIT_BUS_START_TIMEOUT_MS`, default 60 s). */
export const BUS_START_TIMEOUT_MS_DEFAULT = 60_000;
const START_POLL_MS = 250;
const START_POLL_MAX_MS = 2_000;

export interface BusStartOptions {
  /**
   * A service starting: wait (up to `WRIT_BUS_START_TIMEOUT_MS`) for a server that is
   * down or restarting (connection refused or timed out) and then for its JetStream
   * to answer, instead of exiting. A service restarted while the server restarts
   * (a crash of both, a node replaced) then comes up on its own. Without it (the
   * CLI), a refused connection fails at once.
   */
  readonly waitForServer?: boolean;
  /** Told why the start is waiting (for the service's log). */
  readonly onWait?: (reason: string) => void;
}

/**
 * `servers` as a list: a string may name several servers separated by commas
 * (`WRIT_NATS_URL=nats://127.0.0.1:4223,nats://127.0.0.1:4224` for a cluster), which
 * the client library would otherwise take as one malformed URL.
 */
export function serverList(servers: string | string[] | undefined): string[] | undefined {
  if (servers === undefined) return undefined;
  return (Array.isArray(servers) ? servers : [servers])
    .flatMap((entry) => entry.split(','))
    .map((server) => server.trim())
    .filter((server) => server !== '');
}

/**
 * How a long-running service's connection behaves once up: it never gives up
 * reconnecting (the client library's default is 10 attempts, about 20 s, after
 * which the connection closes for good and the process would stay up with no bus),
 * and it tries the cluster's other servers in turn. Nor does it give up after two
 * authentication errors in a row (the library's default): a nats-server restarting
 * under load refused valid credentials for a moment, and six agents' connections
 * closed for good in the chaos run (issue 13); a credential really revoked is
 * refused on every attempt, logged each time, and `writ doctor` names it.
 */
export const SERVICE_CONNECTION: Pick<ConnectionOptions, 'maxReconnectAttempts' | 'reconnectTimeWait' | 'reconnectJitter' | 'ignoreAuthErrorAbort' | 'noAsyncTraces'> = Object.freeze({
  maxReconnectAttempts: -1,
  ignoreAuthErrorAbort: true,
  reconnectTimeWait: 1_000,
  reconnectJitter: 250,
  // The client library otherwise builds an Error (a stack capture) for every request and its timer, in case
  // it fails: a tenth of a service's CPU under load (issue 14's profiles). A failed request still says
  // which subject and why; only the caller's stack in the library's own error is lost.
  noAsyncTraces: true,
});

/**
 * Connects with the environment's credential (`natsConnectOptions`), retrying a
 * first connection that timed out, a host saturated at start-up being the usual
 * cause; a refusal (bad credential, authorization) fails at once, since
 * retrying cannot fix it. With `waitForServer`, see `BusStartOptions`. The
 * caller maps the final error onto its own code. `servers` may be comma-separated
 * (`serverList`); with `waitForServer` the connection reconnects forever
 * (`SERVICE_CONNECTION`) unless `options` say otherwise.
 */
export async function connectBus(options: ConnectionOptions, env: NatsCredentialEnvironment = process.env, start: BusStartOptions = {}): Promise<NatsConnection> {
  const servers = serverList(options.servers);
  const settings = { ...(start.waitForServer === true ? SERVICE_CONNECTION : {}), ...options, ...(servers === undefined ? {} : { servers }), ...natsConnectOptions(env) };
  if (start.waitForServer !== true) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await connect(settings);
      } catch (error) {
        if (!(error instanceof errors.TimeoutError) || attempt >= CONNECT_ATTEMPTS) throw error;
      }
    }
  }
  const timeoutMs = startTimeoutMs(env);
  const deadline = Date.now() + timeoutMs;
  let pause = START_POLL_MS;
  const wait = async (reason: string, cause: unknown) => {
    if (Date.now() + pause > deadline) {
      throw new BusError('BUS_CONNECTION_FAILED', `${reason} for ${timeoutMs} ms (WRIT_BUS_START_TIMEOUT_MS): is Writ's nats-server running at ${String(settings.servers)}? (scripts/writ-nats.sh)`, { cause });
    }
    start.onWait?.(reason);
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(START_POLL_MAX_MS, pause * 2);
  };
  let nc: NatsConnection | undefined;
  while (nc === undefined) {
    try {
      nc = await connect(settings);
    } catch (error) {
      const transient = error instanceof errors.TimeoutError || (error instanceof errors.ConnectionError && /refused|closed|reset/i.test(error.message));
      if (!transient) throw error;
      await wait('the NATS server did not accept the connection', error);
    }
  }
  // Connected is not ready: right after a server restart JetStream is still recovering its streams, and every
  // stream or consumer call of the start-up would time out. `$JS.API.INFO` answers once it serves the account.
  for (;;) {
    try {
      const reply = await nc.request('$JS.API.INFO', '', { timeout: 2_000 });
      const answer = reply.json<{ error?: { code?: number; description?: string } }>();
      if (answer.error === undefined) return nc;
      await wait(`JetStream answered ${answer.error.code ?? '?'} ${answer.error.description ?? ''}`.trim(), undefined);
    } catch (error) {
      if (error instanceof BusError) {
        await nc.close().catch(() => undefined);
        throw error;
      }
      await wait('JetStream did not answer yet', error).catch(async (failure: unknown) => {
        await nc.close().catch(() => undefined);
        throw failure;
      });
    }
  }
}

function startTimeoutMs(env: NatsCredentialEnvironment): number {
  const text = env['WRIT_BUS_START_TIMEOUT_MS'];
  if (text === undefined || text === '') return BUS_START_TIMEOUT_MS_DEFAULT;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new BusError('BUS_CONFIG_INVALID', `WRIT_BUS_START_TIMEOUT_MS=${text} is not a whole number of milliseconds`);
  return value;
}
