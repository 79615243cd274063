import { z } from 'zod';
import { RowId, RowInstant, RowObject, RowRef, RowText, RowVersion } from './row-fields.js';

/** `<root>.proj.receipts.<receipt_id>`: a signed receipt as issued (its body and its compact JWS). */
export const ReceiptRowSchema = z.strictObject({
  receipt_id: RowId,
  task_id: RowId,
  step_id: RowRef,
  attempt_id: RowRef,
  action_request_id: RowRef,
  result_code: RowText,
  receipt_class: RowText,
  receipt: RowObject,
  jws: z.string(),
  receipt_hash: RowText,
  created_at: RowInstant,
  row_version: RowVersion,
});
export type ReceiptRow = z.infer<typeof ReceiptRowSchema>;
