import { TREE_HEAD_JWS_TYPE, TreeHead, hasErrorCode, type SignedTreeHead, type TransparencyLogEntryAppended } from '@writ/contracts';
import {
  KeySet,
  canonicalJson,
  generateEd25519Key,
  hexToBytes,
  merkleLeafHash,
  merkleRoot,
  sha256Hex,
  signJws,
  toEd25519PublicKey,
  verifyConsistency,
  verifyInclusion,
  verifyJws,
} from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { TLOG_EVENTS, TransparencyLog, receiptLeafHash, type IssuedReceipt, type TlogEvent } from './transparency-log.js';
import { signTreeHead, treeHeadSigningInput, type TreeHeadSigner } from './tree-head.js';

const LOG = 'writ-receipts';
const T0 = '2026-01-01T00:00:00.000Z';

function receipt(n: number): IssuedReceipt {
  return { receipt_id: `rct-${n}`, task_id: `task-${n % 3}`, receipt_hash: sha256Hex(`receipt body ${n}`), receipt_event_id: `evt-${n}` };
}

function entry(n: number, overrides: Partial<TransparencyLogEntryAppended> = {}): TransparencyLogEntryAppended {
  const r = receipt(n);
  return { log_id: LOG, leaf_index: n, receipt_id: r.receipt_id, task_id: r.task_id, receipt_hash: r.receipt_hash, leaf_hash: receiptLeafHash(r.receipt_hash), receipt_event_id: r.receipt_event_id, ...overrides };
}

/** Folds events in order, numbering task_seq from the log's current seq. */
function fold(log: TransparencyLog, ...events: { event_type: string; payload: unknown }[]): void {
  for (const event of events) log.apply({ ...event, task_seq: log.seq + 1 } satisfies TlogEvent);
}

const appended = (payload: unknown) => ({ event_type: TLOG_EVENTS.entryAppended, payload });
const headSigned = (payload: unknown) => ({ event_type: TLOG_EVENTS.treeHeadSigned, payload });

function logWith(count: number): TransparencyLog {
  const log = new TransparencyLog(LOG);
  for (let n = 0; n < count; n++) fold(log, appended(entry(n)));
  return log;
}

/** A head as the log would carry it (the signature is not the fold's business). */
function signedHead(log: TransparencyLog, size: number, timestamp = T0): SignedTreeHead {
  return { log_id: LOG, tree_size: size, root_hash: log.rootHash(size), timestamp, signer_ref: 'kid-1', jws: 'e30.e30.c2ln' };
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return hasErrorCode(error) ? error.code : 'untyped';
  }
  return undefined;
}

const leafBytes = (n: number) => hexToBytes(receipt(n).receipt_hash);

