export { canonicalJson } from './canonical-json.js';
export { CryptoError, type CryptoErrorCode } from './crypto-errors.js';
export {
  JWS_ALGORITHM,
  exportEd25519PrivateJwk,
  generateEd25519Key,
  importEd25519PrivateJwk,
  importEd25519PublicJwk,
  toEd25519PublicKey,
  type Ed25519KeyOptions,
  type Ed25519PrivateJwk,
  type Ed25519PublicJwk,
  type Ed25519PublicKey,
  type Ed25519SigningKey,
} from './ed25519-keys.js';
export { bytesToHex, hexToBytes } from './hex.js';
export { KeySet, type JsonWebKeySet } from './jwks.js';
export {
  signDetachedJws,
  signJws,
  verifyDetachedJws,
  verifyJws,
  type JwsProtectedHeader,
  type JwsSignOptions,
  type JwsSigner,
  type JwsVerificationKeys,
  type JwsVerifyOptions,
  type VerifiedJws,
} from './jws.js';
export {
  DEFAULT_CLOCK_TOLERANCE_SECONDS,
  signClaims,
  verifyClaims,
  type JwtClaims,
  type SignClaimsOptions,
  type VerifiedClaims,
  type VerifyClaimsOptions,
} from './jwt.js';
export {
  MERKLE_HASH_BYTES,
  consistencyProof,
  emptyTreeRoot,
  inclusionProof,
  merkleLeafHash,
  merkleNodeHash,
  merkleRoot,
  verifyConsistency,
  verifyInclusion,
} from './merkle.js';
export { canonicalContentVersion, sha256Hex } from './sha256.js';
export {
  DOCUMENT_SIGNATURE_ALGO,
  documentPayloadHash,
  documentSignatures,
  ed25519Fingerprint,
  signDigest,
  signDocument,
  verifyDigestSignature,
  type DocumentSignature,
} from './signed-document.js';
export { SigningKeyring } from './signing-keyring.js';
