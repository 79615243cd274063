import { Id, parseContract } from '@writ/contracts';
import { keyLifecycles, type KeyLifecycle } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { cell, table } from '../format.js';

/** The signing services `writ keys list` shows by default, as `writ-<service>` principals. */
export const SIGNING_SERVICES = ['approval', 'receipt'] as const;

export interface KeysListOptions {
  /** One service (`approval`): its principal is `writ-<service>` unless `principal` says otherwise. */
  readonly service?: string;
  /** The principal whose keys to list (overrides `service`). */
  readonly principal?: string;
  readonly json?: boolean;
}

export interface PrincipalKeys {
  readonly principal_id: string;
  readonly keys: readonly KeyLifecycle[];
}

/**
 * `writ keys list [--service approval]`: each key of the service principals as
 * the log tells it (`principal.*` on `<root>.evt.principal.<id>`): `active`,
 * `retiring` until its `retire_after` (a rotation replaced it; it still
 * verifies), or `retired` (revoked; kept in the log for what it signed).
 */
export async function keysList(options: KeysListOptions, conn: Connection, io: CliIo): Promise<PrincipalKeys[]> {
  const principals =
    options.principal !== undefined
      ? [parseContract('--principal', Id, options.principal)]
      : (options.service === undefined ? SIGNING_SERVICES : [options.service]).map((service) => parseContract('--service', Id, `writ-${service}`));
  const nc = await connectNats(conn);
  const found: PrincipalKeys[] = [];
  try {
    const store = await attachEventLog(nc, conn);
    for (const principalId of principals) {
      const events = await store.readEntity('principal', principalId);
      if (events.length > 0) found.push({ principal_id: principalId, keys: keyLifecycles(events.map(({ event }) => event)) });
    }
  } finally {
    await nc.drain().catch(() => undefined);
  }
  if (found.length === 0 && (options.service !== undefined || options.principal !== undefined)) {
    throw new CliError('CLI_PRINCIPAL_NOT_FOUND', `principal ${principals[0] ?? ''} is not registered (has the service started?)`);
  }
  if (options.json === true) {
    io.stdout(JSON.stringify({ principals: found }));
    return found;
  }
  const rows = found.flatMap(({ principal_id: principalId, keys }) => keys.map((key) => [cell(principalId), cell(key.kid, 128), status(key), cell(key.added_at)]));
  for (const line of table(['PRINCIPAL', 'KID', 'STATUS', 'ADDED_AT'], rows)) io.stdout(line);
  return found;
}

function status(key: KeyLifecycle): string {
  if (key.status === 'retiring') return `retiring until ${cell(key.retire_after)}`;
  if (key.status === 'retired') return `retired ${cell(key.retired_at)}${key.reason === undefined ? '' : ` (${cell(key.reason)})`}`;
  return 'active';
}
