import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

/** Where integration tests find the real NATS server (never a mock): Writ's own, with auth (`scripts/writ-nats.sh`). */
export const NATS_URL = process.env['WRIT_NATS_URL'] ?? 'nats://127.0.0.1:4223';

/**
 * The credential tests connect with: `WRIT_NATS_CREDS`, which `npm test` points
 * at the operator's `.creds` that `writ init` wrote (tests create and delete
 * their own streams, which only the operator may). Writ's server refuses
 * anonymous connections, so there is no test path without one.
 */
export function testNatsAuth(): { authenticator?: ReturnType<typeof credsAuthenticator> } {
  const file = process.env['WRIT_NATS_CREDS'];
  if (file === undefined || file === '') return {};
  return { authenticator: credsAuthenticator(readFileSync(file)) };
}

/** A name no other test run on this server will use: `prefix_<random>`, a valid stream/subject token. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/**
 * Connects to the real NATS server and fails fast, with the fix, when it is
 * not running or JetStream is off.
 */
export async function connectTestNats(name = 'writ-test'): Promise<NatsConnection> {
  let nc: NatsConnection;
  try {
    nc = await connect({ servers: NATS_URL, name, timeout: 3_000, ...testNatsAuth() });
  } catch (cause) {
    throw new Error(`cannot reach NATS at ${NATS_URL} with WRIT_NATS_CREDS=${process.env['WRIT_NATS_CREDS'] ?? '(unset)'}; start Writ's NATS with scripts/writ-nats.sh (npm test does)`, { cause });
  }
  try {
    await (await jetstreamManager(nc)).getAccountInfo();
  } catch (cause) {
    await nc.close();
    throw new Error(`NATS at ${NATS_URL} has JetStream disabled; start nats-server with -js`, { cause });
  }
  return nc;
}

/** Deletes streams a test created; missing streams are fine. */
export async function deleteStreams(nc: NatsConnection, ...names: string[]): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (const name of names) {
    await jsm.streams.delete(name).catch(() => undefined);
  }
}
