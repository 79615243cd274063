import { COMMANDS, Id, InclusionProofReply, ReceiptIssued, TransparencyLogEntryAppended, parseContract, type EventEnvelope } from '@writ/contracts';
import { bytesToHex, hexToBytes, merkleLeafHash, verifyInclusion } from '@writ/crypto';
import type { EventStore } from '@writ/eventstore';
import { rooted } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { cell } from '../format.js';
import { verifyReceiptDocument } from '../receipt-verification.js';
import { requestService } from '../service-request.js';
import { checkTreeHead, keysValidAt, receiptPrincipal, reportChecks, type TlogCheck } from './tlog-common.js';

export interface TlogProveOptions {
  /** Prove against the signed head published at this size (default: the current head). */
  readonly treeSize?: string;
  readonly principal?: string;
  readonly json?: boolean;
}

/**
 * `writ tlog prove <receipt_id>`: asks the receipt service for the receipt's
 * inclusion proof (`<root>.qry.receipt.inclusion-proof`) and checks it here,
 * with nothing taken on the service's word:
 * - `tree_head`: the head the proof is against is signed by a key of the
 *   receipt principal as the log records it;
 * - `receipt`: the receipt as its task stream holds it (found through its
 *   `tlog.entry_appended`) hashes to its `receipt_hash`, whose leaf hash
 *   SHA-256(0x00 ‖ receipt_hash) is the proof's, and is signed by a key of
 *   the receipt principal valid at its `created_at` (a leaf is not trusted
 *   for merely being in the log);
 * - `inclusion`: the audit path leads from that leaf to the signed root (RFC 9162).
 * Exit 1 (CLI_TLOG_UNVERIFIED) when any check fails; RECEIPT_NOT_IN_LOG
 * while the receipt is not sequenced yet.
 */
export async function tlogProve(receiptIdArg: string, options: TlogProveOptions, conn: Connection, io: CliIo): Promise<InclusionProofReply> {
  const receiptId = parseContract('receipt id', Id, receiptIdArg);
  const treeSize = options.treeSize === undefined ? undefined : parseTreeSize(options.treeSize);
  const principalId = receiptPrincipal(io, options.principal);
  const nc = await connectNats(conn);
  try {
    const query = { receipt_id: receiptId, ...(treeSize === undefined ? {} : { tree_size: treeSize }) };
    const reply = await requestService(nc, rooted(COMMANDS.receiptInclusionProof, conn.subjectRoot), query, InclusionProofReply, 'InclusionProofReply');
    const { proof, tree_head: head } = reply;
    const store = await attachEventLog(nc, conn);
    const principalEvents = (await store.readEntity('principal', principalId)).map(({ event }) => event);
    const keys = await keysValidAt(principalEvents, head.timestamp);
    const checks: TlogCheck[] = [await checkTreeHead(head, keys, principalId), await checkReceiptLeaf(store, receiptId, proof.log_id, proof.leaf_hash, { principalId, events: principalEvents })];
    const included = proof.log_id === head.log_id && proof.tree_size === head.tree_size && verifyInclusion(hexToBytes(proof.leaf_hash), proof.leaf_index, proof.tree_size, proof.audit_path.map(hexToBytes), hexToBytes(head.root_hash));
    checks.push({
      check: 'inclusion',
      pass: included,
      detail: included
        ? `leaf ${proof.leaf_index} of ${proof.tree_size}: the audit path of ${proof.audit_path.length} hash(es) leads to the signed root`
        : `leaf ${proof.leaf_index} of ${proof.tree_size}: the audit path does not lead to the signed root of ${head.log_id} at ${head.tree_size} leaves`,
    });
    if (options.json !== true) io.stdout(`receipt ${receiptId} is leaf ${proof.leaf_index} of ${proof.log_id} (tree of ${proof.tree_size}, root ${head.root_hash}):`);
    reportChecks(io, checks, `the inclusion of receipt ${receiptId}`, options.json === true, { proof, tree_head: head });
    return reply;
  } finally {
    await nc.drain().catch(() => undefined);
  }
}

/**
 * The receipt as its task stream holds it: found through its
 * `tlog.entry_appended` (task and `receipt.issued` event), its body hashed
 * again (RFC 8785 without `receipt_hash` and `signature`), that hash's leaf
 * hash compared with the proof's, and its signature (the receipt's and the
 * event's JWS) verified with the keys of the receipt principal valid at its
 * `created_at`.
 */
async function checkReceiptLeaf(
  store: EventStore,
  receiptId: string,
  logId: string,
  leafHash: string,
  signer: { readonly principalId: string; readonly events: readonly Pick<EventEnvelope, 'event_type' | 'payload'>[] },
): Promise<TlogCheck> {
  const fail = (detail: string): TlogCheck => ({ check: 'receipt', pass: false, detail });
  const entryEvent = (await store.readEntity('transparency_log', logId)).find(
    ({ event }) => event.event_type === 'tlog.entry_appended' && (event.payload as { receipt_id?: unknown }).receipt_id === receiptId,
  );
  if (entryEvent === undefined) return fail(`no tlog.entry_appended for ${receiptId} in the log ${logId}`);
  const entry = TransparencyLogEntryAppended.parse(entryEvent.event.payload);
  const issuedEvent = (await store.read(entry.task_id)).find(({ event }) => event.event_id === entry.receipt_event_id);
  if (issuedEvent === undefined || issuedEvent.event.event_type !== 'receipt.issued') return fail(`the receipt.issued ${entry.receipt_event_id} is not in task ${entry.task_id}`);
  const parsed = ReceiptIssued.safeParse(issuedEvent.event.payload);
  if (!parsed.success || parsed.data.receipt.receipt_id !== receiptId) return fail(`event ${entry.receipt_event_id} of task ${entry.task_id} does not carry receipt ${receiptId}`);
  const { receipt, jws } = parsed.data;
  const verified = await verifyReceiptDocument({ receiptId, receipt, jws }, await keysValidAt(signer.events, receipt.created_at));
  const failed = verified.checks.find((check) => check.result !== 'pass');
  if (failed?.name === 'hash') return fail(`receipt ${receiptId} in task ${entry.task_id} does not hash to its receipt_hash (its body was changed)`);
  const recomputed = receipt.receipt_hash ?? '';
  const leaf = bytesToHex(merkleLeafHash(hexToBytes(recomputed)));
  if (leaf !== leafHash) return fail(`the proof's leaf ${leafHash} is not SHA-256(0x00 ‖ receipt_hash ${recomputed})`);
  if (failed !== undefined) {
    return fail(`receipt ${receiptId} in task ${entry.task_id} is not signed by a key of ${signer.principalId} valid at its created_at ${receipt.created_at} (${failed.code ?? failed.result}: ${failed.message})`);
  }
  return {
    check: 'receipt',
    pass: true,
    detail: `receipt ${receiptId} (task ${cell(entry.task_id)}) hashes to ${recomputed}, signed by ${cell(verified.kid ?? '')} (${signer.principalId}); its leaf hash is the proof's`,
  };
}

function parseTreeSize(value: string): number {
  const size = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(size)) throw new CliError('CLI_USAGE', `--tree-size must be a whole number, got ${cell(value)}`);
  return size;
}
