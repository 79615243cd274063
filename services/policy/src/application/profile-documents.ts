import { PolicyProfileRecord, hasErrorCode, safeParseContract, type PolicyProfileVersion } from '@writ/contracts';
import { canonicalContentVersion } from '@writ/crypto';
import { parsePolicyDocument, preparePolicyProfile, versionPolicyProfile, type PolicyProfileDocument, type PreparedPolicyProfile } from '@writ/kernel';
import { PolicyServiceError } from './policy-service.errors.js';

/** One offending path of a profile document (`path` dotted, '' for the root). */
export interface ProfileIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * A profile's version: `sha256:` and the SHA-256 of the document's RFC 8785
 * canonical JSON. Derived from content, never chosen by the author, so equal
 * content is one version wherever and whenever it is applied.
 */
export function profileVersion(document: unknown): PolicyProfileVersion {
  return canonicalContentVersion(document);
}

function issuesOf(error: unknown): ProfileIssue[] {
  const raw = (error as { details?: { issues?: unknown } }).details?.issues;
  if (!Array.isArray(raw)) return [{ path: '', message: error instanceof Error ? error.message : String(error) }];
  return raw.map((issue: { path?: unknown; message?: unknown }) => ({
    path: Array.isArray(issue.path) ? issue.path.join('.') : String(issue.path ?? ''),
    message: String(issue.message ?? 'is invalid'),
  }));
}

/** `path: message; …` for a message that carries every issue (a request/reply error has no details). */
export function describeIssues(issues: readonly ProfileIssue[]): string {
  return issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; ');
}

/**
 * Validates a profile document as written: the kernel's PolicyProfileDocument
 * (every issue), and an id that can name the profile's stream in the log
 * (`<events>.policy.<id>`: one subject token, so no dots). Returns the parsed
 * document and its version; POLICY_PROFILE_INVALID lists every issue in its
 * message and in `details.issues`.
 */
export function validateDocument(input: unknown): { readonly document: PolicyProfileDocument; readonly version: PolicyProfileVersion } {
  const issues: ProfileIssue[] = [];
  let document: PolicyProfileDocument | undefined;
  try {
    document = parsePolicyDocument(input);
  } catch (error) {
    if (!hasErrorCode(error, 'POLICY_PROFILE_INVALID')) throw error;
    issues.push(...issuesOf(error));
  }
  if (document === undefined || issues.length > 0) {
    throw new PolicyServiceError('POLICY_PROFILE_INVALID', `the policy profile document is invalid (${issues.length} issue${issues.length === 1 ? '' : 's'}): ${describeIssues(issues)}`, {
      details: { issues },
    });
  }
  return { document, version: profileVersion(document) };
}

/** A profile ready for evaluation, with the record it was loaded from. */
export interface LoadedProfile {
  readonly record: PolicyProfileRecord;
  readonly prepared: PreparedPolicyProfile;
}

/** Prepares a validated document under its version (compiled once, evaluated many times). */
export function prepareDocument(document: PolicyProfileDocument, version: PolicyProfileVersion): PreparedPolicyProfile {
  return preparePolicyProfile(versionPolicyProfile(document, version));
}

/**
 * Loads one record of the profile bucket: a PolicyProfileRecord stored under
 * its own profile id, whose document is valid and whose version is the hash
 * of that document. Anything else is POLICY_RECORD_INVALID (never evaluated).
 */
export function loadRecord(key: string, value: unknown): LoadedProfile {
  const parsed = safeParseContract('PolicyProfileRecord', PolicyProfileRecord, value);
  if (!parsed.ok) {
    throw new PolicyServiceError('POLICY_RECORD_INVALID', `the record under ${key} is not a PolicyProfileRecord: ${describeIssues(parsed.error.issues)}`, {
      cause: parsed.error,
      details: { key },
    });
  }
  const record = parsed.value;
  if (record.profile_id !== key) {
    throw new PolicyServiceError('POLICY_RECORD_INVALID', `the record under ${key} is for profile ${record.profile_id}`, { details: { key, profile_id: record.profile_id } });
  }
  let validated: ReturnType<typeof validateDocument>;
  try {
    validated = validateDocument(record.document);
  } catch (error) {
    throw new PolicyServiceError('POLICY_RECORD_INVALID', `the document under ${key} is invalid: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
      details: { key },
    });
  }
  if (validated.document.id !== key) {
    throw new PolicyServiceError('POLICY_RECORD_INVALID', `the document under ${key} has id ${validated.document.id}`, { details: { key } });
  }
  // The version must be the content's: the record's own document, as stored, hashed again.
  const stored = profileVersion(record.document);
  if (stored !== record.version) {
    throw new PolicyServiceError('POLICY_RECORD_INVALID', `the record under ${key} claims version ${record.version} but its document hashes to ${stored}`, {
      details: { key, claimed: record.version, actual: stored },
    });
  }
  return { record, prepared: prepareDocument(validated.document, record.version) };
}
