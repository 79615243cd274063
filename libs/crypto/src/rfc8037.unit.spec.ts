import { describe, expect, it } from 'vitest';
import { importEd25519PrivateJwk, importEd25519PublicJwk } from './ed25519-keys.js';
import { signJws, verifyJws } from './jws.js';

// PUBLISHED TEST VECTOR, NOT A SECRET: the Ed25519 key of RFC 8037 Appendix A.1
// (https://www.rfc-editor.org/rfc/rfc8037#appendix-A.1). Anyone can sign with it;
// it exists only to reproduce the RFC's known answers below.
const RFC8037_A1_D = 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A';
const RFC8037_A1_X = '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo';
// RFC 8037 A.3: RFC 7638 thumbprint of the A.2 public key.
const RFC8037_A3_THUMBPRINT = 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k';
// RFC 8037 A.4: JWS of "Example of Ed25519 signing" with header {"alg":"EdDSA"}.
const RFC8037_A4_PAYLOAD = 'Example of Ed25519 signing';
const RFC8037_A4_JWS =
  'eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg';

const a1PrivateJwk = { kty: 'OKP', crv: 'Ed25519', x: RFC8037_A1_X, d: RFC8037_A1_D };
const a2PublicJwk = { kty: 'OKP', crv: 'Ed25519', x: RFC8037_A1_X };

describe('RFC 8037 Appendix A known answers', () => {
  it('A.3: given the A.2 public key without a kid, when imported, then its kid is the published thumbprint', async () => {
    const key = await importEd25519PublicJwk(a2PublicJwk);

    expect(key.kid).toBe(RFC8037_A3_THUMBPRINT);
    expect(key.publicJwk).toEqual({ ...a2PublicJwk, kid: RFC8037_A3_THUMBPRINT, alg: 'EdDSA', use: 'sig' });
  });

  it('A.4: given the A.1 key and a kid-less header, when the payload is signed, then the JWS is exactly the published one', async () => {
    const key = await importEd25519PrivateJwk(a1PrivateJwk);

    const jws = await signJws(RFC8037_A4_PAYLOAD, { privateKey: key.privateKey });

    expect(jws).toBe(RFC8037_A4_JWS);
  });

  it('A.5: given the published JWS, when verified with the A.2 public key, then the payload is recovered', async () => {
    const key = await importEd25519PublicJwk(a2PublicJwk);

    const verified = await verifyJws(RFC8037_A4_JWS, key);

    expect(new TextDecoder().decode(verified.payload)).toBe(RFC8037_A4_PAYLOAD);
    expect(verified.protectedHeader).toEqual({ alg: 'EdDSA' });
    expect(verified.kid).toBe(RFC8037_A3_THUMBPRINT);
  });

  it('A.5: given the published JWS with one signature bit flipped, when verified, then JWS_SIGNATURE_INVALID', async () => {
    const key = await importEd25519PublicJwk(a2PublicJwk);
    const [header, payload, signature] = RFC8037_A4_JWS.split('.') as [string, string, string];
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;

    await expect(verifyJws(`${header}.${payload}.${flipped}`, key)).rejects.toMatchObject({ code: 'JWS_SIGNATURE_INVALID' });
  });
});
