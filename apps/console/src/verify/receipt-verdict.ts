import type { InclusionProof, SignedTreeHead } from '@writ/contracts';
import { PublicKeySet, checkInclusion, checkReceiptChain, checkTreeHead, verifyReceiptDocument } from '@writ/verification';
import type { Json, ReceiptRow } from '../api/rows.js';
import type { InclusionAnswer } from '../api/writ-api.js';

/**
 * A receipt verified in the browser, from what the API served, with nothing
 * taken on its word: the signature and body against `GET /v1/keys` (the same
 * checks as `writ verify`, from @writ/verification), the per-task hash chain
 * against the task's timeline, and the inclusion proof against the signed
 * tree head. PASS only when every check passes; a check that could not run
 * (no proof served) is a SKIP and the verdict says it is partial.
 */

export type Verdict = 'PASS' | 'FAIL' | 'PARTIAL';

export interface VerdictCheck {
  readonly name: string;
  readonly result: 'pass' | 'fail' | 'skip';
  readonly code?: string;
  readonly message: string;
}

export interface ReceiptVerdict {
  readonly verdict: Verdict;
  readonly checks: readonly VerdictCheck[];
  readonly kid: string | null;
}

export interface VerdictInputs {
  readonly receiptId: string;
  readonly row: ReceiptRow;
  readonly jwks: Json;
  /** The task's receipts in log order (`timelineReceipts`). */
  readonly taskReceipts: readonly Json[];
  /** The proof and head the API served, or why there is none. */
  readonly inclusion: InclusionAnswer;
}

export async function verifyReceipt(inputs: VerdictInputs): Promise<ReceiptVerdict> {
  const keys = await PublicKeySet.fromJwks(inputs.jwks);
  const document = await verifyReceiptDocument({ receiptId: inputs.receiptId, receipt: inputs.row.receipt, jws: inputs.row.jws }, keys);
  const checks: VerdictCheck[] = document.checks.map((check) => ({ name: `receipt.${check.name}`, result: check.result, ...(check.code === undefined ? {} : { code: check.code }), message: check.message }));
  const chain = await checkReceiptChain(inputs.row.receipt, inputs.taskReceipts);
  checks.push({ name: 'receipt.chain', result: chain.result, ...(chain.code === undefined ? {} : { code: chain.code }), message: chain.message });
  if (inputs.inclusion.kind !== 'proof') {
    const message =
      inputs.inclusion.kind === 'not_yet'
        ? 'the receipt is not sequenced in the transparency log yet: verify again shortly'
        : 'the API serves no inclusion proof (GET /v1/receipts/<id>/inclusion-proof): check it with `writ tlog prove <receipt_id>`';
    checks.push({ name: 'tlog.tree_head', result: 'skip', message }, { name: 'tlog.leaf', result: 'skip', message }, { name: 'tlog.inclusion', result: 'skip', message });
  } else {
    const head = inputs.inclusion.tree_head as unknown as SignedTreeHead;
    const proof = inputs.inclusion.proof as unknown as InclusionProof;
    const headCheck = await checkTreeHead(head, keys);
    checks.push({ name: `tlog.${headCheck.name}`, result: headCheck.result, ...(headCheck.code === undefined ? {} : { code: headCheck.code }), message: headCheck.message });
    for (const check of await checkInclusion(document.recomputedHash, proof, head)) {
      checks.push({ name: `tlog.${check.name}`, result: check.result, ...(check.code === undefined ? {} : { code: check.code }), message: check.message });
    }
  }
  const verdict: Verdict = checks.some((check) => check.result === 'fail') ? 'FAIL' : checks.some((check) => check.result === 'skip') ? 'PARTIAL' : 'PASS';
  return { verdict, checks, kid: document.kid };
}
