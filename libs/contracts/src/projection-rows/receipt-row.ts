import { z } from 'zod';
import { RowId, RowObject, RowTimestamp } from './row-fields.js';

/** A receipt as signed and its compact JWS: the `receipts` view (`GET /v1/receipts`, `<root>.proj.receipts.<id>`). */
export const ReceiptRow = z
  .strictObject({
    receipt_id: RowId,
    task_id: RowId,
    step_id: RowId.nullable(),
    attempt_id: RowId.nullable(),
    action_request_id: RowId.nullable(),
    result_code: z.string().nullable(),
    receipt_class: z.string().nullable(),
    receipt: RowObject.describe('The receipt body as signed.'),
    jws: z.string().describe("The compact JWS; verify it offline against the API's key set (JWKS)."),
    receipt_hash: z.string().nullable(),
    created_at: RowTimestamp,
  })
  .meta({ title: 'ReceiptRow', description: 'A receipt as signed and its compact JWS (the receipts view).' });
export type ReceiptRow = z.infer<typeof ReceiptRow>;
