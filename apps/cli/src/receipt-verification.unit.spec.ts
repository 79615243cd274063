import { canonicalJson, generateEd25519Key, KeySet, sha256Hex, signJws } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { detached, signedReceiptRow } from '../test/projection-api.fixture.js';
import { verifyReceiptDocument, type ReceiptVerification } from './receipt-verification.js';

const receiptKey = await generateEd25519Key({ kid: 'receipt-k1' });
const otherKey = await generateEd25519Key({ kid: 'other-k1' });
const trusted = KeySet.of([receiptKey]);

const results = (verification: ReceiptVerification) => Object.fromEntries(verification.checks.map((check) => [check.name, check.code ?? check.result]));
const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('verifyReceiptDocument', () => {
  it('passes every check for a receipt as the receipt service signs it', async () => {
    // given a receipt signed by a trusted key
    const row = await signedReceiptRow(receiptKey);
    // when it is verified
    const verification = await verifyReceiptDocument({ receiptId: 'rcp-1', receipt: row.receipt, jws: row.jws }, trusted);
    // then every check passes and names the key
    expect(verification).toMatchObject({ ok: true, kid: 'receipt-k1' });
    expect(results(verification)).toEqual({ contract: 'pass', hash: 'pass', signature: 'pass', payload: 'pass', signer: 'pass' });
  });

  // Each case: a note, how the served receipt and JWS are changed, and the code each check must report.
  const cases: { note: string; change: (row: Awaited<ReturnType<typeof signedReceiptRow>>) => Promise<{ receipt: Record<string, unknown>; jws: string; keys?: KeySet; id?: string }>; want: Record<string, string> }[] = [
    {
      note: 'a changed body breaks its hash and no longer is what the JWS signs',
      change: async (row) => ({ receipt: { ...row.receipt, result_summary: 'exit 0 (nothing to see)' }, jws: row.jws }),
      want: { contract: 'pass', hash: 'RECEIPT_HASH_MISMATCH', signature: 'pass', payload: 'RECEIPT_PAYLOAD_MISMATCH', signer: 'pass' },
    },
    {
      note: 'a body changed together with its hash still is not what the JWS signs',
      change: async (row) => {
        const changed = { ...row.receipt, result_code: 'failed' };
        return { receipt: { ...changed, receipt_hash: sha256Hex(canonicalJson(stripSeal(changed))) }, jws: row.jws };
      },
      want: { contract: 'pass', hash: 'pass', signature: 'pass', payload: 'RECEIPT_PAYLOAD_MISMATCH', signer: 'pass' },
    },
    {
      note: 'a JWS by a key the verifier does not trust',
      change: async (row) => ({ receipt: row.receipt, jws: await signJws(canonicalJson(stripSeal(row.receipt)), otherKey, { typ: 'writ-receipt+jws' }) }),
      want: { contract: 'pass', hash: 'pass', signature: 'RECEIPT_KEY_UNKNOWN', payload: 'skip', signer: 'skip' },
    },
    {
      note: 'a trusted key that is not the signer_ref, with another signature than the receipt carries',
      change: async (row) => ({
        receipt: row.receipt,
        jws: await signJws(canonicalJson(stripSeal(row.receipt)), otherKey, { typ: 'writ-receipt+jws' }),
        keys: KeySet.of([receiptKey, otherKey]),
      }),
      want: { contract: 'pass', hash: 'pass', signature: 'pass', payload: 'pass', signer: 'RECEIPT_SIGNER_MISMATCH' },
    },
    {
      note: 'alg none is refused (alg pinned to EdDSA)',
      change: async (row) => ({ receipt: row.receipt, jws: `${b64({ alg: 'none', kid: 'receipt-k1', typ: 'writ-receipt+jws' })}.${b64(canonicalJson(stripSeal(row.receipt)))}.` }),
      want: { contract: 'pass', hash: 'pass', signature: 'RECEIPT_SIGNATURE_INVALID', payload: 'skip', signer: 'skip' },
    },
    {
      note: 'a signature over the payload of another typ (not a receipt JWS)',
      change: async (row) => ({ receipt: row.receipt, jws: await signJws(canonicalJson(stripSeal(row.receipt)), receiptKey) }),
      want: { contract: 'pass', hash: 'pass', signature: 'RECEIPT_SIGNATURE_INVALID', payload: 'skip', signer: 'skip' },
    },
    {
      note: 'a tampered signature',
      change: async (row) => {
        const [header, payload, signature] = row.jws.split('.');
        const flipped = `${signature!.startsWith('A') ? 'B' : 'A'}${signature!.slice(1)}`;
        return { receipt: row.receipt, jws: `${header}.${payload}.${flipped}` };
      },
      want: { contract: 'pass', hash: 'pass', signature: 'RECEIPT_SIGNATURE_INVALID', payload: 'skip', signer: 'skip' },
    },
    {
      note: 'the receipt served under another id',
      change: async (row) => ({ receipt: row.receipt, jws: row.jws, id: 'rcp-2' }),
      want: { contract: 'RECEIPT_INVALID', hash: 'pass', signature: 'pass', payload: 'pass', signer: 'pass' },
    },
    {
      note: 'a receipt that breaks its contract (no result_code)',
      change: async (row) => {
        const { result_code: _dropped, ...rest } = row.receipt;
        return { receipt: rest, jws: row.jws };
      },
      want: { contract: 'RECEIPT_INVALID', hash: 'RECEIPT_HASH_MISMATCH', signature: 'pass', payload: 'RECEIPT_PAYLOAD_MISMATCH', signer: 'pass' },
    },
    {
      note: "a receipt whose own signature field is not the JWS's",
      change: async (row) => ({ receipt: { ...row.receipt, signature: detached(await signJws('other', receiptKey, { typ: 'writ-receipt+jws' })) }, jws: row.jws }),
      want: { contract: 'pass', hash: 'pass', signature: 'pass', payload: 'pass', signer: 'RECEIPT_SIGNER_MISMATCH' },
    },
  ];

  for (const { note, change, want } of cases) {
    it(`fails: ${note}`, async () => {
      // given a signed receipt, changed
      const changed = await change(await signedReceiptRow(receiptKey));
      // when it is verified
      const verification = await verifyReceiptDocument({ receiptId: changed.id ?? 'rcp-1', receipt: changed.receipt, jws: changed.jws }, changed.keys ?? trusted);
      // then exactly the expected checks fail, with their codes
      expect(results(verification), note).toEqual(want);
      expect(verification.ok).toBe(false);
    });
  }
});

function stripSeal(receipt: Record<string, unknown>): Record<string, unknown> {
  const { receipt_hash: _hash, signature: _signature, ...body } = receipt;
  return body;
}