describe('TransparencyLog (the tree folded from tlog events)', () => {
  it('given entries 0..6, when folded, then the tree is the RFC 9162 tree of the receipt hashes, in order, and every proof verifies', () => {
    const log = logWith(7);
    const leaves = Array.from({ length: 7 }, (_, n) => leafBytes(n));
    expect(log.size).toBe(7);
    expect(log.seq).toBe(7);
    expect(log.rootHash()).toBe(Buffer.from(merkleRoot(leaves)).toString('hex'));
    expect(log.leafIndexOf('rct-4')).toBe(4);
    expect(log.lastLeaf).toEqual({ task_id: receipt(6).task_id, receipt_event_id: 'evt-6' });

    const proof = log.inclusionProof('rct-4', 7);
    expect(proof).toMatchObject({ log_id: LOG, leaf_index: 4, tree_size: 7, leaf_hash: Buffer.from(merkleLeafHash(leafBytes(4))).toString('hex') });
    expect(verifyInclusion(hexToBytes(proof.leaf_hash), 4, 7, proof.audit_path.map(hexToBytes), hexToBytes(log.rootHash(7)))).toBe(true);

    const consistency = log.consistencyProof(3, 7);
    expect(verifyConsistency(3, 7, hexToBytes(log.rootHash(3)), hexToBytes(log.rootHash(7)), consistency.path.map(hexToBytes))).toBe(true);
  });

  it('given a receipt, then its leaf hash is SHA-256(0x00 ‖ the 32 bytes of receipt_hash)', () => {
    const r = receipt(1);
    expect(receiptLeafHash(r.receipt_hash)).toBe(sha256Hex(Buffer.concat([Buffer.of(0), Buffer.from(r.receipt_hash, 'hex')])));
  });

  it('given a receipt already in the log, when its entry is planned again, then nothing is planned (one leaf per receipt); a new one gets the next index', () => {
    const log = logWith(3);
    expect(log.planEntry(receipt(1))).toBeNull();
    expect(log.planEntry(receipt(3))).toEqual(entry(3));
  });

  it.each([
    ['a leaf hash that does not recompute from the receipt hash', () => entry(2, { leaf_hash: sha256Hex('forged') }), 'TLOG_LEAF_HASH_MISMATCH'],
    ['a leaf index past the end (a gap)', () => entry(2, { leaf_index: 3 }), 'TLOG_LEAF_INDEX_INVALID'],
    ['a leaf index already used', () => entry(2, { leaf_index: 1 }), 'TLOG_LEAF_INDEX_INVALID'],
    ['a receipt that is already a leaf', () => ({ ...entry(0), leaf_index: 2 }), 'TLOG_RECEIPT_DUPLICATED'],
    ['another log id', () => entry(2, { log_id: 'other-log' }), 'TLOG_EVENT_INVALID'],
    ['a payload that breaks the contract', () => ({ ...entry(2), extra: true }), 'TLOG_EVENT_INVALID'],
  ])('given a log of 2 leaves, when an entry with %s is folded, then it is refused with the code and nothing changes', (_note, payload, code) => {
    const log = logWith(2);
    const root = log.rootHash();
    expect(codeOf(() => fold(log, appended(payload())))).toBe(code);
    expect([log.size, log.seq, log.rootHash()]).toEqual([2, 2, root]);
  });

  it('given an event of another type, or out of task_seq order, then TLOG_EVENT_INVALID / TLOG_CHAIN_BROKEN', () => {
    const log = logWith(1);
    expect(codeOf(() => fold(log, { event_type: 'receipt.issued', payload: {} }))).toBe('TLOG_EVENT_INVALID');
    expect(codeOf(() => log.apply({ ...appended(entry(1)), task_seq: 3 }))).toBe('TLOG_CHAIN_BROKEN');
  });

  it('given signed heads, then they are indexed by size; a head that does not match the tree, names more leaves, goes back in size or in time is refused', () => {
    const log = logWith(4);
    fold(log, headSigned(signedHead(log, 2)), headSigned(signedHead(log, 4, '2026-01-01T00:00:10.000Z')));
    expect(log.latestHead?.tree_size).toBe(4);
    expect(log.headAt(2)?.root_hash).toBe(log.rootHash(2));
    expect(log.headAt(3)).toBeUndefined();

    expect(codeOf(() => fold(log, headSigned({ ...signedHead(log, 4, '2026-01-01T00:00:20.000Z'), root_hash: sha256Hex('x') })))).toBe('TLOG_TREE_HEAD_INVALID');
    expect(codeOf(() => fold(log, headSigned({ ...signedHead(log, 4, '2026-01-01T00:00:20.000Z'), tree_size: 5 })))).toBe('TLOG_TREE_HEAD_INVALID');
    expect(codeOf(() => fold(log, headSigned(signedHead(log, 3, '2026-01-01T00:00:20.000Z'))))).toBe('TLOG_TREE_HEAD_INVALID');
    expect(codeOf(() => fold(log, headSigned(signedHead(log, 4, '2026-01-01T00:00:05.000Z'))))).toBe('TLOG_TREE_HEAD_INVALID');
    expect(codeOf(() => fold(log, headSigned({ ...signedHead(log, 4, '2026-01-01T00:00:20.000Z'), log_id: 'other-log' })))).toBe('TLOG_EVENT_INVALID');
    expect(log.latestHead?.timestamp).toBe('2026-01-01T00:00:10.000Z');
  });

  it('given an empty log without a head, when a head is planned, then it is the empty tree (size 0, SHA-256 of "")', () => {
    expect(new TransparencyLog(LOG).planTreeHead(T0)).toEqual({ log_id: LOG, tree_size: 0, root_hash: sha256Hex(''), timestamp: T0 });
  });

  it('given a head at the current size, when a head is planned, then none is (the tree did not grow); after a new leaf, the next head is consistent with it', () => {
    const log = logWith(3);
    fold(log, headSigned(signedHead(log, 3)));
    expect(log.planTreeHead('2026-01-01T00:01:00.000Z')).toBeNull();
    fold(log, appended(entry(3)), appended(entry(4)));
    const next = log.planTreeHead('2026-01-01T00:01:00.000Z');
    expect(next).toEqual({ log_id: LOG, tree_size: 5, root_hash: log.rootHash(5), timestamp: '2026-01-01T00:01:00.000Z' });
    const proof = log.consistencyProof(3, 5);
    expect(verifyConsistency(3, 5, hexToBytes(log.rootHash(3)), hexToBytes(next?.root_hash ?? ''), proof.path.map(hexToBytes))).toBe(true);
  });

  it('given a clock behind the latest head, when a head is planned, then its timestamp does not go back', () => {
    const log = logWith(1);
    fold(log, headSigned(signedHead(log, 1, '2026-01-01T00:05:00.000Z')));
    fold(log, appended(entry(1)));
    expect(log.planTreeHead('2026-01-01T00:04:00.000Z')?.timestamp).toBe('2026-01-01T00:05:00.000Z');
  });

  it('given queries outside the log, then RECEIPT_NOT_IN_LOG or TLOG_TREE_SIZE_INVALID', () => {
    const log = logWith(4);
    expect(codeOf(() => log.inclusionProof('rct-9', 4))).toBe('RECEIPT_NOT_IN_LOG');
    expect(codeOf(() => log.inclusionProof('rct-3', 3))).toBe('TLOG_TREE_SIZE_INVALID');
    expect(codeOf(() => log.inclusionProof('rct-0', 5))).toBe('TLOG_TREE_SIZE_INVALID');
    expect(codeOf(() => log.consistencyProof(3, 2))).toBe('TLOG_TREE_SIZE_INVALID');
    expect(codeOf(() => log.consistencyProof(1, 5))).toBe('TLOG_TREE_SIZE_INVALID');
    expect(log.consistencyProof(0, 4).path).toEqual([]);
  });
});

