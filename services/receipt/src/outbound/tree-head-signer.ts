import { TREE_HEAD_JWS_TYPE } from '@writ/contracts';
import { signJws, type Ed25519SigningKey } from '@writ/crypto';
import type { TreeHeadSigner } from '../application/tree-head.js';

/** Signs canonical tree heads with the receipt service's Ed25519 key, the one that signs receipts (EdDSA, compact JWS, `typ: writ-tree-head+jws`). */
export class KeyTreeHeadSigner implements TreeHeadSigner {
  readonly kid: string;

  constructor(private readonly key: Ed25519SigningKey) {
    this.kid = key.kid;
  }

  sign(canonicalHead: string): Promise<string> {
    return signJws(canonicalHead, this.key, { typ: TREE_HEAD_JWS_TYPE });
  }
}
