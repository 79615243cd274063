import { resolve } from 'node:path';
import { pushAccountJwt } from '@writ/runtime';
import type { CliIo, Connection } from './cli-io.js';
import { connectNats } from './event-log.js';

/** The operator's deployment directory (`writ init`): WRIT_HOME, else ./var/writ. */
export function writHome(io: CliIo): string {
  return resolve(io.cwd, io.env['WRIT_HOME'] || 'var/writ');
}

/**
 * Pushes an account JWT (an agent's account issued or revoked) to the server
 * over the deployment's system credential (`<WRIT_HOME>/creds/system.creds`),
 * the only one allowed to; the server applies it at once.
 */
export async function pushAccount(conn: Connection, io: CliIo, accountJwt: string): Promise<void> {
  const system = await connectNats({ ...conn, env: { ...conn.env, WRIT_NATS_CREDS: resolve(writHome(io), 'creds', 'system.creds') } });
  try {
    await pushAccountJwt(system, accountJwt);
  } finally {
    await system.drain().catch(() => undefined);
  }
}
