import { z } from 'zod';
import { Id, Name, Ref, Timestamp } from './ids.js';
import { LIMITS } from './limits.js';
import { PrincipalType } from './principal-type.js';
import { Title } from './text.js';

/** An attributable actor (Hermit 8.11). */
export const Principal = z
  .strictObject({
    principal_id: Id,
    principal_type: PrincipalType,
    display_name: Title,
    created_at: Timestamp,
    authn_context_ref: Ref.optional().describe('How the principal authenticates, e.g. its JWKS or key record.'),
    labels: z.array(Name).max(LIMITS.shortListItems).optional(),
    external_identity_ref: Ref.optional().describe('Identity in an external system (IdP subject, VCS account).'),
  })
  .meta({ title: 'Principal', description: 'An attributable actor: user, agent, service, executor... (Hermit 8.11).' });
export type Principal = z.infer<typeof Principal>;
