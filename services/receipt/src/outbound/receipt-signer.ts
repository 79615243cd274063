import { signJws, type Ed25519SigningKey } from '@writ/crypto';
import type { ReceiptSigner } from '../application/ports.js';
import { RECEIPT_JWS_TYPE } from '../application/receipt-seal.js';

/** Signs canonical receipt bodies with the receipt service's Ed25519 key (EdDSA, compact JWS, `typ: writ-receipt+jws`). */
export class KeyReceiptSigner implements ReceiptSigner {
  readonly kid: string;

  constructor(private readonly key: Ed25519SigningKey) {
    this.kid = key.kid;
  }

  sign(canonicalBody: string): Promise<string> {
    return signJws(canonicalBody, this.key, { typ: RECEIPT_JWS_TYPE });
  }
}
