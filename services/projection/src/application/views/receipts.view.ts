import { field, idField, instant, isObject, occurredAt, refId, text, type ProjectedEvent } from '../projected-event.js';
import type { View } from './view.js';
import type { ReceiptRow } from '@writ/contracts';

/** A receipt exactly as signed, with its compact JWS, so `GET /v1/receipts/<id>` can be verified offline. */
export type { ReceiptRow };

function fold(row: ReceiptRow | undefined, event: ProjectedEvent): ReceiptRow | undefined {
  // Receipts are immutable: the first `receipt.issued` of an id is the receipt.
  if (row !== undefined) return row;
  const data = event.envelope.payload;
  const receipt = field(data, 'receipt');
  const receiptId = idField(receipt, 'receipt_id');
  const jws = text(data, 'jws');
  if (!isObject(receipt) || receiptId === null || jws === null) return undefined;
  return {
    receipt_id: receiptId,
    task_id: event.aggregate.id,
    step_id: idField(receipt, 'step_id'),
    attempt_id: idField(receipt, 'attempt_id'),
    action_request_id: refId(receipt['action_request_ref']),
    result_code: text(receipt, 'result_code'),
    receipt_class: text(receipt, 'receipt_class'),
    receipt,
    jws,
    receipt_hash: text(receipt, 'receipt_hash'),
    created_at: instant(receipt['created_at']) ?? occurredAt(event),
  };
}

export const receiptsView: View<ReceiptRow> = {
  name: 'receipts',
  primaryKey: ['receipt_id'],
  published: true,
  topicId: (row) => row.receipt_id,
  locate: (event) => {
    if (event.aggregate.type !== 'task' || event.envelope.event_type !== 'receipt.issued') return undefined;
    const receiptId = idField(field(event.envelope.payload, 'receipt'), 'receipt_id');
    return receiptId === null ? undefined : { receipt_id: receiptId };
  },
  fold,
};
