import { Id, parseContract } from '@writ/contracts';
import { KeySet } from '@writ/crypto';
import { CliError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { readJsonFile } from '../files.js';
import { cell, fields } from '../format.js';
import type { WritApi } from '../http-api.js';
import { KeysView, ReceiptView } from '../projection-api.js';
import { verifyReceiptDocument, type ReceiptVerification } from '../receipt-verification.js';

export interface ReceiptShowOptions {
  /** Verify the JWS and the canonical body. */
  readonly verify?: boolean;
  /** A JWKS file to trust instead of `GET /v1/keys`. */
  readonly keys?: string;
  readonly json?: boolean;
}

/**
 * `writ receipt <receipt_id> [--verify [--keys <jwks-file>]] [--json]`: the
 * receipt (`GET /v1/receipts/<id>`). `--verify` checks it against the service
 * keys (`GET /v1/keys`, or `--keys`): the Receipt contract, `receipt_hash`,
 * the EdDSA JWS (alg pinned, `typ: writ-receipt+jws`), that it signs exactly
 * the canonical body, and that its signer is `signer_ref`. Each check prints
 * pass / fail / skip; any other than pass exits with CLI_RECEIPT_UNVERIFIED.
 * `--json` prints the row, or with `--verify` `{ receipt, verification }`.
 */
export async function receiptShow(
  id: string,
  options: ReceiptShowOptions,
  api: WritApi,
  io: CliIo,
): Promise<{ receipt: ReceiptView; verification?: ReceiptVerification }> {
  const receiptId = parseContract('receipt id', Id, id);
  if (options.keys !== undefined && options.verify !== true) throw new CliError('CLI_USAGE', '--keys is the trust material of --verify; add --verify');
  const row = await api.get(`/v1/receipts/${encodeURIComponent(receiptId)}`, ReceiptView);
  if (options.verify !== true) {
    if (options.json === true) io.stdout(JSON.stringify(row));
    else printReceipt(row, io);
    return { receipt: row };
  }

  const jwks = options.keys === undefined ? await api.get('/v1/keys', KeysView) : await readJsonFile(io.cwd, options.keys, 'JWKS');
  const keys = await KeySet.fromJwks(jwks);
  const verification = await verifyReceiptDocument({ receiptId, receipt: row.receipt, jws: row.jws }, keys);
  if (options.json === true) {
    io.stdout(JSON.stringify({ receipt: row, verification }));
  } else {
    printReceipt(row, io);
    io.stdout(`verify (${keys.size} trusted key${keys.size === 1 ? '' : 's'} from ${options.keys ?? `${api.baseUrl}/v1/keys`}):`);
    for (const check of verification.checks) {
      io.stdout(`  ${check.result.toUpperCase().padEnd(4)}  ${check.name.padEnd(9)}  ${check.code === undefined ? '' : `${check.code}: `}${cell(check.message, 200)}`);
    }
  }
  if (!verification.ok) {
    const failed = verification.checks.filter((check) => check.result !== 'pass');
    throw new CliError('CLI_RECEIPT_UNVERIFIED', `receipt ${receiptId} does not verify: ${failed.map((check) => `${check.name} ${check.code ?? check.result}`).join(', ')}`, {
      details: { receipt_id: receiptId, failed: failed.map((check) => check.name) },
    });
  }
  return { receipt: row, verification };
}

function printReceipt(row: ReceiptView, io: CliIo): void {
  const receipt = row.receipt;
  io.stdout(`receipt ${cell(row.receipt_id)}: ${cell(row.result_code ?? receipt['result_code'])}`);
  for (const line of fields([
    ['class', row.receipt_class ?? receipt['receipt_class']],
    ['summary', receipt['result_summary']],
    ['task', row.task_id],
    ['step', row.step_id],
    ['attempt', row.attempt_id],
    ['action', row.action_request_id ?? receipt['action_request_ref']],
    ['policy', receipt['policy_result_ref']],
    ['approval', receipt['approval_ref']],
    ['grant', receipt['capability_grant_ref']],
    ['outputs', Array.isArray(receipt['output_refs']) && receipt['output_refs'].length > 0 ? receipt['output_refs'].join(', ') : undefined],
    ['created', row.created_at ?? receipt['created_at']],
    ['signer', receipt['signer_ref']],
    ['hash', row.receipt_hash ?? receipt['receipt_hash']],
    ['previous', receipt['prev_receipt_hash'] === null ? '(none: the first receipt of its task)' : receipt['prev_receipt_hash']],
  ])) {
    io.stdout(line);
  }
}
