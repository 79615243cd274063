import type { PolicyProfileRecord } from '@writ/contracts';
import { BUILTIN_POLICY_DOCUMENTS } from '@writ/kernel';
import { ProfileCatalog } from '../src/application/profile-catalog.js';
import { validateDocument } from '../src/application/profile-documents.js';

export const SEEDED_AT = '2030-01-01T00:00:00.000Z';

/** The record the service seeds for a document (applied by the policy principal). */
export function recordOf(input: unknown, overrides: Partial<PolicyProfileRecord> = {}): PolicyProfileRecord {
  const { document, version } = validateDocument(input);
  return { profile_id: document.id, version, document: document as Record<string, unknown>, applied_by: 'writ-policy', applied_at: SEEDED_AT, previous_version: null, ...overrides };
}

/** A catalog holding every built-in, as a freshly started service has it. */
export function builtinCatalog(): ProfileCatalog {
  const catalog = new ProfileCatalog();
  for (const [id, document] of Object.entries(BUILTIN_POLICY_DOCUMENTS)) catalog.accept(id, { operation: 'PUT', value: recordOf(document) });
  return catalog;
}

/** The content version of a built-in. */
export function builtinVersion(id: keyof typeof BUILTIN_POLICY_DOCUMENTS): string {
  return validateDocument(BUILTIN_POLICY_DOCUMENTS[id]).version;
}
