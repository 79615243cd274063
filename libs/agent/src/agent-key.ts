import { readFile } from 'node:fs/promises';
import { base64url, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey } from 'jose';
import { AgentError } from './agent-errors.js';
import { PublicEd25519Jwk } from './contracts.js';

/** The public half of an agent key, as `writ principal add --jwk` takes it and the principal's registration holds it. */
export interface AgentPublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid: string;
  readonly alg: 'EdDSA';
  readonly use: 'sig';
}

/** The private JWK (what `writ principal keygen --out` writes): keep it secret, 0600. */
export interface AgentPrivateJwk extends AgentPublicJwk {
  readonly d: string;
}

/**
 * An agent's signing key: its `kid` (the key id registered for the principal,
 * which every JWS names in its header), the private key, and the public JWK.
 * `privateKey` is a non-extractable WebCrypto key, so passing this object
 * around (or logging it: a CryptoKey prints as `{}`) does not leak the secret.
 */
export interface AgentKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: AgentPublicJwk;
}

/** A key just generated: the signing key and, once, its private JWK to store. */
export interface GeneratedAgentKey extends AgentKey {
  readonly privateJwk: AgentPrivateJwk;
}

const KEY_BYTES = /^[A-Za-z0-9_-]{43}$/;

/**
 * A fresh Ed25519 key. `kid` defaults to the key's RFC 7638 thumbprint (as
 * `writ principal keygen` does); give it the id you will register
 * (`<agent>-k1`). The private JWK is returned once, for the caller to store;
 * the signing key itself cannot be exported.
 */
export async function generateAgentKey(options: { readonly kid?: string } = {}): Promise<GeneratedAgentKey> {
  if (options.kid !== undefined) checkKid(options.kid);
  const pair = await generateKeyPair('Ed25519', { extractable: true });
  const exported = await exportJWK(pair.privateKey);
  if (typeof exported.x !== 'string' || typeof exported.d !== 'string') throw new AgentError('AGENT_KEY_INVALID', 'the runtime generated an Ed25519 key without x or d');
  const key = await importKey({ kty: 'OKP', crv: 'Ed25519', x: exported.x, d: exported.d, ...(options.kid === undefined ? {} : { kid: options.kid }) });
  return Object.freeze({ ...key, privateJwk: Object.freeze({ ...key.publicJwk, d: exported.d }) });
}

/**
 * The agent's key from a private JWK: a file path (what `writ principal keygen
 * --out` wrote) or the JWK object itself. It must be OKP / Ed25519 with `x`,
 * `d` and (recommended) `kid`; without `kid` the RFC 7638 thumbprint is used,
 * which must then be the id registered. `alg` and `use`, when present, must be
 * `EdDSA` and `sig`.
 *
 * Throws AGENT_KEY_UNREADABLE (no such file, not JSON) or AGENT_KEY_INVALID.
 */
export async function loadAgentKey(source: string | URL | Readonly<Record<string, unknown>>): Promise<AgentKey> {
  if (typeof source !== 'string' && !(source instanceof URL)) return importKey(source);
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (cause) {
    throw new AgentError('AGENT_KEY_UNREADABLE', `cannot read the key file ${String(source)} (${(cause as { code?: string }).code ?? 'error'}); pass the PRIVATE JWK file writ principal keygen --out wrote`, {
      cause,
    });
  }
  let jwk: unknown;
  try {
    jwk = JSON.parse(text);
  } catch (cause) {
    throw new AgentError('AGENT_KEY_UNREADABLE', `${String(source)} does not hold JSON; expected a private Ed25519 JWK`, { cause });
  }
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw new AgentError('AGENT_KEY_INVALID', `${String(source)} does not hold a JWK object`);
  return importKey(jwk as Record<string, unknown>);
}

async function importKey(jwk: Readonly<Record<string, unknown>>): Promise<AgentKey> {
  const { kty, crv, x, d, kid, alg, use } = jwk;
  if (kty !== 'OKP' || crv !== 'Ed25519') throw new AgentError('AGENT_KEY_INVALID', `only Ed25519 keys (kty OKP, crv Ed25519) sign for Writ, not kty ${String(kty)} crv ${String(crv)}`);
  if (!isKeyBytes(x)) throw new AgentError('AGENT_KEY_INVALID', 'the JWK needs "x": the 32-byte public key, base64url');
  if (d === undefined) throw new AgentError('AGENT_KEY_INVALID', 'this is a PUBLIC JWK (no "d"); signing needs the private JWK writ principal keygen --out wrote');
  if (!isKeyBytes(d)) throw new AgentError('AGENT_KEY_INVALID', 'the JWK needs "d": the 32-byte private key, base64url');
  if (alg !== undefined && alg !== 'EdDSA') throw new AgentError('AGENT_KEY_INVALID', `"alg" must be EdDSA, not ${String(alg)}`);
  if (use !== undefined && use !== 'sig') throw new AgentError('AGENT_KEY_INVALID', `"use" must be sig, not ${String(use)}`);
  const keyId = kid === undefined ? await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x }, 'sha256') : checkKid(kid);
  let privateKey: CryptoKey;
  try {
    // The runtime refuses a d whose public half is not x.
    privateKey = await importJWK({ kty: 'OKP', crv: 'Ed25519', x, d }, 'EdDSA', { extractable: false });
  } catch (cause) {
    throw new AgentError('AGENT_KEY_INVALID', `key ${keyId} is not a valid Ed25519 key pair (is "x" the public half of "d"?)`, { cause });
  }
  const publicJwk: AgentPublicJwk = Object.freeze({ kty: 'OKP', crv: 'Ed25519', x, kid: keyId, alg: 'EdDSA', use: 'sig' });
  return Object.freeze({ kid: keyId, privateKey, publicJwk });
}

/** A kid as a principal's registration accepts it (the contracts' PublicEd25519Jwk). */
function checkKid(kid: unknown): string {
  const parsed = PublicEd25519Jwk.shape.kid.safeParse(kid);
  if (!parsed.success) throw new AgentError('AGENT_KEY_INVALID', `kid ${JSON.stringify(kid)} ${parsed.error.issues[0]?.message ?? 'is invalid'}`);
  return parsed.data;
}

// Canonical base64url of exactly 32 bytes: decoding is lenient, so re-encode and compare.
function isKeyBytes(value: unknown): value is string {
  if (typeof value !== 'string' || !KEY_BYTES.test(value)) return false;
  const bytes = base64url.decode(value);
  return bytes.length === 32 && base64url.encode(bytes) === value;
}
