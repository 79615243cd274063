import type { KeySet } from '@writ/crypto';
import { PublicKeySet, verifyReceiptDocument as verifyWithWebCrypto, type ReceiptVerification } from '@writ/verification';

/**
 * Verifies a receipt as the API serves it (`GET /v1/receipts/<id>`: the
 * receipt as signed and the compact JWS of `receipt.issued`) against trust
 * material passed in (`GET /v1/keys`, or a JWKS file). No network, no clock.
 *
 * The checks themselves live in `@writ/verification`, which the web console
 * runs in the browser too: one implementation, so `writ verify` and the
 * console cannot disagree on a receipt. This adapter takes the CLI's jose
 * `KeySet`.
 */
export {
  RECEIPT_JWS_TYPE,
  type ReceiptCheck,
  type ReceiptCheckCode,
  type ReceiptCheckName,
  type ReceiptVerification,
} from '@writ/verification';

export async function verifyReceiptDocument(
  document: { readonly receiptId: string; readonly receipt: Readonly<Record<string, unknown>>; readonly jws: string },
  keys: KeySet,
): Promise<ReceiptVerification> {
  return verifyWithWebCrypto(document, await PublicKeySet.fromJwks(keys.toJwks()));
}
