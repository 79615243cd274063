import type { PolicyProfileRecord } from '@writ/contracts';
import { KeySet, importEd25519PublicJwk } from '@writ/crypto';
import { BUILTIN_POLICY_DOCUMENTS } from '@writ/kernel';
import { SIGNED_REQUESTS, claimedSignedRequest, verifySignedRequest, type KeyWindow, type SignedRequestFailure, type SignedRequestPrincipals } from '@writ/runtime';
import { PolicyServiceError, type PolicyServiceErrorCode } from './policy-service.errors.js';
import type { PrincipalDirectory } from './ports.js';
import { validateDocument, type LoadedProfile } from './profile-documents.js';

/** The only role that may change policy (and never an agent). */
export const POLICY_AUTHOR_ROLE = 'director';

/** A principal's keys over time, as its stream `<events>.principal.<id>` says (`keyWindows` of @writ/runtime). */
export interface PrincipalKeyHistory {
  windows(principalId: string): Promise<readonly KeyWindow[]>;
}

/**
 * Versions of a built-in that earlier releases shipped (and seeded into the
 * log unsigned): a release that changes a built-in lists the version it
 * replaces here, so deployments seeded by the older release keep trusting
 * their record until a director applies the new one. Empty: no built-in has
 * changed since records carry signed applications.
 */
export const EARLIER_BUILTIN_VERSIONS: Readonly<Record<string, readonly string[]>> = {};

/** Each built-in's trusted versions: the one shipped in this code, and those of `EARLIER_BUILTIN_VERSIONS`. */
export function builtinVersions(): ReadonlyMap<string, ReadonlySet<string>> {
  return new Map(Object.entries(BUILTIN_POLICY_DOCUMENTS).map(([id, document]) => [id, new Set([validateDocument(document).version, ...(EARLIER_BUILTIN_VERSIONS[id] ?? [])])]));
}

/** The instant a record of a built-in loaded from code (not from the bucket) claims: before any applied version. */
export const BUILTIN_FLOOR_APPLIED_AT = '1970-01-01T00:00:00.000Z';

/** The built-ins shipped in this code as records applied by `appliedBy` at `appliedAt` (the floor the catalog starts from). */
export function builtinRecords(appliedBy: string, appliedAt = BUILTIN_FLOOR_APPLIED_AT): PolicyProfileRecord[] {
  return Object.entries(BUILTIN_POLICY_DOCUMENTS).map(([id, input]) => {
    const { document, version } = validateDocument(input);
    return { profile_id: id, version, document: document as Record<string, unknown>, applied_by: appliedBy, applied_at: appliedAt, previous_version: null };
  });
}

export interface ProfileAuthorityOptions {
  /** Principals as the log says now: who the signer is, its roles and type. */
  readonly principals: Pick<PrincipalDirectory, 'lookup'>;
  readonly keys: PrincipalKeyHistory;
  /**
   * WRIT_POLICY_APPLY_FRESHNESS_SECONDS: an application's `applied_at` may lie
   * this far from the service clock when it is applied, so the key that signed
   * it may have entered the log up to this long after `applied_at`.
   */
  readonly skewSeconds: number;
  /** Default `builtinVersions()`. */
  readonly builtins?: ReadonlyMap<string, ReadonlySet<string>>;
}

/** How a record earned trust. */
export type RecordAuthority = 'builtin' | 'signed';

function refusal(code: PolicyServiceErrorCode, record: PolicyProfileRecord, message: string, cause?: unknown, details: Record<string, unknown> = {}): PolicyServiceError {
  return new PolicyServiceError(code, `policy profile record ${record.profile_id}@${record.version}: ${message}`, {
    cause,
    details: { profile_id: record.profile_id, version: record.version, applied_by: record.applied_by, ...details },
  });
}

/**
 * Decides whether a profile record may be used (DESIGN invariant 9: a profile
 * is not trusted for merely being in the bucket or the log). A record is
 * trusted when either
 *
 * - it carries no signed application and its content is a built-in shipped in
 *   this code under its own id (`builtin`); or
 * - its `application_jws` is a PolicyProfileApplication (typ
 *   `writ-policy-apply+jws`) that verifies (`verifySignedRequest` of
 *   @writ/runtime, as the apply request itself was verified) with a key its
 *   signer held at `applied_at` (added no later than `applied_at` + the skew,
 *   not revoked before it: a key rotated later keeps what it signed), by a
 *   registered principal with role `director` that is not an agent, and says
 *   exactly what the record says: signer, `applied_at`, and a document whose
 *   content version is the record's version and whose id is the profile
 *   (`signed`).
 *
 * Anything else throws its code: POLICY_RECORD_UNSIGNED,
 * POLICY_RECORD_SIGNATURE_INVALID, POLICY_RECORD_SIGNER_NOT_ALLOWED,
 * POLICY_RECORD_MISMATCH. Reading the principals may throw (the log is down):
 * that is not a verdict, and the caller keeps what it had.
 */
