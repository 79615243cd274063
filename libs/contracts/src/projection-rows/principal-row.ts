import { z } from 'zod';
import { PrincipalRole, PublicEd25519Jwk } from '../governed-path/principal-events.js';
import { PrincipalType } from '../principal-type.js';
import { RowId, RowTimestamp } from './row-fields.js';

/** A principal and its active public keys (never a private part): the `principals` view. */
export const PrincipalRow = z
  .strictObject({
    principal_id: RowId,
    type: PrincipalType,
    display_name: z.string(),
    roles: z.array(PrincipalRole),
    keys: z.array(PublicEd25519Jwk),
    revoked_kids: z.array(z.string()),
    registered_at: RowTimestamp,
    updated_at: RowTimestamp,
  })
  .meta({ title: 'PrincipalRow', description: 'A principal, its roles and active public keys (the principals view).' });
export type PrincipalRow = z.infer<typeof PrincipalRow>;
