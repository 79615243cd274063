import { parseReceipt, type Receipt } from '@writ/contracts';
import { canonicalJson, sha256Hex, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { ServiceKeyring } from '@writ/runtime';

/**
 * The key the receipt service signs with now, read from its key directory
 * (the key file's path without `.jwk.json`, as its config derives it): tests
 * that append a `receipt.issued` around the service sign it as the service
 * would, since the transparency log admits only receipts signed by the
 * receipt principal's keys.
 */
export async function receiptServiceKey(keyFile: string): Promise<Ed25519SigningKey> {
  const { keyring } = await ServiceKeyring.open({ dir: keyFile.replace(/\.jwk\.json$/, ''), newKid: () => 'never-generated' });
  return keyring.active;
}

/** Seals a receipt body as the receipt service does (RFC 8785 body hashed, compact EdDSA JWS, detached signature), signed by `key`. */
export async function sealTestReceipt(body: Readonly<Record<string, unknown>>, key: Ed25519SigningKey): Promise<{ receipt: Receipt; jws: string }> {
  const canonical = canonicalJson({ ...body, signer_ref: key.kid });
  const jws = await signJws(canonical, key, { typ: 'writ-receipt+jws' });
  const [header, , signature] = jws.split('.');
  return { receipt: parseReceipt({ ...body, signer_ref: key.kid, receipt_hash: sha256Hex(canonical), signature: `${header}..${signature}` }), jws };
}
