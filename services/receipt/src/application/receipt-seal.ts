import { parseReceipt, type Receipt } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import type { ReceiptBody } from './build-receipt.js';
import type { ReceiptSigner } from './ports.js';

/** The `typ` of a receipt JWS. */
export const RECEIPT_JWS_TYPE = 'writ-receipt+jws';

/** What is hashed and signed: the RFC 8785 form of the receipt without `receipt_hash` and `signature`. */
export function canonicalReceiptBody(receipt: Receipt | ReceiptBody): string {
  const { receipt_hash: _hash, signature: _signature, ...body } = receipt as Receipt;
  return canonicalJson(body);
}

/** `<header>..<signature>`: the compact JWS with its payload detached (RFC 7515 appendix F). */
export function detachedForm(jws: string): string {
  const [header, , signature] = jws.split('.');
  return `${header ?? ''}..${signature ?? ''}`;
}

/**
 * Hashes and signs a receipt body: `receipt_hash` = SHA-256 of the canonical
 * body, `jws` = compact EdDSA JWS whose payload is that canonical body, and
 * `signature` = the same JWS with the payload detached (the receipt carries
 * the body itself, so it is not repeated; `ReceiptIssued.jws` holds it whole).
 */
export async function sealReceipt(body: ReceiptBody, signer: ReceiptSigner): Promise<{ receipt: Receipt; jws: string }> {
  const canonical = canonicalReceiptBody(body);
  const jws = await signer.sign(canonical);
  const receipt = parseReceipt({ ...body, receipt_hash: sha256Hex(canonical), signature: detachedForm(jws) });
  return { receipt, jws };
}
