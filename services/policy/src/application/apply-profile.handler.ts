import { PolicyProfileRecord, hasErrorCode, parseContract, type ApplyPolicyProfile, type ApplyPolicyProfileReply, type PolicyProfileApplication } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { SIGNED_REQUESTS, claimedSignedRequest, decision, handleCommand, verifySignedRequest, type CommandDecision, type SignedRequestFailure } from '@writ/runtime';
import type { Logger } from '@writ/telemetry';
import { PolicyServiceError } from './policy-service.errors.js';
import { POLICY_AUTHOR_ROLE, type ProfileAuthority } from './profile-authority.js';
import type { Clock, PrincipalDirectory, ProfileLog } from './ports.js';
import { validateDocument } from './profile-documents.js';
import { profileAppliedDraft, type ProfileSync } from './profile-sync.js';


export interface ApplyProfileHandlerOptions {
  readonly log: ProfileLog;
  readonly sync: ProfileSync;
  readonly principals: PrincipalDirectory;
  /** Who may have made a record: the log's current record is a reference (unchanged, replay) only when trusted. */
  readonly authority: Pick<ProfileAuthority, 'verify'>;
  readonly clock: Clock;
  /** The policy service's principal (`actor_id` of the events it appends). */
  readonly principalId: string;
  /** How far applied_at may be from the clock, in seconds (WRIT_POLICY_APPLY_FRESHNESS_SECONDS). */
  readonly freshnessSeconds: number;
  readonly logger?: Logger;
  /** Re-read-and-decide rounds after losing an append race (default 5). */
  readonly maxConflicts?: number;
}

/** Codes a director may see; anything else (the log or bucket down, a bug) is POLICY_STORE_UNAVAILABLE. */
const REPLY_CODES = new Set([
  'POLICY_APPLY_FORBIDDEN',
  'POLICY_APPLY_SIGNATURE_INVALID',
  'POLICY_APPLY_STALE',
  'POLICY_PROFILE_INVALID',
  'POLICY_STORE_UNAVAILABLE',
  'CONTRACT_INVALID',
]);

/** Refusals of the signed application as this service's codes; a payload off its contract stays CONTRACT_INVALID. */
const applicationFailure: SignedRequestFailure = (reason, message, details, cause) => {
  if (reason === 'contract_invalid' && cause instanceof Error) return cause;
  const code = reason === 'signer_not_allowed' ? 'POLICY_APPLY_FORBIDDEN' : reason === 'stale' ? 'POLICY_APPLY_STALE' : 'POLICY_APPLY_SIGNATURE_INVALID';
  return new PolicyServiceError(code, message, { cause, details });
};

/**
 * What a compact JWS claims to carry, read WITHOUT verifying it: only to learn
 * whose keys must verify it (`applied_by`). Nothing read here is trusted.
 */
export function claimedApplication(jws: string): PolicyProfileApplication {
  return claimedSignedRequest(jws, SIGNED_REQUESTS.policyApplication, applicationFailure);
}

/**
 * `<root>.qry.policy.apply-profile` (request/reply): a director's signed
 * PolicyProfileApplication becomes the profile's new version.
 *
 * 1. Who: the JWS (typ `writ-policy-apply+jws`) must verify against an active
 *    key of the principal it names as `applied_by` (keys folded from the log),
 *    and that principal must hold the role `director` and not be an agent
 *    (`verifySignedRequest` of @writ/runtime, as for every director-signed request).
 * 2. When: `applied_at` within ±freshness of the clock, and later than the
 *    current record's (a captured application cannot be replayed over a newer one).
 * 3. What: the kernel's PolicyProfileDocument (every issue reported).
 * 4. Content already current → `unchanged` (nothing appended, the bucket converged);
 *    the log's latest record is "current" only when `authority` trusts it.
 *    Else `policy.profile_applied` is appended to `<events>.policy.<id>`, the
 *    record carrying the signed application (`application_jws`),
 *    guarded by the sequence read (a lost race re-reads), THEN the bucket is
 *    converged to it: the log is the truth, the bucket its view, and every
 *    policy instance reloads from the bucket without a restart.
 */
