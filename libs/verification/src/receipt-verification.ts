import { safeParseReceipt } from '@writ/contracts';
import { fromUtf8 } from './bytes.js';
import { canonicalJson } from './canonical-json.js';
import { detachedForm, verifyCompactJws } from './compact-jws.js';
import { sha256Hex } from './digest.js';
import type { PublicKeySet } from './ed25519-keys.js';

/**
 * A receipt as the API serves it (`GET /v1/receipts/<id>`: the receipt as
 * signed and the compact JWS of `receipt.issued`), verified against trust
 * material passed in (`GET /v1/keys`, a JWKS file). No network, no clock:
 * `writ` and the console run exactly this.
 *
 * The receipt service signs the RFC 8785 body of the receipt without
 * `receipt_hash` and `signature` as a compact EdDSA JWS with
 * `typ: writ-receipt+jws`; `receipt_hash` is SHA-256 of that body and
 * `signature` the same JWS with its payload detached.
 */
export const RECEIPT_JWS_TYPE = 'writ-receipt+jws';

export type ReceiptCheckName = 'contract' | 'hash' | 'signature' | 'payload' | 'signer';

/** Why a check did not pass; the receipt service's verification codes. */
export type ReceiptCheckCode =
  /** Not a valid Receipt, or not the receipt asked for. */
  | 'RECEIPT_INVALID'
  /** `receipt_hash` is not SHA-256 of the canonical body: the body was changed. */
  | 'RECEIPT_HASH_MISMATCH'
  /** The JWS names a kid the trusted keys do not hold (or none). */
  | 'RECEIPT_KEY_UNKNOWN'
  /** The signature does not verify: tampered, wrong key, an algorithm other than EdDSA, wrong typ, malformed. */
  | 'RECEIPT_SIGNATURE_INVALID'
  /** The JWS verifies but signs another body than this receipt's canonical body. */
  | 'RECEIPT_PAYLOAD_MISMATCH'
  /** The verifying key is not the receipt's `signer_ref`, or its `signature` is another signature than the JWS. */
  | 'RECEIPT_SIGNER_MISMATCH';

export type CheckResult = 'pass' | 'fail' | 'skip';

export interface ReceiptCheck {
  readonly name: ReceiptCheckName;
  readonly result: CheckResult;
  readonly code?: ReceiptCheckCode;
  readonly message: string;
}

export interface ReceiptVerification {
  /** Every check passed. */
  readonly ok: boolean;
  /** The kid of the key that verified the JWS, when it did. */
  readonly kid: string | null;
  /** SHA-256 of the canonical body as recomputed here (null when it cannot be), whatever `receipt_hash` claims. */
  readonly recomputedHash: string | null;
  readonly checks: readonly ReceiptCheck[];
}

const pass = (name: ReceiptCheckName, message: string): ReceiptCheck => ({ name, result: 'pass', message });
const fail = (name: ReceiptCheckName, code: ReceiptCheckCode, message: string): ReceiptCheck => ({ name, result: 'fail', code, message });
const skip = (name: ReceiptCheckName, message: string): ReceiptCheck => ({ name, result: 'skip', message });

/** The RFC 8785 body a receipt's hash and signature cover: the receipt without `receipt_hash` and `signature`. */
export function receiptCanonicalBody(receipt: Readonly<Record<string, unknown>>): string | undefined {
  const { receipt_hash: _hash, signature: _signature, ...body } = receipt;
  try {
    return canonicalJson(body);
  } catch {
    return undefined;
  }
}

export async function verifyReceiptDocument(
  document: { readonly receiptId: string; readonly receipt: Readonly<Record<string, unknown>>; readonly jws: string },
  keys: PublicKeySet,
): Promise<ReceiptVerification> {
  const { receipt, jws } = document;
  const checks: ReceiptCheck[] = [];

  const parsed = safeParseReceipt(receipt);
  if (!parsed.ok) {
    checks.push(fail('contract', 'RECEIPT_INVALID', `not a valid Receipt: ${parsed.error.issues.map((issue) => issue.path).join(', ')}`));
  } else if (parsed.value.receipt_id !== document.receiptId) {
    checks.push(fail('contract', 'RECEIPT_INVALID', `the receipt is ${parsed.value.receipt_id}, not ${document.receiptId}`));
  } else {
    checks.push(pass('contract', `a valid Receipt with id ${document.receiptId}`));
  }

  const canonical = receiptCanonicalBody(receipt);
  const recomputedHash = canonical === undefined ? null : await sha256Hex(canonical);
  const claimedHash = receipt['receipt_hash'];
  if (recomputedHash === null) {
    checks.push(fail('hash', 'RECEIPT_HASH_MISMATCH', 'the receipt body cannot be put in RFC 8785 form'));
  } else if (typeof claimedHash !== 'string') {
    checks.push(fail('hash', 'RECEIPT_HASH_MISMATCH', 'the receipt carries no receipt_hash'));
  } else if (recomputedHash !== claimedHash) {
    checks.push(fail('hash', 'RECEIPT_HASH_MISMATCH', 'receipt_hash is not the SHA-256 of the canonical body: the body was changed'));
  } else {
    checks.push(pass('hash', 'receipt_hash is the SHA-256 of the RFC 8785 body'));
  }

  let verified: { kid: string; payload: string } | undefined;
  try {
    const result = await verifyCompactJws(jws, keys, { typ: RECEIPT_JWS_TYPE });
    verified = { kid: result.kid, payload: fromUtf8(result.payload) };
    checks.push(pass('signature', `EdDSA signature by trusted key ${result.kid}`));
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    checks.push(
      code === 'JWS_KID_UNKNOWN' || code === 'JWS_KID_MISSING'
        ? fail('signature', 'RECEIPT_KEY_UNKNOWN', `signed by a key the trusted keys do not hold (${code})`)
        : fail('signature', 'RECEIPT_SIGNATURE_INVALID', `the JWS does not verify (${typeof code === 'string' ? code : 'malformed'})`),
    );
  }

  if (verified === undefined) {
    checks.push(skip('payload', 'needs a verified signature'), skip('signer', 'needs a verified signature'));
  } else {
    checks.push(
      canonical !== undefined && verified.payload === canonical
        ? pass('payload', 'the JWS signs exactly this receipt (canonical body)')
        : fail('payload', 'RECEIPT_PAYLOAD_MISMATCH', 'the JWS signs another body than this receipt'),
    );
    const signerRef = receipt['signer_ref'];
    const signature = receipt['signature'];
    if (signerRef !== verified.kid) {
      checks.push(fail('signer', 'RECEIPT_SIGNER_MISMATCH', `signed by ${verified.kid}, but signer_ref names ${typeof signerRef === 'string' ? signerRef : 'nobody'}`));
    } else if (typeof signature !== 'string' || detachedForm(signature) !== detachedForm(jws)) {
      checks.push(fail('signer', 'RECEIPT_SIGNER_MISMATCH', "the receipt's signature is not the JWS's signature"));
    } else {
      checks.push(pass('signer', `signer_ref ${verified.kid} made the receipt's signature`));
    }
  }
  return { ok: checks.every((check) => check.result === 'pass'), kid: verified?.kid ?? null, recomputedHash, checks };
}
