export { base64urlDecode, base64urlEncode, bytesToHex, hexToBytes } from './bytes.js';
export { canonicalJson } from './canonical-json.js';
export { detachedForm, peekCompactJws, signCompactJws, verifyCompactJws, type JwsHeader, type VerifiedCompactJws } from './compact-jws.js';
export { canonicalDigest, sha256, sha256Hex } from './digest.js';
export { PublicKeySet, importPrivateJwk, importPublicJwk, type PublicJwk, type SigningKey, type VerificationKey } from './ed25519-keys.js';
export { merkleLeafHash, merkleNodeHash, verifyInclusion } from './merkle.js';
export { checkReceiptChain, type ChainCheck, type ChainCheckCode } from './receipt-chain.js';
export { checkInclusion, checkTreeHead, type ProofCheck, type ProofCheckCode, type ProofCheckName } from './receipt-proof.js';
export {
  RECEIPT_JWS_TYPE,
  receiptCanonicalBody,
  verifyReceiptDocument,
  type CheckResult,
  type ReceiptCheck,
  type ReceiptCheckCode,
  type ReceiptCheckName,
  type ReceiptVerification,
} from './receipt-verification.js';
export {
  APPROVAL_PACKET_FORMAT,
  approvalPacketHash,
  mintBearerToken,
  packetHashOfRef,
  signApprovalResolution,
  signGrantRevocation,
  type BearerTokenOptions,
  type ResolutionFields,
} from './signed-requests.js';
export { VerificationError, type VerificationErrorCode } from './verification-errors.js';
