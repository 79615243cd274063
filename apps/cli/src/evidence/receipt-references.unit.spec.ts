import { canonicalJson, sha256Hex } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { SegmentIndex, resolveReferences, type SegmentEvent } from './receipt-references.js';

/*
 * A rollback's receipt names the receipt it rolls back as `receipt:<id>`
 * (Hermit 18.6): the reference resolves to that receipt as an earlier
 * `receipt.issued` of the segment records it, bound by its content hash.
 */

const original = { receipt_id: 'rct-1', receipt_hash: 'a'.repeat(64), receipt_class: 'tool_execution' };
const event = (id: string, type: string, payload: Record<string, unknown>): SegmentEvent => ({ event_id: id, event_type: type, task_id: 'task-1', hash: sha256Hex(id), payload });

describe('receipt references: receipt:<id>', () => {
  it('given the receipt.issued of rct-1 earlier in the segment, when a rollback receipt names receipt:rct-1, then it resolves to that receipt by content hash', () => {
    const index = new SegmentIndex([event('evt-1', 'receipt.issued', { receipt: original, jws: 'x.y.z', cause: 'settled' })]);
    const { references, unresolved } = resolveReferences({ input_refs: ['receipt:rct-1'] }, index, 1);
    expect(unresolved).toEqual([]);
    expect(references).toEqual([{ field: 'input_refs', ref: 'receipt:rct-1', event_id: 'evt-1', pointer: '/payload/receipt', binding: 'object', sha256: sha256Hex(canonicalJson(original)) }]);
  });

  it('given no such receipt before the rollback receipt, then receipt:<id> does not resolve', () => {
    const index = new SegmentIndex([event('evt-1', 'receipt.issued', { receipt: original, jws: 'x.y.z' })]);
    expect(resolveReferences({ input_refs: ['receipt:rct-2'] }, index, 1).unresolved).toEqual([expect.objectContaining({ ref: 'receipt:rct-2' })]);
    expect(resolveReferences({ input_refs: ['receipt:rct-1'] }, index, 0).unresolved).toEqual([expect.objectContaining({ why: 'what it names is recorded only after the receipt' })]);
  });
});
