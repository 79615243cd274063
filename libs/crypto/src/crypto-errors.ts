import { WritError } from '@writ/contracts';

export type CryptoErrorCode =
  | 'CRYPTO_NOT_CANONICALIZABLE';

export class CryptoError extends WritError<CryptoErrorCode> {}
