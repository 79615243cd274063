import { SignJWT, jwtVerify } from 'jose';
import { canonicalJson } from './canonical-json.js';
import { CryptoError } from './crypto-errors.js';
import { JWS_ALGORITHM } from './ed25519-keys.js';
import { toCryptoError } from './jose-errors.js';
import {
  protectedHeaderFor,
  requireVerificationKeys,
  selectKey,
  type JwsProtectedHeader,
  type JwsSigner,
  type JwsVerificationKeys,
} from './jws.js';

/**
 * Clock skew tolerated on `exp` and `nbf` when the caller does not say: 30 s,
 * enough for hosts kept in sync by NTP, small against grant lifetimes of minutes.
 */
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;

/** A JWT claims set (RFC 7519 section 4) with the registered claims typed. */
export interface JwtClaims {
  readonly iss?: string;
  readonly sub?: string;
  readonly aud?: string | string[];
  readonly exp?: number;
  readonly nbf?: number;
  readonly iat?: number;
  readonly jti?: string;
  readonly [claim: string]: unknown;
}

export interface SignClaimsOptions {
  readonly issuer: string;
  readonly audience: string | readonly string[];
  /** Every token expires: an unbounded credential is never minted. */
  readonly expiresAt: Date;
  /** Defaults to now. */
  readonly issuedAt?: Date;
  readonly notBefore?: Date;
  readonly subject?: string;
  readonly jwtId?: string;
  /** `typ` header parameter (e.g. `writ-grant+jwt`), checked by `verifyClaims({ typ })`. */
  readonly typ?: string;
}

export interface VerifyClaimsOptions {
  /** Accepted issuer(s); required, so that no caller verifies a token without saying whose it must be. */
  readonly issuer: string | readonly string[];
  /** Accepted audience(s); required for the same reason. */
  readonly audience: string | readonly string[];
  readonly subject?: string;
  readonly typ?: string;
  /** Seconds of skew tolerated on `exp` and `nbf`; defaults to `DEFAULT_CLOCK_TOLERANCE_SECONDS`. */
  readonly clockToleranceSeconds?: number;
  /** The verifier's clock; defaults to now. */
  readonly now?: Date;
}

export interface VerifiedClaims {
  readonly claims: JwtClaims;
  readonly protectedHeader: JwsProtectedHeader;
  /** The `kid` of the key that verified the signature. */
  readonly kid: string;
}

/**
 * Signs `claims` as a JWT (EdDSA, compact JWS). The registered claims `iss`, `aud`,
 * `exp`, `iat`, `nbf`, `sub` and `jti` come from `options` and replace any
 * same-named member of `claims`.
 */
export async function signClaims(claims: Readonly<Record<string, unknown>>, signer: JwsSigner, options: SignClaimsOptions): Promise<string> {
  requireNonEmpty('issuer', options.issuer);
  requireNonEmpty('audience', options.audience);
  // jose serializes with JSON.stringify, which would turn NaN into null and throw untyped on bigint.
  canonicalJson(claims);
  const jwt = new SignJWT({ ...claims })
    .setProtectedHeader(protectedHeaderFor(signer, options))
    .setIssuer(options.issuer)
    .setAudience(typeof options.audience === 'string' ? options.audience : [...options.audience])
    .setIssuedAt(numericDate('issuedAt', options.issuedAt ?? new Date()))
    .setExpirationTime(numericDate('expiresAt', options.expiresAt));
  if (options.notBefore !== undefined) jwt.setNotBefore(numericDate('notBefore', options.notBefore));
  if (options.subject !== undefined) jwt.setSubject(options.subject);
  if (options.jwtId !== undefined) jwt.setJti(options.jwtId);
  try {
    return await jwt.sign(signer.privateKey);
  } catch (cause) {
    throw new CryptoError('CRYPTO_KEY_INVALID', 'signing needs a private Ed25519 key', { cause, details: { kid: signer.kid } });
  }
}

/**
 * Verifies a JWT: EdDSA signature by the key its `kid` selects, then `iss` and
 * `aud` against the caller's expectations, `exp` (which must be present) and
 * `nbf` against the clock with the stated tolerance, and `sub` / `typ` when asked.
 */
export async function verifyClaims(token: string, keys: JwsVerificationKeys, options: VerifyClaimsOptions): Promise<VerifiedClaims> {
  if (typeof token !== 'string') throw new CryptoError('JWS_MALFORMED', 'a JWT is a string');
  requireVerificationKeys(keys);
  requireNonEmpty('issuer', options.issuer);
  requireNonEmpty('audience', options.audience);
  const clockTolerance = options.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
  if (!Number.isFinite(clockTolerance) || clockTolerance < 0) {
    throw new CryptoError('CRYPTO_ARGUMENT_INVALID', 'clockToleranceSeconds must be a finite number >= 0', { details: { clockTolerance } });
  }
  if (options.now !== undefined) numericDate('now', options.now);

  let kid: string | undefined;
  try {
    const result = await jwtVerify(
      token,
      async (header) => {
        const key = selectKey(header, keys);
        kid = key.kid;
        return key.publicKey;
      },
      {
        algorithms: [JWS_ALGORITHM],
        issuer: typeof options.issuer === 'string' ? options.issuer : [...options.issuer],
        audience: typeof options.audience === 'string' ? options.audience : [...options.audience],
        clockTolerance,
        requiredClaims: ['exp'],
        ...(options.subject === undefined ? {} : { subject: options.subject }),
        ...(options.typ === undefined ? {} : { typ: options.typ }),
        ...(options.now === undefined ? {} : { currentDate: options.now }),
      },
    );
    return { claims: result.payload as JwtClaims, protectedHeader: result.protectedHeader as JwsProtectedHeader, kid: kid as string };
  } catch (error) {
    throw toCryptoError(error);
  }
}

function requireNonEmpty(name: string, value: string | readonly string[]): void {
  const values = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(values) || values.length === 0 || values.some((v) => typeof v !== 'string' || v.length === 0)) {
    throw new CryptoError('CRYPTO_ARGUMENT_INVALID', `${name} must be a non-empty string or a non-empty list of them`, { details: { [name]: value } });
  }
}

function numericDate(name: string, date: Date): number {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
    throw new CryptoError('CRYPTO_ARGUMENT_INVALID', `${name} must be a valid Date`);
  }
  return Math.floor(date.getTime() / 1000);
}
