import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

/** Where integration tests find the real NATS server (never a mock). */
export const NATS_URL = process.env['WRIT_NATS_URL'] ?? 'nats://127.0.0.1:4222';

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
    nc = await connect({ servers: NATS_URL, name, timeout: 3_000 });
  } catch (cause) {
    throw new Error(`cannot reach NATS at ${NATS_URL}; start it with scripts/stack-up.sh`, { cause });
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
