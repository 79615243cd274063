import { calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  exportEd25519PrivateJwk,
  generateEd25519Key,
  importEd25519PrivateJwk,
  importEd25519PublicJwk,
  toEd25519PublicKey,
} from './ed25519-keys.js';
import { signJws, verifyJws } from './jws.js';

describe('generateEd25519Key', () => {
  it('given no options, then the public JWK is an EdDSA signing key whose kid is its RFC 7638 thumbprint', async () => {
    const key = await generateEd25519Key();

    const { kty, crv, x } = key.publicJwk;
    expect(key.publicJwk).toEqual({ kty: 'OKP', crv: 'Ed25519', x, kid: key.kid, alg: 'EdDSA', use: 'sig' });
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty, crv, x }, 'sha256'));
    expect(key.privateKey.type).toBe('private');
    expect(key.publicKey.type).toBe('public');
  });

  it('given a kid, then the key carries it', async () => {
    const key = await generateEd25519Key({ kid: 'principal-42#1' });

    expect(key.kid).toBe('principal-42#1');
    expect(key.publicJwk.kid).toBe('principal-42#1');
  });

  it('given two generations, then the keys differ', async () => {
    const [a, b] = await Promise.all([generateEd25519Key(), generateEd25519Key()]);

    expect(a.kid).not.toBe(b.kid);
  });

  it('given an empty kid, then CRYPTO_ARGUMENT_INVALID', async () => {
    await expect(generateEd25519Key({ kid: '' })).rejects.toMatchObject({ code: 'CRYPTO_ARGUMENT_INVALID' });
  });

  it('given a generated key, when serialized to JSON, then no private key material appears', async () => {
    const key = await generateEd25519Key({ extractable: true });

    const json = JSON.parse(JSON.stringify(key)) as Record<string, unknown>;

    expect(Object.keys(json.publicJwk as object).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    expect(json.privateKey).toEqual({});
  });
});

describe('private JWK export and import', () => {
  it('given a key generated without extractable, when the private JWK is requested, then CRYPTO_KEY_NOT_EXTRACTABLE', async () => {
    const key = await generateEd25519Key();

    await expect(exportEd25519PrivateJwk(key)).rejects.toMatchObject({ code: 'CRYPTO_KEY_NOT_EXTRACTABLE' });
  });

  it('given an extractable key, when exported and re-imported, then the re-imported key signs for the same kid', async () => {
    const key = await generateEd25519Key({ extractable: true });

    const privateJwk = await exportEd25519PrivateJwk(key);
    const reimported = await importEd25519PrivateJwk(privateJwk);
    const jws = await signJws('hello', reimported);

    expect(privateJwk).toMatchObject({ ...key.publicJwk });
    expect(typeof privateJwk.d).toBe('string');
    expect(reimported.publicJwk).toEqual(key.publicJwk);
    expect(reimported.privateKey.extractable).toBe(false);
    expect((await verifyJws(jws, key)).kid).toBe(key.kid);
  });

  it('given a private JWK whose x is not the public half of d, when imported, then CRYPTO_KEY_INVALID', async () => {
    const a = await exportEd25519PrivateJwk(await generateEd25519Key({ extractable: true }));
    const b = await generateEd25519Key();

    await expect(importEd25519PrivateJwk({ ...a, x: b.publicJwk.x })).rejects.toMatchObject({ code: 'CRYPTO_KEY_INVALID' });
  });

  it('given a JWK without d, when imported as private, then CRYPTO_KEY_INVALID', async () => {
    const key = await generateEd25519Key();

    await expect(importEd25519PrivateJwk(key.publicJwk)).rejects.toMatchObject({ code: 'CRYPTO_KEY_INVALID' });
  });
});

describe('importEd25519PublicJwk', () => {
  it('given a published public JWK, then it verifies what the private half signed', async () => {
    const signer = await generateEd25519Key();
    const jws = await signJws('payload', signer);

    const imported = await importEd25519PublicJwk(JSON.parse(JSON.stringify(signer.publicJwk)));

    expect(imported.publicJwk).toEqual(signer.publicJwk);
    expect((await verifyJws(jws, imported)).kid).toBe(signer.kid);
  });

  it('given a JWK that carries d, when imported as public, then CRYPTO_KEY_INVALID', async () => {
    const privateJwk = await exportEd25519PrivateJwk(await generateEd25519Key({ extractable: true }));

    await expect(importEd25519PublicJwk(privateJwk)).rejects.toMatchObject({ code: 'CRYPTO_KEY_INVALID' });
  });

  it.each([
    ['not an object', 'OKP'],
    ['null', null],
    ['an RSA key', { kty: 'RSA', n: 'AQAB', e: 'AQAB' }],
    ['an X25519 key', { kty: 'OKP', crv: 'X25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' }],
    ['a short x', { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHUR' }],
    ['a non-canonical x', { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURp' }],
    ['x in standard base64', { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo' }],
    ['alg RS256', { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', alg: 'RS256' }],
    ['use enc', { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', use: 'enc' }],
    ['an empty kid', { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: '' }],
  ])('given %s, then CRYPTO_KEY_INVALID', async (_name, jwk) => {
    await expect(importEd25519PublicJwk(jwk)).rejects.toMatchObject({ code: 'CRYPTO_KEY_INVALID' });
  });
});

describe('toEd25519PublicKey', () => {
  it('given a signing key, then only the public members remain', async () => {
    const key = await generateEd25519Key();

    const publicKey = toEd25519PublicKey(key);

    expect(Object.keys(publicKey).sort()).toEqual(['kid', 'publicJwk', 'publicKey']);
  });
});
