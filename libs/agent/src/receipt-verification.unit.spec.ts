import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { receiptBody, sealReceipt, serviceKey } from '../test/samples.js';
import { verifyReceipt, type ReceiptDocument } from './receipt-verification.js';

const TASK = 'tsk-1';

/** Two chained receipts of one task, sealed by `kid`, and the JWKS that trusts that key. */
async function chainOfTwo() {
  const key = await serviceKey('writ-receipt-k1');
  const first = await sealReceipt(receiptBody({ receiptId: 'rcp-1', taskId: TASK, actionRequestId: 'ar-1', prev: null, signerRef: key.kid }), key);
  const second = await sealReceipt(receiptBody({ receiptId: 'rcp-2', taskId: TASK, actionRequestId: 'ar-2', prev: String(first.receipt['receipt_hash']), signerRef: key.kid }), key);
  return { key, first, second, keys: { keys: [key.jwk] } };
}

/** What the task's timeline lists of each receipt.issued: id and hash. */
const listed = (...documents: ReceiptDocument[]) => documents.map((document) => ({ receiptId: String(document.receipt['receipt_id']), receiptHash: String(document.receipt['receipt_hash']) }));

const codes = (checks: readonly { result: string; code?: string }[]) => checks.filter((check) => check.result === 'fail').map((check) => check.code);