export class ApplyProfileHandler {
  constructor(private readonly options: ApplyProfileHandlerOptions) {}

  async apply(request: ApplyPolicyProfile): Promise<ApplyPolicyProfileReply> {
    try {
      return await this.#apply(request);
    } catch (error) {
      if (hasErrorCode(error) && REPLY_CODES.has(error.code)) throw error;
      throw new PolicyServiceError('POLICY_STORE_UNAVAILABLE', 'the profile could not be applied now; retry', { cause: error });
    }
  }

  async #apply(request: ApplyPolicyProfile): Promise<ApplyPolicyProfileReply> {
    const { payload: application } = await verifySignedRequest(
      request.application_jws,
      { ...SIGNED_REQUESTS.policyApplication, signers: POLICY_AUTHOR_ROLE, freshnessSeconds: this.options.freshnessSeconds },
      { principals: this.options.principals, clock: this.options.clock, failure: applicationFailure },
    );
    const now = this.options.clock();
    const { document, version } = validateDocument(application.document);
    const profileId = document.id;
    const cause = sha256Hex(request.application_jws).slice(0, 32);

    const outcome = await handleCommand({
      stream: {
        read: () => this.options.log.head(profileId),
        // One draft per application (profile.applied); the profile log answers a lost race with EVENTSTORE_CONFLICT.
        append: async ([draft], expectedSeq) => {
          if (draft !== undefined) await this.options.log.append(profileId, draft, expectedSeq);
          return { duplicate: false };
        },
      },
      maxRounds: this.options.maxConflicts,
      exhausted: () => new PolicyServiceError('POLICY_STORE_UNAVAILABLE', `profile ${profileId} kept changing while being applied; retry`, { details: { profile_id: profileId } }),
      decide: async (head): Promise<CommandDecision<ApplyPolicyProfileReply>> => {
        // The log's latest record counts (same content, later than) only if its author could have made it:
        // a record appended around this service neither blocks an application nor passes for the current one.
        const current = head.record !== null && (await this.#trusted(head.record)) ? head.record : null;
        if (current !== null && current.version === version) return decision.done({ status: 'unchanged', profile_id: profileId, version, previous_version: current.previous_version });
        if (current !== null && Date.parse(application.applied_at) <= Date.parse(current.applied_at)) {
          throw new PolicyServiceError(
            'POLICY_APPLY_STALE',
            `the application was signed at ${application.applied_at}, not after the current version of ${profileId} (applied at ${current.applied_at}): sign it again now`,
            { details: { profile_id: profileId, applied_at: application.applied_at, current_applied_at: current.applied_at } },
          );
        }
        const record = parseContract('PolicyProfileRecord', PolicyProfileRecord, {
          profile_id: profileId,
          version,
          document,
          applied_by: application.applied_by,
          applied_at: application.applied_at,
          previous_version: head.record?.version ?? null,
          // The signed application itself: whoever loads the record checks its author's authority (DESIGN invariant 9).
          application_jws: request.application_jws,
        });
        const draft = profileAppliedDraft(record, { principalId: this.options.principalId, cause, occurredAt: now.toISOString() });
        return decision.append([draft], { status: 'applied', profile_id: profileId, version, previous_version: record.previous_version });
      },
    });
    if (outcome.status === 'applied') this.options.logger?.info({ profile_id: profileId, version, previous_version: outcome.previous_version, applied_by: application.applied_by }, 'policy profile applied');
    await this.options.sync.converge(profileId);
    return outcome;
  }

  /** Whether the record's author could have made it; a refusal is logged (the record is passed over), a failure to tell propagates. */
  async #trusted(record: PolicyProfileRecord): Promise<boolean> {
    try {
      await this.options.authority.verify(record);
      return true;
    } catch (error) {
      if (!hasErrorCode(error) || !error.code.startsWith('POLICY_RECORD_')) throw error;
      this.options.logger?.error({ profile_id: record.profile_id, version: record.version, code: error.code }, `${error.code}: the log's latest record of ${record.profile_id} is not trusted; the application does not take it as the current version`);
      return false;
    }
  }
}