describe('tree head signing', () => {
  const head: TreeHead = { log_id: LOG, tree_size: 5, root_hash: sha256Hex('root'), timestamp: T0 };

  it('given a head, then the signing input is the RFC 8785 form of exactly its four fields', () => {
    expect(treeHeadSigningInput(head)).toBe(`{"log_id":"${LOG}","root_hash":"${head.root_hash}","timestamp":"${T0}","tree_size":5}`);
    // A signed head's extra fields are never part of what is signed.
    expect(treeHeadSigningInput({ ...head, signer_ref: 'k', jws: 'x' } as TreeHead)).toBe(canonicalJson(head));
  });

  it('given a head that breaks the contract, then nothing is signed (CONTRACT_INVALID)', () => {
    expect(codeOf(() => treeHeadSigningInput({ ...head, tree_size: -1 }))).toBe('CONTRACT_INVALID');
  });

  it('given the service key, when a head is signed, then the JWS (EdDSA, typ writ-tree-head+jws, kid = signer_ref) carries the canonical head and verifies; another key does not verify it', async () => {
    const key = await generateEd25519Key({ kid: 'receipt-key-1' });
    const signer: TreeHeadSigner = { kid: key.kid, sign: (payload) => signJws(payload, key, { typ: TREE_HEAD_JWS_TYPE }) };
    const signed = await signTreeHead(head, signer);
    expect(signed).toMatchObject({ ...head, signer_ref: 'receipt-key-1' });

    const verified = await verifyJws(signed.jws, KeySet.of([toEd25519PublicKey(key)]), { typ: TREE_HEAD_JWS_TYPE });
    expect(new TextDecoder().decode(verified.payload)).toBe(treeHeadSigningInput(head));
    expect(verified.kid).toBe(signed.signer_ref);

    const other = await generateEd25519Key({ kid: 'receipt-key-1' });
    await expect(verifyJws(signed.jws, KeySet.of([toEd25519PublicKey(other)]), { typ: TREE_HEAD_JWS_TYPE })).rejects.toSatisfy((error) => hasErrorCode(error));
  });
});

describe('refused receipts (tlog.receipt_refused)', () => {
  const refusal = (n: number, overrides: Record<string, unknown> = {}) => ({
    task_id: receipt(n).task_id,
    receipt_event_id: receipt(n).receipt_event_id,
    receipt_id: receipt(n).receipt_id,
    code: 'TLOG_RECEIPT_SIGNATURE_INVALID' as const,
    reason: 'the signature does not verify',
    ...overrides,
  });
  const refused = (payload: unknown) => ({ event_type: TLOG_EVENTS.receiptRefused, payload });

  it('given a refusal folded, then it changes no leaf and no root, names the refused receipt, and is planned once per event', () => {
    const log = logWith(2);
    const root = log.rootHash();
    const planned = log.planRefusal(refusal(7));
    expect(planned).toEqual({ log_id: LOG, ...refusal(7) });
    fold(log, refused(planned));

    expect([log.size, log.rootHash(), log.refusals]).toEqual([2, root, 1]);
    expect(log.refusalOf('rct-7')).toMatchObject({ code: 'TLOG_RECEIPT_SIGNATURE_INVALID', receipt_event_id: 'evt-7' });
    expect(log.planRefusal(refusal(7))).toBeNull();
    expect(log.lastLeaf).toEqual({ task_id: receipt(1).task_id, receipt_event_id: 'evt-1' });
  });

  it('given a refusal claiming the id of a receipt, then that receipt can still become a leaf (a forged event never shadows the real one)', () => {
    const log = logWith(0);
    fold(log, refused({ log_id: LOG, ...refusal(0, { receipt_event_id: 'evt-forged' }) }));
    expect(log.planEntry(receipt(0))).toMatchObject({ leaf_index: 0, receipt_id: 'rct-0' });
  });

  it('given a second refusal of the same event, then the first stays; a refusal of another log or off its contract is TLOG_EVENT_INVALID', () => {
    const log = logWith(1);
    fold(log, refused({ log_id: LOG, ...refusal(3) }), refused({ log_id: LOG, ...refusal(3, { code: 'TLOG_RECEIPT_KEY_UNKNOWN' }) }));
    expect([log.refusals, log.refusalOf('rct-3')?.code]).toEqual([1, 'TLOG_RECEIPT_SIGNATURE_INVALID']);
    expect(codeOf(() => fold(log, refused({ log_id: 'other', ...refusal(4) })))).toBe('TLOG_EVENT_INVALID');
    expect(codeOf(() => fold(log, refused({ log_id: LOG, ...refusal(4, { code: 'NOT_A_CODE' }) })))).toBe('TLOG_EVENT_INVALID');
  });
});
