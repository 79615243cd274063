import { SignedTreeHead, TreeHead, parseContract } from '@writ/contracts';
import { canonicalJson } from '@writ/crypto';
import { treeHeadOf } from './transparency-log.js';

/** Signs a canonical TreeHead as a compact EdDSA JWS (`typ` TREE_HEAD_JWS_TYPE) with the receipt service key. */
export interface TreeHeadSigner {
  /** The key id: the head's `signer_ref` and the JWS `kid` (the key that signs receipts). */
  readonly kid: string;
  sign(canonicalHead: string): Promise<string>;
}

/** What a tree head signature covers: the RFC 8785 form of the TreeHead's four fields, nothing else. */
export function treeHeadSigningInput(head: TreeHead): string {
  return canonicalJson(parseContract('TreeHead', TreeHead, treeHeadOf(head)));
}

/** The signed tree head: the head, `signer_ref` = the key id, and the compact JWS over `treeHeadSigningInput`. */
export async function signTreeHead(head: TreeHead, signer: TreeHeadSigner): Promise<SignedTreeHead> {
  const jws = await signer.sign(treeHeadSigningInput(head));
  return parseContract('SignedTreeHead', SignedTreeHead, { ...treeHeadOf(head), signer_ref: signer.kid, jws });
}
