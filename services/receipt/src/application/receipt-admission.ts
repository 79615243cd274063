import { Id, ReceiptIssued, type EventEnvelope, type TlogRefusalCode, type TransparencyLogReceiptRefused } from '@writ/contracts';
import { KeySet, sha256Hex, type Ed25519PublicKey } from '@writ/crypto';
import { describeWindow, keyStandingAt, type KeyWindow } from '@writ/runtime';
import { canonicalReceiptBody } from './receipt-seal.js';
import type { IssuedReceipt } from './transparency-log.js';
import { verifyReceipt, type ReceiptVerificationCode } from './verify-receipt.js';

/** The receipt service principal's keys as its stream in the log tells them, the trust material of admission. */
export interface ReceiptSignerKeys {
  /** The principal the keys belong to (for messages). */
  readonly principalId: string;
  /** Each key's window (`keyWindows` of @writ/runtime over `<events>.principal.<id>`). */
  readonly windows: readonly KeyWindow[];
  /** The public key of one window, imported (callers cache it). */
  publicKey(window: KeyWindow): Promise<Ed25519PublicKey>;
}

export type ReceiptRefusal = Omit<TransparencyLogReceiptRefused, 'log_id'>;

export type ReceiptAdmission = { readonly ok: true; readonly receipt: IssuedReceipt } | { readonly ok: false; readonly refusal: ReceiptRefusal };

const SIGNATURE_CODES: Readonly<Record<ReceiptVerificationCode, TlogRefusalCode>> = {
  RECEIPT_INVALID: 'TLOG_RECEIPT_INVALID',
  RECEIPT_UNSIGNED: 'TLOG_RECEIPT_UNSIGNED',
  RECEIPT_HASH_MISMATCH: 'TLOG_RECEIPT_HASH_MISMATCH',
  // The JWS names another kid than signer_ref (the only key offered): not the signature signer_ref claims.
  RECEIPT_KEY_UNKNOWN: 'TLOG_RECEIPT_SIGNATURE_INVALID',
  RECEIPT_SIGNATURE_INVALID: 'TLOG_RECEIPT_SIGNATURE_INVALID',
  RECEIPT_PAYLOAD_MISMATCH: 'TLOG_RECEIPT_SIGNATURE_INVALID',
  RECEIPT_SIGNER_MISMATCH: 'TLOG_RECEIPT_SIGNATURE_INVALID',
};

/** A refusal's reason is bounded (the contract's Text allows more; a reason quotes claimed values). */
const MAX_REASON = 1_000;

/** The receipt id an event claims, when it is readable as one (only to name the refusal; never trusted). */
function claimedReceiptId(payload: unknown): string | null {
  const receipt = (payload as { receipt?: unknown } | null)?.receipt;
  const id = (receipt as { receipt_id?: unknown } | null)?.receipt_id;
  return Id.safeParse(id).success ? (id as string) : null;
}

/**
 * Decides whether a `receipt.issued` (already parsed as an event envelope)
 * may become a leaf of the transparency log. Nothing is taken on the log's
 * word (DESIGN invariant 9): the receipt must be a valid `ReceiptIssued` of
 * the task stream it is on, its `receipt_hash` must be SHA-256 of its RFC 8785
 * body, and it must be signed (the receipt's detached `signature` and the
 * event's `jws`) by the key its `signer_ref` names, which must be a key of the
 * receipt service principal valid at the receipt's `created_at` as that
 * principal's stream says. Pure: the trust material is passed in.
 */
export async function admitReceiptIssued(event: Pick<EventEnvelope, 'event_id' | 'task_id' | 'payload'>, keys: ReceiptSignerKeys): Promise<ReceiptAdmission> {
  const refuse = (code: TlogRefusalCode, reason: string, receiptId: string | null = claimedReceiptId(event.payload)): ReceiptAdmission => ({
    ok: false,
    refusal: { task_id: event.task_id, receipt_event_id: event.event_id, receipt_id: receiptId, code, reason: reason.slice(0, MAX_REASON) },
  });
  const parsed = ReceiptIssued.safeParse(event.payload);
  if (!parsed.success) return refuse('TLOG_RECEIPT_INVALID', `the payload is not a ReceiptIssued: ${parsed.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ')}`);
  const { receipt, jws } = parsed.data;
  const receiptId = receipt.receipt_id;
  if (receipt.task_id !== event.task_id) return refuse('TLOG_RECEIPT_TASK_MISMATCH', `the receipt is of task ${receipt.task_id}, appended to task ${event.task_id}`, receiptId);
  if (receipt.signature === undefined || receipt.signer_ref === undefined) return refuse('TLOG_RECEIPT_UNSIGNED', 'the receipt carries no signature or signer_ref', receiptId);
  if (receipt.receipt_hash === undefined || sha256Hex(canonicalReceiptBody(receipt)) !== receipt.receipt_hash) {
    return refuse('TLOG_RECEIPT_HASH_MISMATCH', 'receipt_hash is not the SHA-256 of the receipt body', receiptId);
  }
  const standing = keyStandingAt(keys.windows, receipt.signer_ref, receipt.created_at);
  if (standing.standing === 'unknown') return refuse('TLOG_RECEIPT_KEY_UNKNOWN', `${receipt.signer_ref} is not a key of ${keys.principalId}`, receiptId);
  if (standing.standing === 'not_valid_then') {
    return refuse('TLOG_RECEIPT_KEY_NOT_VALID', `key ${receipt.signer_ref} of ${keys.principalId} was not valid at created_at ${receipt.created_at} (${describeWindow(standing.window)})`, receiptId);
  }
  const verified = await verifyReceipt(receipt, jws, KeySet.of([await keys.publicKey(standing.window)]));
  if (!verified.ok) return refuse(SIGNATURE_CODES[verified.code], `${verified.code}: ${verified.message}`, receiptId);
  return { ok: true, receipt: { receipt_id: receiptId, task_id: event.task_id, receipt_hash: verified.receipt_hash, receipt_event_id: event.event_id } };
}
