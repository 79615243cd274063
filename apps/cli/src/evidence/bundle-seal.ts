import type { ReceiptBundle } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';

export type UnsealedBundle = Omit<ReceiptBundle, 'bundle_hash'>;

/** `bundle_hash`: SHA-256 of the RFC 8785 form of the bundle without `bundle_hash`. */
export function bundleHashOf(bundle: Readonly<Record<string, unknown>>): string {
  const { bundle_hash: _seal, ...unsealed } = bundle;
  return sha256Hex(canonicalJson(unsealed));
}

export function sealBundle(unsealed: UnsealedBundle): ReceiptBundle {
  return { ...unsealed, bundle_hash: bundleHashOf(unsealed) };
}

/**
 * The bundle file: exactly its RFC 8785 form, one line, no trailing newline.
 * The verifier requires the bytes to be that form, so any changed byte is
 * either not JSON, not canonical, or another bundle (and breaks the seal).
 */
export function serializeBundle(bundle: ReceiptBundle): string {
  return canonicalJson(bundle);
}
