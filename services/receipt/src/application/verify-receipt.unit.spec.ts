import type { Receipt } from '@writ/contracts';
import { KeySet, generateEd25519Key, sha256Hex, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { receiptBody } from '../../test/receipt-body.js';
import { RECEIPT_JWS_TYPE, canonicalReceiptBody, detachedForm, sealReceipt } from './receipt-seal.js';
import { verifyReceipt, verifyReceiptChain } from './verify-receipt.js';

const body = receiptBody;

let key: Ed25519SigningKey;
let keys: KeySet;
let sealed: { receipt: Receipt; jws: string };

beforeAll(async () => {
  key = await generateEd25519Key({ kid: 'receipt-k1' });
  keys = KeySet.of([key]);
  sealed = await sealReceipt(body(key.kid), { kid: key.kid, sign: (canonical) => signJws(canonical, key, { typ: RECEIPT_JWS_TYPE }) });
});

describe('verifyReceipt', () => {
  it('accepts a sealed receipt, with or without the attached JWS', async () => {
    expect(await verifyReceipt(sealed.receipt, sealed.jws, keys)).toMatchObject({ ok: true, kid: 'receipt-k1', receipt_hash: sealed.receipt.receipt_hash });
    expect(await verifyReceipt(sealed.receipt, undefined, keys)).toMatchObject({ ok: true });
    expect(sealed.receipt.signature).toBe(detachedForm(sealed.jws));
  });

  it('refuses what is not a receipt, or is unsigned', async () => {
    expect(await verifyReceipt({ receipt_id: 'x' }, undefined, keys)).toMatchObject({ ok: false, code: 'RECEIPT_INVALID' });
    const { signature: _s, signer_ref: _k, ...unsigned } = sealed.receipt;
    expect(await verifyReceipt({ ...unsigned, verifiability: 'hash_chained' }, undefined, keys)).toMatchObject({ ok: false, code: 'RECEIPT_UNSIGNED' });
  });

  it('detects a changed body, a re-hashed body and a swapped signature', async () => {
    const changed = { ...sealed.receipt, result_summary: 'succeeded: all good' };
    expect(await verifyReceipt(changed, sealed.jws, keys)).toMatchObject({ ok: false, code: 'RECEIPT_HASH_MISMATCH' });
    const rehashed = { ...changed, receipt_hash: sha256Hex(canonicalReceiptBody(changed)) };
    expect(await verifyReceipt(rehashed, undefined, keys)).toMatchObject({ ok: false, code: 'RECEIPT_SIGNATURE_INVALID' });
    // a valid JWS over another body
    const other = await sealReceipt(body(key.kid, { receipt_id: 'rct-2' }), { kid: key.kid, sign: (canonical) => signJws(canonical, key, { typ: RECEIPT_JWS_TYPE }) });
    expect(await verifyReceipt(sealed.receipt, other.jws, keys)).toMatchObject({ ok: false, code: 'RECEIPT_PAYLOAD_MISMATCH' });
  });

  it('refuses an untrusted key, a wrong typ and a signer_ref that is not the signer', async () => {
    const stranger = await generateEd25519Key({ kid: 'receipt-k1' });
    expect(await verifyReceipt(sealed.receipt, sealed.jws, KeySet.of([stranger]))).toMatchObject({ ok: false, code: 'RECEIPT_SIGNATURE_INVALID' });
    expect(await verifyReceipt(sealed.receipt, sealed.jws, KeySet.of([await generateEd25519Key({ kid: 'other' })]))).toMatchObject({ ok: false, code: 'RECEIPT_KEY_UNKNOWN' });
    const untyped = await sealReceipt(body(key.kid), { kid: key.kid, sign: (canonical) => signJws(canonical, key) });
    expect(await verifyReceipt(untyped.receipt, untyped.jws, keys)).toMatchObject({ ok: false, code: 'RECEIPT_SIGNATURE_INVALID' });
    const second = await generateEd25519Key({ kid: 'receipt-k2' });
    const misnamed = await sealReceipt(body('receipt-k2'), { kid: key.kid, sign: (canonical) => signJws(canonical, key, { typ: RECEIPT_JWS_TYPE }) });
    expect(await verifyReceipt(misnamed.receipt, misnamed.jws, KeySet.of([key, second]))).toMatchObject({ ok: false, code: 'RECEIPT_SIGNER_MISMATCH' });
  });
});

describe('verifyReceiptChain', () => {
  it('accepts a chain and finds the first broken link', () => {
    const a = { receipt_hash: 'a'.repeat(64), prev_receipt_hash: null };
    const b = { receipt_hash: 'b'.repeat(64), prev_receipt_hash: 'a'.repeat(64) };
    expect(verifyReceiptChain([a, b])).toEqual({ ok: true, length: 2 });
    expect(verifyReceiptChain([a, { ...b, prev_receipt_hash: null }])).toMatchObject({ ok: false, index: 1, code: 'RECEIPT_CHAIN_BROKEN' });
    expect(verifyReceiptChain([b])).toMatchObject({ ok: false, index: 0 });
  });
});
