import { z } from 'zod';
import { PrincipalRole, PublicEd25519Jwk } from '../governed-path/principal-events.js';
import { PrincipalType } from '../principal-type.js';
import { RowId, RowInstant, RowVersion } from './row-fields.js';

/** `<root>.proj.principals.<principal_id>`: a principal, its roles and its public keys (never a private one). */
export const PrincipalRowSchema = z.strictObject({
  principal_id: RowId,
  type: PrincipalType,
  display_name: z.string(),
  roles: z.array(PrincipalRole),
  keys: z.array(PublicEd25519Jwk),
  revoked_kids: z.array(z.string()),
  registered_at: RowInstant,
  updated_at: RowInstant,
  row_version: RowVersion,
});
export type PrincipalRow = z.infer<typeof PrincipalRowSchema>;
