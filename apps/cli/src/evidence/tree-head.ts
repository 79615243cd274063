import { TREE_HEAD_JWS_TYPE, type BundleKey, type SignedTreeHead } from '@writ/contracts';
import { KeySet, canonicalJson, importEd25519PublicJwk, verifyJws } from '@writ/crypto';
import { describeWindow, keyValidAt } from '@writ/runtime';

export type TreeHeadVerification =
  | { readonly ok: true; readonly key: BundleKey }
  | { readonly ok: false; readonly code: 'TREE_HEAD_SIGNATURE_INVALID' | 'TREE_HEAD_KEY_NOT_VALID'; readonly detail: string };

/**
 * A signed tree head against the key history of the principal that signs the
 * log (the receipt service): a compact EdDSA JWS, `typ` writ-tree-head+jws,
 * by the key `signer_ref` names, over exactly the RFC 8785 form of the head's
 * log, size, root and time, and that key valid at the head's timestamp.
 */
export async function verifyTreeHead(head: SignedTreeHead, keys: readonly BundleKey[]): Promise<TreeHeadVerification> {
  const key = keys.find((candidate) => candidate.jwk.kid === head.signer_ref);
  if (key === undefined) return { ok: false, code: 'TREE_HEAD_SIGNATURE_INVALID', detail: `signer_ref ${head.signer_ref} is not a key of the log's signer` };
  let verified;
  try {
    verified = await verifyJws(head.jws, KeySet.of([await importEd25519PublicJwk(key.jwk)]), { typ: TREE_HEAD_JWS_TYPE });
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    return { ok: false, code: 'TREE_HEAD_SIGNATURE_INVALID', detail: `the tree head JWS does not verify with key ${key.jwk.kid} (${typeof code === 'string' ? code : 'malformed'})` };
  }
  const expected = canonicalJson({ log_id: head.log_id, tree_size: head.tree_size, root_hash: head.root_hash, timestamp: head.timestamp });
  if (new TextDecoder().decode(verified.payload) !== expected) {
    return { ok: false, code: 'TREE_HEAD_SIGNATURE_INVALID', detail: 'the JWS signs another tree head than the one stated (log, size, root or time)' };
  }
  if (!keyValidAt(key, head.timestamp)) {
    return { ok: false, code: 'TREE_HEAD_KEY_NOT_VALID', detail: `key ${key.jwk.kid} of ${key.principal_id} was not valid at the head's timestamp ${head.timestamp} (${describeWindow(key)})` };
  }
  return { ok: true, key };
}
