import { z } from 'zod';
import { RowCount, RowId, RowTimestamp } from './row-fields.js';

export const GrantStatus = z.enum(['active', 'exhausted', 'revoked']);
export type GrantStatus = z.infer<typeof GrantStatus>;

/** A capability grant's claims summary and uses: the `grants` view (never its JWS). */
export const GrantRow = z
  .strictObject({
    grant_id: RowId,
    task_id: RowId,
    step_id: RowId.nullable(),
    attempt_id: RowId.nullable(),
    action_class: z.string().nullable(),
    issued_to: RowId.nullable(),
    issued_by: RowId.nullable(),
    issued_at: RowTimestamp.nullable(),
    expires_at: RowTimestamp.nullable().describe('From the exp claim; a grant past it keeps status active here (time is not folded).'),
    max_uses: RowCount,
    uses: RowCount.describe('Claims of the grant, released ones included.'),
    status: GrantStatus.describe('active, exhausted (max_uses claimed and not released) or revoked.'),
    updated_at: RowTimestamp,
  })
  .meta({ title: 'GrantRow', description: "A capability grant's claims summary, uses and status (the grants view; never its JWS)." });
export type GrantRow = z.infer<typeof GrantRow>;
