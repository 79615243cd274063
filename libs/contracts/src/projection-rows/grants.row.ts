import { z } from 'zod';
import { RowCount, RowId, RowInstant, RowRef, RowText, RowVersion } from './row-fields.js';

/** A grant's status here: `active`, `exhausted` (max_uses claimed and not released) or `revoked` (`GET /v1/grants?status=`). */
export const GRANT_STATUSES = ['active', 'exhausted', 'revoked'] as const;
export const GrantStatusSchema = z.enum(GRANT_STATUSES);
export type GrantStatus = z.infer<typeof GrantStatusSchema>;

/**
 * `<root>.proj.grants.<grant_id>`: a capability grant as the log describes it,
 * its claims and its uses. The grant's JWS is never stored (a bearer
 * capability has no reader), and whether it is usable is never decided from
 * here: the executor checks the grant against the log itself.
 */
export const GrantRowSchema = z.strictObject({
  grant_id: RowId,
  task_id: RowId,
  step_id: RowRef,
  attempt_id: RowRef,
  action_class: RowText,
  issued_to: RowRef,
  issued_by: RowRef,
  issued_at: RowInstant.nullable(),
  /** From the `exp` claim; a grant past it keeps status `active` here (time is not folded). */
  expires_at: RowInstant.nullable(),
  max_uses: RowCount,
  uses: RowCount,
  /** `active`, `exhausted` (max_uses claimed and not released) or `revoked`. `uses` counts claims, released ones included. */
  status: GrantStatusSchema,
  updated_at: RowInstant,
  row_version: RowVersion,
});
export type GrantRow = z.infer<typeof GrantRowSchema>;
