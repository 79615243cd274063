import { z } from 'zod';

/** Principal types of the Hermit spec (seed 004, section 8.11). */
export const PrincipalType = z.enum([
  'user',
  'supervisor',
  'agent',
  'service',
  'scheduler',
  'webhook',
  'policy_engine',
  'executor',
  'system',
]);
export type PrincipalType = z.infer<typeof PrincipalType>;
