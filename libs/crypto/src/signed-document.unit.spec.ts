import { createPrivateKey, sign as nodeSign } from 'node:crypto';
import fc from 'fast-check';
import { base64url, calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';
import { generateEd25519Key, importEd25519PrivateJwk } from './ed25519-keys.js';
import { hexToBytes } from './hex.js';
import { sha256Hex } from './sha256.js';
import { documentPayloadHash, documentSignatures, ed25519Fingerprint, signDigest, signDocument, verifyDigestSignature } from './signed-document.js';

// RFC 8032 section 7.1, TEST 1: the secret and public key.
const RFC8032_SECRET = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const RFC8032_PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const rfcJwk = { kty: 'OKP', crv: 'Ed25519', x: base64url.encode(hexToBytes(RFC8032_PUBLIC)), d: base64url.encode(hexToBytes(RFC8032_SECRET)) } as const;

describe('ed25519Fingerprint', () => {
  it('given a key, then it is sha256: and the hex of its RFC 7638 thumbprint digest', async () => {
    const key = await generateEd25519Key();
    const thumbprint = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: key.publicJwk.x }, 'sha256');
    expect(ed25519Fingerprint(key.publicJwk.x)).toBe(`sha256:${Buffer.from(base64url.decode(thumbprint)).toString('hex')}`);
  });

  it('given the RFC 8032 test key, then the fingerprint is the known answer', () => {
    const input = `{"crv":"Ed25519","kty":"OKP","x":"${rfcJwk.x}"}`;
    expect(ed25519Fingerprint(rfcJwk.x)).toBe(`sha256:${sha256Hex(input)}`);
  });

  it('given something that is not a base64url public key, then CRYPTO_KEY_INVALID', () => {
    expect(() => ed25519Fingerprint('abc')).toThrow(expect.objectContaining({ code: 'CRYPTO_KEY_INVALID' }));
  });
});

describe('documentPayloadHash', () => {
  it('given a document, then it hashes the canonical JSON without the signature member', () => {
    const body = { b: 1, a: 'x', nested: { z: true, y: [1, 2] } };
    expect(documentPayloadHash({ ...body, signature: { sig: 'anything' } })).toBe(sha256Hex(canonicalJson(body)));
    expect(documentPayloadHash(body)).toBe(sha256Hex('{"a":"x","b":1,"nested":{"y":[1,2],"z":true}}'));
  });

  it('given an array, then CRYPTO_ARGUMENT_INVALID', () => {
    expect(() => documentPayloadHash([1, 2])).toThrow(expect.objectContaining({ code: 'CRYPTO_ARGUMENT_INVALID' }));
  });
});

describe('signDigest / verifyDigestSignature', () => {
  it('given the RFC 8032 key, when a digest is signed, then the signature is the deterministic one node computes over the raw digest bytes', async () => {
    const key = await importEd25519PrivateJwk(rfcJwk);
    const digest = sha256Hex('writ');
    const expected = nodeSign(null, hexToBytes(digest), createPrivateKey({ key: rfcJwk, format: 'jwk' })).toString('base64');
    expect(await signDigest(key, digest)).toBe(expected);
    expect(verifyDigestSignature(rfcJwk.x, digest, expected)).toBe(true);
  });

  it('given a signature, when the digest, the key or the signature changes, then it does not verify', async () => {
    const key = await generateEd25519Key();
    const other = await generateEd25519Key();
    const digest = sha256Hex('a');
    const sig = await signDigest(key, digest);
    expect(verifyDigestSignature(key.publicJwk.x, digest, sig)).toBe(true);
    expect(verifyDigestSignature(key.publicJwk.x, sha256Hex('b'), sig)).toBe(false);
    expect(verifyDigestSignature(other.publicJwk.x, digest, sig)).toBe(false);
    const flipped = Buffer.from(sig, 'base64');
    flipped[0] = (flipped[0] as number) ^ 1;
    expect(verifyDigestSignature(key.publicJwk.x, digest, flipped.toString('base64'))).toBe(false);
  });

  it('given malformed inputs, then false, never an exception', () => {
    const digest = sha256Hex('a');
    for (const [x, hash, sig] of [
      ['short', digest, 'A'.repeat(86) + '=='],
      [rfcJwk.x, 'XYZ', 'A'.repeat(86) + '=='],
      [rfcJwk.x, digest, 'not base64'],
      [rfcJwk.x, digest.toUpperCase(), 'A'.repeat(86) + '=='],
      [undefined, digest, 'A'.repeat(86) + '=='],
    ] as const) {
      expect(verifyDigestSignature(x as unknown as string, hash, sig)).toBe(false);
    }
  });

  it('given a payload hash that is not hex, when signing, then CRYPTO_ARGUMENT_INVALID', async () => {
    const key = await generateEd25519Key();
    await expect(signDigest(key, 'nothex')).rejects.toMatchObject({ code: 'CRYPTO_ARGUMENT_INVALID' });
  });
});

describe('signDocument', () => {
  it('given a document, then its block names the signer fingerprint, ed25519, the payload hash and a signature that verifies', async () => {
    const key = await generateEd25519Key();
    const signed = await signDocument({ seed_id: 's-1', n: 3, signature: { stale: true } }, key);
    expect(signed.signature).toEqual({
      signer: ed25519Fingerprint(key.publicJwk.x),
      algo: 'ed25519',
      payload_hash: documentPayloadHash({ seed_id: 's-1', n: 3 }),
      sig: expect.any(String),
    });
    expect(documentSignatures.verify(key.publicJwk.x, signed.signature.payload_hash, signed.signature.sig)).toBe(true);
  });

  it('property: any change to a signed body changes its payload hash, so the signature no longer covers it', async () => {
    const key = await generateEd25519Key();
    const signed = await signDocument({ a: 'x', b: 1, c: [true, 'y'] }, key);
    fc.assert(
      fc.property(fc.constantFrom('a', 'b', 'c', 'd'), fc.oneof(fc.string(), fc.integer(), fc.boolean()), (field, value) => {
        const tampered: Record<string, unknown> = { ...signed, [field]: value };
        fc.pre(canonicalJson({ ...tampered, signature: null }) !== canonicalJson({ ...signed, signature: null }));
        const hash = documentPayloadHash(tampered);
        expect(hash).not.toBe(signed.signature.payload_hash);
        expect(verifyDigestSignature(key.publicJwk.x, hash, signed.signature.sig)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});
