import { Id, parseContract } from '@writ/contracts';
import { evolvePrincipal, type PrincipalRecord } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';

export interface PrincipalView {
  readonly principal_id: string;
  readonly principal_type: string;
  readonly display_name: string;
  readonly roles: readonly string[];
  readonly keys: readonly { kid: string; x: string }[];
  readonly revoked_kids: readonly string[];
}

/** `writ principal show <id> [--json]`: the principal as the log says now. */
export async function principalShow(id: string, options: { json?: boolean }, conn: Connection, io: CliIo): Promise<PrincipalView> {
  const principalId = parseContract('principal id', Id, id);
  const nc = await connectNats(conn);
  let record: PrincipalRecord | undefined;
  try {
    const store = await attachEventLog(nc, conn);
    for (const { event } of await store.readEntity('principal', principalId)) record = evolvePrincipal(record, event);
  } finally {
    await nc.drain().catch(() => undefined);
  }
  if (record === undefined) throw new CliError('CLI_PRINCIPAL_NOT_FOUND', `principal ${principalId} is not registered`);
  const view: PrincipalView = {
    principal_id: record.principal_id,
    principal_type: record.principal_type,
    display_name: record.display_name,
    roles: record.roles,
    keys: [...record.keys.values()].map((key) => ({ kid: key.kid, x: key.x })),
    revoked_kids: [...record.revoked_kids],
  };
  if (options.json === true) {
    io.stdout(JSON.stringify(view));
  } else {
    io.stdout(`${view.principal_id} (${view.principal_type}) ${view.display_name}`);
    io.stdout(`  roles: ${view.roles.join(', ') || '(none)'}`);
    for (const key of view.keys) io.stdout(`  key ${key.kid}`);
    for (const kid of view.revoked_kids) io.stdout(`  revoked ${kid}`);
  }
  return view;
}
