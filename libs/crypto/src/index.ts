export { canonicalJson } from './canonical-json.js';
export { CryptoError, type CryptoErrorCode } from './crypto-errors.js';
export { sha256Hex } from './sha256.js';
