import { COMMANDS, SignedTreeHead } from '@writ/contracts';
import { rooted } from '@writ/runtime';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { cell } from '../format.js';
import { requestService } from '../service-request.js';
import { checkTreeHead, keysValidAt, receiptPrincipal, reportChecks } from './tlog-common.js';

export interface TlogHeadOptions {
  /** The receipt service principal whose keys sign heads (default WRIT_RECEIPT_PRINCIPAL_ID or `writ-receipt`). */
  readonly principal?: string;
  readonly json?: boolean;
}

/**
 * `writ tlog head`: asks the receipt service for the latest signed tree head
 * of its transparency log (`<root>.qry.receipt.tree-head`; it signs a fresh
 * one first when the log grew), and checks its signature here against the
 * receipt principal's keys as the log records them. Exit 1
 * (CLI_TLOG_UNVERIFIED) when the head does not verify.
 */
export async function tlogHead(options: TlogHeadOptions, conn: Connection, io: CliIo): Promise<SignedTreeHead> {
  const principalId = receiptPrincipal(io, options.principal);
  const nc = await connectNats(conn);
  try {
    const head = await requestService(nc, rooted(COMMANDS.receiptTreeHead, conn.subjectRoot), {}, SignedTreeHead, 'SignedTreeHead');
    const store = await attachEventLog(nc, conn);
    const keys = await keysValidAt(
      (await store.readEntity('principal', principalId)).map(({ event }) => event),
      head.timestamp,
    );
    const check = await checkTreeHead(head, keys, principalId);
    if (options.json !== true) io.stdout(`tree head of ${head.log_id}: ${head.tree_size} leaves, root ${head.root_hash}, signed ${head.timestamp} by ${cell(head.signer_ref, 128)}`);
    reportChecks(io, [check], `the tree head of ${head.log_id}`, options.json === true, { tree_head: head });
    return head;
  } finally {
    await nc.drain().catch(() => undefined);
  }
}