describe('verifyReceipt', () => {
  it('given a sealed receipt and its task timeline, when verified, then every check passes', async () => {
    const { second, first, keys } = await chainOfTwo();
    const verification = await verifyReceipt(second, { keys, expect: { receiptId: 'rcp-2', actionRequestId: 'ar-2', taskId: TASK }, taskReceipts: listed(first, second), previousReceipt: first });
    expect(verification.ok).toBe(true);
    expect(verification.kid).toBe('writ-receipt-k1');
    expect(verification.checks.map((check) => `${check.name}:${check.result}`)).toEqual([
      'contract:pass',
      'binding:pass',
      'hash:pass',
      'signature:pass',
      'payload:pass',
      'signer:pass',
      'event:pass',
      'chain:pass',
    ]);
  });

  it('given a receipt whose body was changed, when verified, then AGENT_RECEIPT_HASH_MISMATCH', async () => {
    const { second, keys } = await chainOfTwo();
    const tampered = { ...second, receipt: { ...second.receipt, result_summary: 'exited 0 (really)' } };
    const verification = await verifyReceipt(tampered, { keys });
    expect(verification.failure?.code).toBe('AGENT_RECEIPT_HASH_MISMATCH');
    expect(codes(verification.checks)).toEqual(['AGENT_RECEIPT_HASH_MISMATCH', 'AGENT_RECEIPT_PAYLOAD_MISMATCH']);
  });

  it('given a changed body with its hash recomputed, when verified, then the JWS signs another body: AGENT_RECEIPT_PAYLOAD_MISMATCH', async () => {
    const { second, keys } = await chainOfTwo();
    const { receipt_hash: _hash, signature, ...body }: Record<string, unknown> = { ...second.receipt, result_code: 'failed' };
    const rehashed = { ...body, receipt_hash: createHash('sha256').update(canonicalize(body) as string).digest('hex'), signature };
    const verification = await verifyReceipt({ receipt: rehashed, jws: second.jws }, { keys });
    expect(codes(verification.checks)).toEqual(['AGENT_RECEIPT_PAYLOAD_MISMATCH']);
  });

  it('given a receipt signed by a key GET /v1/keys does not list, when verified, then AGENT_RECEIPT_KEY_UNKNOWN', async () => {
    const { second } = await chainOfTwo();
    const stranger = await serviceKey('writ-receipt-k2');
    expect((await verifyReceipt(second, { keys: { keys: [stranger.jwk] } })).failure?.code).toBe('AGENT_RECEIPT_KEY_UNKNOWN');
  });

  it('given a receipt signed under a trusted kid by another key, when verified, then AGENT_RECEIPT_SIGNATURE_INVALID', async () => {
    const { second } = await chainOfTwo();
    const impostor = await serviceKey('writ-receipt-k1');
    expect((await verifyReceipt(second, { keys: { keys: [impostor.jwk] } })).failure?.code).toBe('AGENT_RECEIPT_SIGNATURE_INVALID');
  });

  it('given a receipt JWS of another typ, when verified, then AGENT_RECEIPT_SIGNATURE_INVALID (one kind of JWS never passes for another)', async () => {
    const key = await serviceKey('writ-receipt-k1');
    const other = await sealReceipt(receiptBody({ receiptId: 'rcp-1', taskId: TASK, actionRequestId: 'ar-1', prev: null, signerRef: key.kid }), key, 'writ-http+jws');
    expect((await verifyReceipt(other, { keys: { keys: [key.jwk] } })).failure?.code).toBe('AGENT_RECEIPT_SIGNATURE_INVALID');
  });

  it('given signer_ref naming another key than the one that signed, when verified, then AGENT_RECEIPT_SIGNER_MISMATCH', async () => {
    const key = await serviceKey('writ-receipt-k1');
    const sealed = await sealReceipt(receiptBody({ receiptId: 'rcp-1', taskId: TASK, actionRequestId: 'ar-1', prev: null, signerRef: 'writ-receipt-k0' }), key);
    expect(codes((await verifyReceipt(sealed, { keys: { keys: [key.jwk] } })).checks)).toEqual(['AGENT_RECEIPT_SIGNER_MISMATCH']);
  });

  it('given the receipt of another action, when verified for this one, then AGENT_RECEIPT_INVALID', async () => {
    const { second, keys } = await chainOfTwo();
    expect((await verifyReceipt(second, { keys, expect: { actionRequestId: 'ar-1' } })).failure?.code).toBe('AGENT_RECEIPT_INVALID');
  });

  it('given a timeline whose previous receipt is not the one linked, when verified, then AGENT_RECEIPT_CHAIN_BROKEN', async () => {
    const { key, second, keys } = await chainOfTwo();
    const otherFirst = await sealReceipt(receiptBody({ receiptId: 'rcp-0', taskId: TASK, actionRequestId: 'ar-0', prev: null, signerRef: key.kid }), key);
    expect(codes((await verifyReceipt(second, { keys, taskReceipts: listed(otherFirst, second), previousReceipt: otherFirst })).checks)).toEqual(['AGENT_RECEIPT_CHAIN_BROKEN']);
  });

  it('given a previous receipt that is listed with the linked hash but does not verify, when verified, then AGENT_RECEIPT_CHAIN_BROKEN', async () => {
    const { first, second, keys } = await chainOfTwo();
    const forgedFirst: ReceiptDocument = { ...first, receipt: { ...first.receipt, result_summary: 'rewritten' } };
    expect(codes((await verifyReceipt(second, { keys, taskReceipts: listed(first, second), previousReceipt: forgedFirst })).checks)).toEqual(['AGENT_RECEIPT_CHAIN_BROKEN']);
  });

  it('given the previous receipt is not at hand, when verified, then the chain check is skipped, never passed', async () => {
    const { first, second, keys } = await chainOfTwo();
    const verification = await verifyReceipt(second, { keys, taskReceipts: listed(first, second) });
    expect(verification.checks.find((check) => check.name === 'chain')?.result).toBe('skip');
  });

  it('given a receipt the task log lists with another hash, or not at all, when verified, then AGENT_RECEIPT_EVENT_MISMATCH', async () => {
    const { key, first, keys } = await chainOfTwo();
    // a genuine, signed receipt with the same id but another body than the one the log lists
    const resealed = await sealReceipt({ ...receiptBody({ receiptId: 'rcp-1', taskId: TASK, actionRequestId: 'ar-1', prev: null, signerRef: key.kid }), result_summary: 'other' }, key);
    expect(codes((await verifyReceipt(resealed, { keys, taskReceipts: listed(first) })).checks)).toEqual(['AGENT_RECEIPT_EVENT_MISMATCH']);
    expect(codes((await verifyReceipt(first, { keys, taskReceipts: [] })).checks)).toEqual(['AGENT_RECEIPT_EVENT_MISMATCH']);
  });

  it('given something that is not a Receipt, when verified, then AGENT_RECEIPT_INVALID comes first', async () => {
    const { keys } = await chainOfTwo();
    const verification = await verifyReceipt({ receipt: { receipt_id: 'rcp-1' }, jws: 'x.y.z' }, { keys });
    expect(verification.failure?.code).toBe('AGENT_RECEIPT_INVALID');
  });
});
