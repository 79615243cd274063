import { readFileSync } from 'node:fs';
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

/**
 * Connects with the environment's credential (`natsConnectOptions`), retrying a
 * first connection that timed out, a host saturated at start-up being the usual
 * cause; a refusal (bad credential, authorization) fails at once, since
 * retrying cannot fix it. The caller maps the final error onto its own code.
 */
export async function connectBus(options: ConnectionOptions, env: NatsCredentialEnvironment = process.env): Promise<NatsConnection> {
  const settings = { ...options, ...natsConnectOptions(env) };
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect(settings);
    } catch (error) {
      if (!(error instanceof errors.TimeoutError) || attempt >= CONNECT_ATTEMPTS) throw error;
    }
  }
}
