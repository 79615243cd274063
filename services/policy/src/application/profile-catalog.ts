import type { ProfileLookup } from './ports.js';
import { loadRecord, type LoadedProfile } from './profile-documents.js';

/** What one bucket entry did to the catalog. */
export type CatalogChange =
  | { readonly status: 'loaded'; readonly profile_id: string; readonly version: string; readonly previous_version: string | null }
  | { readonly status: 'unchanged'; readonly profile_id: string; readonly version: string }
  /** The entry is not a valid record for its key: ignored, the previous version (if any) stays. */
  | { readonly status: 'rejected'; readonly profile_id: string; readonly error: unknown; readonly kept_version: string | null }
  /** The key was deleted or purged in the bucket: the log still holds the profile, so the loaded version stays until a restart reconciles. */
  | { readonly status: 'deleted'; readonly profile_id: string; readonly kept_version: string | null };

/**
 * The profiles evaluation uses, prepared once per version and replaced as the
 * bucket changes (hot reload). Only a valid record replaces a profile: a
 * damaged one never reaches evaluation and never removes what was loaded.
 */
export class ProfileCatalog implements ProfileLookup {
  readonly #profiles = new Map<string, LoadedProfile>();

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

  /** Applies one bucket entry (`value` the parsed JSON, or a parse failure as `undefined` with `error`). */
  accept(key: string, entry: { readonly operation: 'PUT' | 'DEL' | 'PURGE'; readonly value?: unknown; readonly error?: unknown }): CatalogChange {
    const current = this.#profiles.get(key);
    if (entry.operation !== 'PUT') return { status: 'deleted', profile_id: key, kept_version: current?.record.version ?? null };
    let loaded: LoadedProfile;
    try {
      if (entry.error !== undefined) throw entry.error;
      loaded = loadRecord(key, entry.value);
    } catch (error) {
      return { status: 'rejected', profile_id: key, error, kept_version: current?.record.version ?? null };
    }
    if (current?.record.version === loaded.record.version) {
      // Same content: keep the prepared profile already in use, but the newer record (applied_by / applied_at).
      this.#profiles.set(key, { record: loaded.record, prepared: current.prepared });
      return { status: 'unchanged', profile_id: key, version: loaded.record.version };
    }
    this.#profiles.set(key, loaded);
    return { status: 'loaded', profile_id: key, version: loaded.record.version, previous_version: current?.record.version ?? null };
  }
}
