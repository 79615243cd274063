import type { PolicyProfileRecord } from '@writ/contracts';
import { BUILTIN_POLICY_DOCUMENTS } from '@writ/kernel';
import { builtinVersions } from '../src/application/profile-authority.js';
import { ProfileCatalog, type ProfileTrust } from '../src/application/profile-catalog.js';
import { PolicyServiceError } from '../src/application/policy-service.errors.js';
import { validateDocument } from '../src/application/profile-documents.js';

export const SEEDED_AT = '2030-01-01T00:00:00.000Z';

/** The record the service seeds for a document (applied by the policy principal). */
export function recordOf(input: unknown, overrides: Partial<PolicyProfileRecord> = {}): PolicyProfileRecord {
  const { document, version } = validateDocument(input);
  return { profile_id: document.id, version, document: document as Record<string, unknown>, applied_by: 'writ-policy', applied_at: SEEDED_AT, previous_version: null, ...overrides };
}

/** A catalog holding every built-in, as a freshly started service has it (it trusts nothing else). */
export function builtinCatalog(): ProfileCatalog {
  return new ProfileCatalog({ trust: builtinsOnly, builtins: Object.values(BUILTIN_POLICY_DOCUMENTS).map((document) => recordOf(document)) });
}

/** Trust for pure tests: the built-ins shipped in code, nothing else (what ProfileAuthority does without signed applications). */
export const builtinsOnly: ProfileTrust = {
  verify: async (record) => {
    if (!builtinVersions().get(record.profile_id)?.has(record.version)) throw new PolicyServiceError('POLICY_RECORD_UNSIGNED', `${record.profile_id} is not a built-in`);
  },
};

/** The content version of a built-in. */
export function builtinVersion(id: keyof typeof BUILTIN_POLICY_DOCUMENTS): string {
  return validateDocument(BUILTIN_POLICY_DOCUMENTS[id]).version;
}

/** A team's profile document: commands allowed, destructive ones to approval (`overrides` change it). */
export const teamDocument = (overrides: Record<string, unknown> = {}) => ({
  id: 'team_profile',
  description: 'Commands in the workspace.',
  action_classes: { read_local: { outcome: 'allow' }, execute_command: { outcome: 'allow' } },
  destructive_commands: 'require_approval',
  ...overrides,
});

/** What a squatter on the bucket would write: deletes, writes and network writes allowed outright. */
export const PERMISSIVE = {
  action_classes: Object.fromEntries(['read_local', 'write_local', 'delete_local', 'execute_command', 'network_read', 'network_write'].map((actionClass) => [actionClass, { outcome: 'allow' }])),
};
