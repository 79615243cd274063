import type { PolicyProfileRecord } from '@writ/contracts';
import { hasErrorCode } from '@writ/contracts';
import { PolicyServiceError } from './policy-service.errors.js';
import type { ProfileLookup } from './ports.js';
import { staleness } from './profile-authority.js';
import { loadRecord, type LoadedProfile } from './profile-documents.js';

/** What one bucket entry did to the catalog. */
export type CatalogChange =
  | { readonly status: 'loaded'; readonly profile_id: string; readonly version: string; readonly previous_version: string | null }
  | { readonly status: 'unchanged'; readonly profile_id: string; readonly version: string }
  /** The entry is not a record the catalog may use (`code`: why): ignored, the version in force (if any) stays. */
  | { readonly status: 'rejected'; readonly profile_id: string; readonly code: string; readonly error: unknown; readonly kept_version: string | null }
  /** The key was deleted or purged in the bucket: the log still holds the profile, so the loaded version stays until a restart reconciles. */
  | { readonly status: 'deleted'; readonly profile_id: string; readonly kept_version: string | null };

/** Who may have made a record: throws its POLICY_RECORD_* code when nobody with the authority did (`ProfileAuthority`). */
export interface ProfileTrust {
  verify(record: PolicyProfileRecord): Promise<unknown>;
}

export interface ProfileCatalogOptions {
  readonly trust: ProfileTrust;
  /** The built-ins shipped in the service's code: in force from the start, until a trusted record replaces them. */
  readonly builtins?: readonly PolicyProfileRecord[];
}

/**
 * The profiles evaluation uses, prepared once per version and replaced as the
 * bucket changes (hot reload). A bucket entry replaces the profile in force
 * only when it is a valid record (`loadRecord`) that `trust` vouches for (a
 * built-in shipped in code, or a director's signed application of exactly
 * this content) and that is not older than the version in force (a replay);
 * anything else is `rejected` with its code and recorded as a refusal of that
 * profile (readiness shows them) until a good record arrives: the version in
 * force stays — the last good one, or the built-in shipped in code — and a
 * profile never loaded stays unknown (evaluation denies). Never fails open.
 */
export class ProfileCatalog implements ProfileLookup {
  readonly #profiles = new Map<string, LoadedProfile>();
  readonly #refused = new Map<string, string>();
  readonly #trust: ProfileTrust;

  constructor(options: ProfileCatalogOptions) {
    this.#trust = options.trust;
    for (const record of options.builtins ?? []) this.#profiles.set(record.profile_id, loadRecord(record.profile_id, record));
  }

  get(profileId: string): LoadedProfile | undefined {
    return this.#profiles.get(profileId);
  }

  get size(): number {
    return this.#profiles.size;
  }

  /** Profile id → version, for readiness and logs. */
  versions(): Record<string, string> {
    return Object.fromEntries([...this.#profiles].map(([id, loaded]) => [id, loaded.record.version]));
  }

  /** The profiles whose latest bucket entry was refused, as `<profile_id>: <CODE>` (a readiness detail). */
  refusals(): string[] {
    return [...this.#refused].map(([id, code]) => `${id}: ${code}`).sort();
  }

  /** Applies one bucket entry (`value` the parsed JSON, or a parse failure as `undefined` with `error`). */
  async accept(key: string, entry: { readonly operation: 'PUT' | 'DEL' | 'PURGE'; readonly value?: unknown; readonly error?: unknown }): Promise<CatalogChange> {
    const current = this.#profiles.get(key);
    if (entry.operation !== 'PUT') return { status: 'deleted', profile_id: key, kept_version: current?.record.version ?? null };
    let loaded: LoadedProfile;
    try {
      if (entry.error !== undefined) throw new PolicyServiceError('POLICY_RECORD_INVALID', `the value under ${key} is not JSON`, { cause: entry.error, details: { key } });
      loaded = loadRecord(key, entry.value);
      await this.#trust.verify(loaded.record);
      const stale = staleness(this.#profiles.get(key), loaded.record);
      if (stale !== undefined) throw new PolicyServiceError('POLICY_RECORD_STALE', `the record under ${key} is ${stale}: a replay`, { details: { key, version: loaded.record.version } });
    } catch (error) {
      const code = hasErrorCode(error) ? error.code : 'POLICY_RECORD_INVALID';
      this.#refused.set(key, code);
      return { status: 'rejected', profile_id: key, code, error, kept_version: this.#profiles.get(key)?.record.version ?? null };
    }
    this.#refused.delete(key);
    const inForce = this.#profiles.get(key);
    if (inForce?.record.version === loaded.record.version) {
      // Same content: keep the prepared profile already in use, but the newer record (applied_by / applied_at).
      this.#profiles.set(key, { record: loaded.record, prepared: inForce.prepared });
      return { status: 'unchanged', profile_id: key, version: loaded.record.version };
    }
    this.#profiles.set(key, loaded);
    return { status: 'loaded', profile_id: key, version: loaded.record.version, previous_version: inForce?.record.version ?? null };
  }
}