export class ProfileAuthority {
  readonly #builtins: ReadonlyMap<string, ReadonlySet<string>>;

  constructor(private readonly options: ProfileAuthorityOptions) {
    this.#builtins = options.builtins ?? builtinVersions();
  }

  /** The built-in content shipped in this code (any signer, any time). */
  isShippedBuiltin(record: Pick<PolicyProfileRecord, 'profile_id' | 'version'>): boolean {
    return this.#builtins.get(record.profile_id)?.has(record.version) ?? false;
  }

  async verify(record: PolicyProfileRecord): Promise<RecordAuthority> {
    const jws = record.application_jws;
    if (jws === undefined) {
      if (this.isShippedBuiltin(record)) return 'builtin';
      throw refusal('POLICY_RECORD_UNSIGNED', record, `carries no signed application (application_jws) and is not a built-in of this release: re-apply it with writ policy apply`);
    }
    const failure: SignedRequestFailure = (reason, message, details, cause) => {
      const code: PolicyServiceErrorCode =
        reason === 'signer_not_allowed' ? 'POLICY_RECORD_SIGNER_NOT_ALLOWED' : reason === 'contract_invalid' ? 'POLICY_RECORD_MISMATCH' : 'POLICY_RECORD_SIGNATURE_INVALID';
      return refusal(code, record, message, cause, details);
    };
    const claimed = claimedSignedRequest(jws, SIGNED_REQUESTS.policyApplication, failure);
    const appliedAt = Date.parse(claimed.applied_at);
    const principals: SignedRequestPrincipals = {
      lookup: (principalId) => this.options.principals.lookup(principalId),
      verificationKeys: async (principalId) => {
        const held = (await this.options.keys.windows(principalId)).filter((window) => this.#heldAt(window, appliedAt));
        return KeySet.of(await Promise.all(held.map((window) => importEd25519PublicJwk(window.jwk))));
      },
    };
    const { payload } = await verifySignedRequest(
      jws,
      { ...SIGNED_REQUESTS.policyApplication, signers: POLICY_AUTHOR_ROLE, freshnessSeconds: null },
      { principals, clock: () => new Date(appliedAt), failure },
    );
    if (payload.applied_by !== record.applied_by || payload.applied_at !== record.applied_at) {
      throw refusal('POLICY_RECORD_MISMATCH', record, `its signed application was made by ${payload.applied_by} at ${payload.applied_at}, the record says ${record.applied_by} at ${record.applied_at}`);
    }
    let signed: ReturnType<typeof validateDocument>;
    try {
      signed = validateDocument(payload.document);
    } catch (error) {
      throw refusal('POLICY_RECORD_MISMATCH', record, 'its signed application carries no valid profile document', error);
    }
    if (signed.version !== record.version || signed.document.id !== record.profile_id) {
      throw refusal('POLICY_RECORD_MISMATCH', record, `its signed application is ${signed.document.id}@${signed.version}, not this record's content`, undefined, { signed_version: signed.version });
    }
    return 'signed';
  }

  /** The key could sign an application dated `appliedAt`: added by then (give or take the skew), not revoked before it. */
  #heldAt(window: KeyWindow, appliedAt: number): boolean {
    if (!Number.isFinite(appliedAt)) return false;
    if (Date.parse(window.valid_from) - this.options.skewSeconds * 1000 > appliedAt) return false;
    return window.valid_until === null || appliedAt < Date.parse(window.valid_until);
  }
}

/** A record the catalog may replace the profile in force with, or why not (a replay of an older version). */
export function staleness(current: LoadedProfile | undefined, next: PolicyProfileRecord): string | undefined {
  if (current === undefined || current.record.version === next.version) return undefined;
  const inForce = current.record;
  // A built-in in force (seeded or the code's floor) gives way to any trusted record.
  if (inForce.application_jws === undefined) return undefined;
  if (next.application_jws === undefined) return `a built-in record after the version ${inForce.version} a director applied at ${inForce.applied_at}`;
  if (Date.parse(next.applied_at) <= Date.parse(inForce.applied_at)) return `applied at ${next.applied_at}, not after the version in force (${inForce.version}, applied at ${inForce.applied_at})`;
  return undefined;
}
