import { safeParseReceipt, type Receipt } from '@writ/contracts';
import { sha256Hex, verifyDetachedJws, verifyJws, type KeySet } from '@writ/crypto';
import { RECEIPT_JWS_TYPE, canonicalReceiptBody, detachedForm } from './receipt-seal.js';

/**
 * Why a receipt does not verify. Closed; callers branch on the code.
 * (Lib-worthy: proposed for `@writ/crypto` or a `@writ/receipts` lib, so `writ
 * verify`, the projection and auditors share one verifier.)
 */
export type ReceiptVerificationCode =
  /** Not a valid Receipt (schema or its rules). */
  | 'RECEIPT_INVALID'
  /** No `signature` or `signer_ref`: nothing to verify a signed receipt with. */
  | 'RECEIPT_UNSIGNED'
  /** `receipt_hash` is not SHA-256 of the canonical body: the body was changed. */
  | 'RECEIPT_HASH_MISMATCH'
  /** The JWS names a key id the trusted key set does not hold (or none). */
  | 'RECEIPT_KEY_UNKNOWN'
  /** The signature does not verify (wrong key, tampered, wrong alg or typ, malformed). */
  | 'RECEIPT_SIGNATURE_INVALID'
  /** The JWS is valid but signs another body than this receipt's. */
  | 'RECEIPT_PAYLOAD_MISMATCH'
  /** The key that verified is not the one `signer_ref` names, or the JWS and `signature` differ. */
  | 'RECEIPT_SIGNER_MISMATCH';

export type ReceiptVerification =
  | { readonly ok: true; readonly receipt: Receipt; readonly receipt_hash: string; readonly kid: string }
  | { readonly ok: false; readonly code: ReceiptVerificationCode; readonly message: string };

const fail = (code: ReceiptVerificationCode, message: string): ReceiptVerification => ({ ok: false, code, message });

function signatureFailure(error: unknown): ReceiptVerification {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'JWS_KID_UNKNOWN' || code === 'JWS_KID_MISSING') return fail('RECEIPT_KEY_UNKNOWN', 'the receipt is signed by a key the verifier does not trust');
  return fail('RECEIPT_SIGNATURE_INVALID', `the receipt signature does not verify (${typeof code === 'string' ? code : 'malformed'})`);
}

/** Verifies one compact JWS (attached or detached payload) over `canonical`; returns the kid or a failure. */
async function verifyOver(token: string, canonical: string, keys: KeySet): Promise<{ kid: string } | ReceiptVerification> {
  const detached = token.split('.')[1] === '';
  try {
    if (detached) return { kid: (await verifyDetachedJws(token, canonical, keys, { typ: RECEIPT_JWS_TYPE })).kid };
    const verified = await verifyJws(token, keys, { typ: RECEIPT_JWS_TYPE });
    if (new TextDecoder().decode(verified.payload) !== canonical) return fail('RECEIPT_PAYLOAD_MISMATCH', 'the JWS signs another body than this receipt');
    return { kid: verified.kid };
  } catch (error) {
    return signatureFailure(error);
  }
}

/**
 * Verifies a receipt against trust material passed in (no network, no clock):
 * its schema; `receipt_hash` = SHA-256 of the RFC 8785 body (everything but
 * `receipt_hash` and `signature`); its `signature` (a detached or attached
 * compact EdDSA JWS, `typ: writ-receipt+jws`) over that body by a key of
 * `keys` whose kid is `signer_ref`; and, when the `jws` of `receipt.issued` is
 * given, that it verifies too and is the same signature.
 */
export async function verifyReceipt(receipt: unknown, jws: string | undefined, keys: KeySet): Promise<ReceiptVerification> {
  const parsed = safeParseReceipt(receipt);
  if (!parsed.ok) return fail('RECEIPT_INVALID', `not a valid receipt: ${parsed.error.issues.map((issue) => issue.path).join(', ')}`);
  const value = parsed.value;
  if (value.signature === undefined || value.signer_ref === undefined) return fail('RECEIPT_UNSIGNED', 'the receipt carries no signature or signer_ref');
  const canonical = canonicalReceiptBody(value);
  const hash = sha256Hex(canonical);
  if (value.receipt_hash !== hash) return fail('RECEIPT_HASH_MISMATCH', 'receipt_hash is not the hash of the receipt body');

  const bySignature = await verifyOver(value.signature, canonical, keys);
  if ('ok' in bySignature) return bySignature;
  if (jws !== undefined) {
    const byJws = await verifyOver(jws, canonical, keys);
    if ('ok' in byJws) return byJws;
    if (detachedForm(jws) !== detachedForm(value.signature)) return fail('RECEIPT_SIGNER_MISMATCH', 'the JWS and the receipt signature are different signatures');
  }
  if (bySignature.kid !== value.signer_ref) return fail('RECEIPT_SIGNER_MISMATCH', `signed by ${bySignature.kid}, but signer_ref names ${value.signer_ref}`);
  return { ok: true, receipt: value, receipt_hash: hash, kid: bySignature.kid };
}

export type ReceiptChainCheck =
  | { readonly ok: true; readonly length: number }
  | { readonly ok: false; readonly index: number; readonly code: 'RECEIPT_CHAIN_BROKEN'; readonly message: string };

/**
 * Checks that a task's receipts, in log order, form a chain: the first has
 * `prev_receipt_hash` null, each next one the previous one's `receipt_hash`.
 * (Each receipt's own hash and signature are `verifyReceipt`'s job.)
 */
export function verifyReceiptChain(receipts: readonly Pick<Receipt, 'receipt_hash' | 'prev_receipt_hash'>[]): ReceiptChainCheck {
  let previous: string | null = null;
  for (const [index, receipt] of receipts.entries()) {
    if ((receipt.prev_receipt_hash ?? null) !== previous) {
      return { ok: false, index, code: 'RECEIPT_CHAIN_BROKEN', message: `receipt ${index} links to ${receipt.prev_receipt_hash ?? 'nothing'}, expected ${previous ?? 'nothing'}` };
    }
    previous = receipt.receipt_hash ?? null;
  }
  return { ok: true, length: receipts.length };
}
