import { z } from 'zod';
import { Sha256Hex } from '../ids.js';

/**
 * A public key's fingerprint (the seed's `symbikey:<fingerprint>`): `sha256:`
 * and the lowercase hex SHA-256 of the key's RFC 7638 thumbprint input
 * `{"crv":"Ed25519","kty":"OKP","x":"<x>"}` (`ed25519Fingerprint` in @writ/crypto).
 */
export const KeyFingerprint = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be "sha256:" and 64 lowercase hex digits (an Ed25519 key fingerprint)');
export type KeyFingerprint = z.infer<typeof KeyFingerprint>;

/** An Ed25519 public key as the `x` member of its JWK: 32 bytes, base64url, 43 characters. */
export const Ed25519PublicKeyX = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be the base64url Ed25519 public key (43 characters)');
export type Ed25519PublicKeyX = z.infer<typeof Ed25519PublicKeyX>;

/**
 * The signature block of a signed seed document (spawn manifest, Last Will,
 * heartbeat, crash report). `payload_hash` = SHA-256 (hex) of the RFC 8785
 * canonical JSON of the document without `signature`; `sig` = standard base64
 * of the Ed25519 signature over the 32 raw bytes of that digest.
 */
export const SeedSignature = z.strictObject({
  signer: KeyFingerprint,
  algo: z.literal('ed25519'),
  payload_hash: Sha256Hex,
  sig: z.string().regex(/^[A-Za-z0-9+/]{86}==$/, 'must be the standard base64 of a 64-byte Ed25519 signature'),
});
export type SeedSignature = z.infer<typeof SeedSignature>;

/** Runtime profile of a seed (seed 002). */
export const SeedMode = z.enum(['ephemeral', 'durable']);
export type SeedMode = z.infer<typeof SeedMode>;

/** Primary Last Will delivery path (seed 002). */
export const HandoffChannel = z.enum(['trace', 'concept_inbox']);
export type HandoffChannel = z.infer<typeof HandoffChannel>;

/** A bounded token without whitespace or control characters (host ids, namespaces, versions, fingerprints of installs). */
export const SeedToken = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[^\s\x00-\x1f\x7f]+$/, 'must be 1-256 characters without whitespace or control characters');
export type SeedToken = z.infer<typeof SeedToken>;
