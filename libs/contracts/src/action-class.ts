import { z } from 'zod';

/** Action classes (Hermit 16.4), spelled as machine names. */
export const ActionClass = z.enum([
  'read_local',
  'write_local',
  'delete_local',
  'execute_command',
  'network_read',
  'network_write',
  'credentialed_api_call',
  'vcs_mutation',
  'publication',
  'payment',
  'memory_write',
  'rollback',
]);
export type ActionClass = z.infer<typeof ActionClass>;

/**
 * Action classes that are important by default and MUST produce receipts
 * (Hermit 7). A policy profile may add more. Policy override and approval
 * resolution are important too but are not action classes.
 */
export const IMPORTANT_ACTION_CLASSES: readonly ActionClass[] = Object.freeze([
  'write_local',
  'delete_local',
  'execute_command',
  'vcs_mutation',
  'network_write',
  'credentialed_api_call',
  'publication',
  'payment',
  'memory_write',
  'rollback',
] as const);

/**
 * Action classes whose delayed execution MUST revalidate a state witness
 * unless policy explicitly waives it (Hermit 16.8).
 */
export const WITNESS_REQUIRED_ACTION_CLASSES: readonly ActionClass[] = Object.freeze([
  'write_local',
  'delete_local',
  'vcs_mutation',
  'network_write',
  'credentialed_api_call',
  'publication',
  'rollback',
] as const);

/** What the proposer believes about undoing the action (ActionRequest, Hermit 11.3). */
export const Reversibility = z.enum(['reversible', 'irreversible', 'unknown']);
export type Reversibility = z.infer<typeof Reversibility>;
