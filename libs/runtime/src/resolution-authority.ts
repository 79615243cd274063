import { ApprovalResolution, PrincipalRegistered, WritError, type BundleKey, type EventEnvelope, type PrincipalRole, type PrincipalType } from '@writ/contracts';
import { verifyJws } from '@writ/crypto';
import { keySetOfJwks, unverifiedJwsClaims } from './jws-inspection.js';
import { z } from 'zod';
import { packetHashOfRef } from './approval-packet.js';
import { describeWindow, keyHistory } from './key-history.js';

/**
 * Whether an approval resolution in the log carries the authority it claims
 * (DESIGN invariant 9: no event is trusted for merely being in the log). A
 * director's decision (`approval.granted`, `approval.denied`) is honoured only
 * when the event carries the director's signed ApprovalResolution
 * (`resolution_jws`, the compact JWS `writ approve|deny` sent) and that JWS
 * holds up against the principal registry as the log tells its history:
 *
 * - it verifies under a key the signer held when it signed (`resolved_at`),
 *   never a key added later, revoked before, or revoked before the approval
 *   was even requested (whatever `resolved_at` claims);
 * - it was signed while the approval was pending (requested_at … expires_at,
 *   give or take the clock skew), so a key revoked before the approval existed
 *   cannot be used with a backdated `resolved_at`;
 * - the signer is not the principal that requested the action;
 * - the signer held the director role then, and is not an agent;
 * - it answers this approval, with this decision, by the resolver the event names,
 *   over this approval's packet (`packet_hash`).
 *
 * Who acts on a resolution checks it here: the approval service before it mints a
 * grant, the orchestrator before the attempt resumes, the receipt service before it
 * receipts it, `writ verify` for every resolution of a bundle. The result depends only
 * on the log (times are the signed and recorded ones, never a clock), so every one of
 * them reaches the same verdict, today and on a replay.
 *
 * And, given a `RegistrationCheck` (registration-authority.ts), that the signer's registration
 * and the key it signed with were themselves authorized by an operator back to a trust anchor.
 */

/** Why a director's resolution in the log is refused. Closed: callers branch on it. */
export type ResolutionAuthorityCode =
  /** A director's decision with no signed resolution on it (forged, or recorded before resolutions were kept). */
  | 'APPROVAL_RESOLUTION_UNSIGNED'
  /** The JWS is malformed, not an ApprovalResolution, or verifies under no key of the principal it names. */
  | 'APPROVAL_RESOLUTION_SIGNATURE_INVALID'
  /** It verifies under a key of the signer that was not valid when it was signed (revoked before, or added after). */
  | 'APPROVAL_RESOLUTION_KEY_NOT_VALID'
  /** The signer was not a registered principal holding the director role at that time, or is an agent. */
  | 'APPROVAL_RESOLUTION_NOT_DIRECTOR'
  /** The signer is the principal that requested the action: nobody approves their own action. */
  | 'APPROVAL_RESOLUTION_BY_REQUESTER'
  /** The signed resolution answers another approval, another decision, or names another resolver than the event. */
  | 'APPROVAL_RESOLUTION_MISMATCH'
  /** The signed `packet_hash` is not the approval's packet: the director decided on another (or a changed) packet. */
  | 'APPROVAL_RESOLUTION_PACKET_STALE'
  /** Signed at a time the approval was not pending (before it was requested, or after it expired). */
  | 'APPROVAL_RESOLUTION_TIME_INVALID';

export class ResolutionAuthorityError extends WritError<ResolutionAuthorityCode> {
  constructor(code: ResolutionAuthorityCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'ResolutionAuthorityError';
  }
}

export const RESOLUTION_AUTHORITY_CODES: readonly ResolutionAuthorityCode[] = Object.freeze([
  'APPROVAL_RESOLUTION_UNSIGNED',
  'APPROVAL_RESOLUTION_SIGNATURE_INVALID',
  'APPROVAL_RESOLUTION_KEY_NOT_VALID',
  'APPROVAL_RESOLUTION_NOT_DIRECTOR',
  'APPROVAL_RESOLUTION_BY_REQUESTER',
  'APPROVAL_RESOLUTION_MISMATCH',
  'APPROVAL_RESOLUTION_PACKET_STALE',
  'APPROVAL_RESOLUTION_TIME_INVALID',
]);

/** The resolutions that are a director's decision: each must carry the director's signature. */
export const DIRECTOR_DECISIONS: readonly string[] = Object.freeze(['approval.granted', 'approval.denied']);

const DECISION_OF: Readonly<Record<string, ApprovalResolution['decision']>> = { 'approval.granted': 'grant', 'approval.denied': 'deny' };

/** The role that may resolve approvals (the kernel's APPROVER_ROLE). */
const DIRECTOR: PrincipalRole = 'director';

/**
 * How far a director's clock may be from the log's: the same ±300 s as the signed requests'
 * freshness. Applied where a director's `resolved_at` meets a time of the log (the approval's
 * window, a key's or registration's start); never to a revocation, which ends a key strictly.
 */
export const RESOLUTION_CLOCK_SKEW_MS = 300_000;

/** A principal as the log tells its history: its registration and every key with its validity window. */
export interface PrincipalHistory {
  readonly principal_id: string;
  readonly principal_type: PrincipalType;
  readonly roles: readonly PrincipalRole[];
  /** `at` of its `principal.registered`. */
  readonly registered_at: string;
  /** Who appended the registration (`registered_by`): what a registration check starts from. */
  readonly registered_by: string;
  /** Every key it ever held (revoked ones too), valid from its addition until its revocation. */
  readonly keys: readonly BundleKey[];
}

/**
 * Folds a principal's events (`writ.evt.principal.<id>`, in order) into its history;
 * undefined when it was never (validly) registered. Pure.
 */
export function principalHistory(principalId: string, events: readonly Pick<EventEnvelope, 'event_type' | 'payload'>[]): PrincipalHistory | undefined {
  const registration = events.find((event) => event.event_type === 'principal.registered');
  const parsed = PrincipalRegistered.safeParse(registration?.payload);
  if (!parsed.success || parsed.data.principal_id !== principalId) return undefined;
  return {
    principal_id: principalId,
    principal_type: parsed.data.principal_type,
    roles: parsed.data.roles,
    registered_at: parsed.data.at,
    registered_by: parsed.data.registered_by,
    keys: keyHistory([{ principal_id: principalId, events }]),
  };
}

/** The approval a resolution answers, as its `approval.requested` recorded it. */
export interface ResolvedApproval {
  readonly approval_id: string;
  readonly requested_by: string;
  readonly approval_packet_ref: string;
  /** `at` of `approval.requested`. */
  readonly requested_at: string;
  readonly expires_at: string;
}

const Requested = z.looseObject({ requested_by: z.string(), approval_packet_ref: z.string(), expires_at: z.string(), at: z.string() });

/** The approval an approval event is about: its entity, else the `approval_id` its payload names. */
export function approvalIdOf(event: Pick<EventEnvelope, 'entity_type' | 'entity_id' | 'payload'>): string | undefined {
  if (event.entity_type === 'approval') return event.entity_id;
  const named = event.payload['approval_id'];
  return typeof named === 'string' ? named : undefined;
}

/** The approval `approvalId` as its first `approval.requested` among `events` recorded it (undefined: never requested). */
export function requestedApproval(events: readonly Pick<EventEnvelope, 'event_type' | 'entity_type' | 'entity_id' | 'payload'>[], approvalId: string): ResolvedApproval | undefined {
  const requested = events.find((event) => event.event_type === 'approval.requested' && approvalIdOf(event) === approvalId);
  const parsed = Requested.safeParse(requested?.payload);
  if (!parsed.success) return undefined;
  return { approval_id: approvalId, requested_by: parsed.data.requested_by, approval_packet_ref: parsed.data.approval_packet_ref, requested_at: parsed.data.at, expires_at: parsed.data.expires_at };
}

/**
 * Who a director's decision claims resolved it, read WITHOUT verifying anything: the signer the
 * recorded JWS names, else the event's `resolved_by`. Only to know whose history to fetch (a
 * bundle carries it); the check decides.
 */
export function claimedResolver(event: Pick<EventEnvelope, 'payload'>): string | undefined {
  const jws = event.payload['resolution_jws'];
  const claimed = typeof jws === 'string' ? (unverifiedJwsClaims(jws) as { resolved_by?: unknown } | undefined)?.resolved_by : undefined;
  const named = typeof claimed === 'string' ? claimed : event.payload['resolved_by'];
  return typeof named === 'string' ? named : undefined;
}

/** The outcome of the check: a director's decision that holds, a resolution that needs none, or a refusal with its code. */
export type ResolutionCheck =
  | { readonly ok: true; readonly signed: false }
  | { readonly ok: true; readonly signed: true; readonly resolution: ApprovalResolution; readonly signer: PrincipalHistory; readonly key: BundleKey }
  | { readonly ok: false; readonly code: ResolutionAuthorityCode; readonly message: string; readonly details: Readonly<Record<string, unknown>> };

/** A principal's history as the log holds it now (undefined: not registered); throws when the log cannot be read. */
export type PrincipalHistoryLookup = (principalId: string) => Promise<PrincipalHistory | undefined> | PrincipalHistory | undefined;

/**
 * Whether the signer's registration (and the key it signed with) was itself authorized, back
 * to a trust anchor (`RegistrationAuthority.registrationCheck()`, registration-authority.ts).
 * Returns why not, or undefined when it was.
 * Without one, a registration in the log is taken as the log holds it.
 */
export type RegistrationCheck = (signer: PrincipalHistory, key?: BundleKey) => Promise<string | undefined> | string | undefined;

export interface ResolutionCheckOptions {
  readonly registration?: RegistrationCheck;
}

type Refused = Extract<ResolutionCheck, { ok: false }>;
const refuse = (code: ResolutionAuthorityCode, message: string, details: Record<string, unknown> = {}): Refused => ({ ok: false, code, message, details });

/**
 * Checks one resolution event against the approval it answers and the signer's history
 * (see the module comment). Resolutions that are not a director's decision (expiry by the
 * timer, cancellation, invalidation) authorize nothing and carry no authority to check:
 * `{ ok: true, signed: false }`.
 */
export async function checkResolutionAuthority(
  event: Pick<EventEnvelope, 'event_id' | 'event_type' | 'payload'>,
  approval: ResolvedApproval,
  lookup: PrincipalHistoryLookup,
  options: ResolutionCheckOptions = {},
): Promise<ResolutionCheck> {
  const decision = DECISION_OF[event.event_type];
  if (decision === undefined) return { ok: true, signed: false };
  const about = { event_id: event.event_id, approval_id: approval.approval_id };
  const jws = event.payload['resolution_jws'];
  if (typeof jws !== 'string' || jws === '') {
    return refuse('APPROVAL_RESOLUTION_UNSIGNED', `${event.event_type} ${event.event_id} carries no director's signed resolution: it authorizes nothing`, about);
  }
  const claimed = ApprovalResolution.safeParse(unverifiedJwsClaims(jws));
  if (!claimed.success) {
    return refuse('APPROVAL_RESOLUTION_SIGNATURE_INVALID', `the resolution on ${event.event_id} is not a compact JWS over an ApprovalResolution`, { ...about, reason: 'not_an_approval_resolution' });
  }
  const signer = await lookup(claimed.data.resolved_by);
  if (signer === undefined) {
    return refuse('APPROVAL_RESOLUTION_NOT_DIRECTOR', `${claimed.data.resolved_by}, who signed the resolution on ${event.event_id}, is not a registered principal`, {
      ...about,
      principal_id: claimed.data.resolved_by,
      reason: 'unknown_principal',
    });
  }
  let verified: { kid: string; payload: unknown };
  try {
    const result = await verifyJws(jws, await keySetOfJwks(signer.keys.map((key) => key.jwk)));
    verified = { kid: result.kid, payload: JSON.parse(new TextDecoder().decode(result.payload)) as unknown };
  } catch (error) {
    const reason = error instanceof WritError ? error.code : 'unverifiable';
    return refuse('APPROVAL_RESOLUTION_SIGNATURE_INVALID', `the resolution on ${event.event_id} does not verify under any key ${signer.principal_id} ever held`, {
      ...about,
      principal_id: signer.principal_id,
      reason,
    });
  }
  const parsed = ApprovalResolution.safeParse(verified.payload);
  if (!parsed.success || parsed.data.resolved_by !== signer.principal_id) {
    return refuse('APPROVAL_RESOLUTION_SIGNATURE_INVALID', `the verified resolution on ${event.event_id} is not an ApprovalResolution by ${signer.principal_id}`, { ...about, reason: 'signer_changed' });
  }
  const resolution = parsed.data;
  if (resolution.approval_id !== approval.approval_id) {
    return refuse('APPROVAL_RESOLUTION_MISMATCH', `the resolution on ${event.event_id} was signed for approval ${resolution.approval_id}, not ${approval.approval_id}`, {
      ...about,
      signed_approval_id: resolution.approval_id,
      reason: 'other_approval',
    });
  }
  if (resolution.decision !== decision) {
    return refuse('APPROVAL_RESOLUTION_MISMATCH', `${event.event_type} ${event.event_id} carries a signed ${resolution.decision}`, { ...about, signed_decision: resolution.decision, reason: 'other_decision' });
  }
  if (event.payload['resolved_by'] !== resolution.resolved_by) {
    return refuse('APPROVAL_RESOLUTION_MISMATCH', `${event.event_id} names ${String(event.payload['resolved_by'])} as resolver, the signature is ${resolution.resolved_by}'s`, {
      ...about,
      reason: 'other_resolver',
    });
  }
  const signedAt = Date.parse(resolution.resolved_at);
  const opens = Date.parse(approval.requested_at) - RESOLUTION_CLOCK_SKEW_MS;
  const closes = Date.parse(approval.expires_at) + RESOLUTION_CLOCK_SKEW_MS;
  if (!(signedAt >= opens && signedAt <= closes)) {
    return refuse(
      'APPROVAL_RESOLUTION_TIME_INVALID',
      `the resolution on ${event.event_id} was signed at ${resolution.resolved_at}, while approval ${approval.approval_id} was pending only from ${approval.requested_at} to ${approval.expires_at}`,
      { ...about, resolved_at: resolution.resolved_at, requested_at: approval.requested_at, expires_at: approval.expires_at },
    );
  }
  const key = signer.keys.find((candidate) => candidate.jwk.kid === verified.kid) as BundleKey;
  const validUntil = key.valid_until === null ? Number.POSITIVE_INFINITY : Date.parse(key.valid_until);
  // Revoked before the approval even existed, the key could not have signed while it was pending, whatever `resolved_at` says.
  const revokedBeforeRequest = Date.parse(approval.requested_at) >= validUntil;
  if (revokedBeforeRequest || !(signedAt >= Date.parse(key.valid_from) - RESOLUTION_CLOCK_SKEW_MS && signedAt < validUntil)) {
    return refuse('APPROVAL_RESOLUTION_KEY_NOT_VALID', `key ${key.jwk.kid} of ${signer.principal_id} was not valid at ${resolution.resolved_at} (${describeWindow(key)})`, {
      ...about,
      principal_id: signer.principal_id,
      kid: key.jwk.kid,
      valid_from: key.valid_from,
      valid_until: key.valid_until,
    });
  }
  if (signer.principal_id === approval.requested_by) {
    return refuse('APPROVAL_RESOLUTION_BY_REQUESTER', `${signer.principal_id} requested the action and may not resolve its approval`, { ...about, principal_id: signer.principal_id });
  }
  // Roles are fixed at registration, and a key valid when it signed was registered (or added) by then: the role was held then.
  if (signer.principal_type === 'agent' || !signer.roles.includes(DIRECTOR)) {
    const reason = signer.principal_type === 'agent' ? 'agent' : 'role_missing';
    return refuse('APPROVAL_RESOLUTION_NOT_DIRECTOR', `${signer.principal_id} was not a director (never an agent) when it signed the resolution on ${event.event_id}`, {
      ...about,
      principal_id: signer.principal_id,
      roles: signer.roles,
      reason,
    });
  }
  const unauthorized = await options.registration?.(signer, key);
  if (unauthorized !== undefined) {
    return refuse('APPROVAL_RESOLUTION_NOT_DIRECTOR', `the registration of ${signer.principal_id} is not authorized: ${unauthorized}`, { ...about, principal_id: signer.principal_id, reason: 'registration_unauthorized' });
  }
  const expected = packetHashOfRef(approval.approval_packet_ref);
  if (resolution.packet_hash !== expected) {
    return refuse(
      'APPROVAL_RESOLUTION_PACKET_STALE',
      `the resolution on ${event.event_id} signs packet ${resolution.packet_hash}; approval ${approval.approval_id}'s packet is ${expected ?? approval.approval_packet_ref}`,
      { ...about, signed_packet_hash: resolution.packet_hash, packet_ref: approval.approval_packet_ref },
    );
  }
  return { ok: true, signed: true, resolution, signer, key };
}

/** A director's resolution in a task's log that failed its check, and where it sits. */
export interface ResolutionRefusal {
  readonly event_id: string;
  readonly event_type: string;
  readonly approval_id: string;
  readonly step_id?: string;
  readonly attempt_id?: string;
  readonly code: ResolutionAuthorityCode;
  readonly message: string;
  readonly details: Readonly<Record<string, unknown>>;
}

/** Principals' histories as the log holds them now (`PrincipalRegistry.history` fits). */
export interface PrincipalHistorySource {
  history(principalId: string): Promise<PrincipalHistory | undefined>;
}

export interface ResolutionAuthorityOptions extends ResolutionCheckOptions {
  /** Checks kept by event hash (a verdict depends only on the log: it never changes). Default 4096. */
  readonly cacheSize?: number;
}

/**
 * The check for a service that acts on a task's events: which director decisions among
 * them fail their authority check. A verdict is kept per event hash, so the orchestrator's
 * fold of a whole task on every event verifies each resolution once (a refusal for an
 * unregistered signer is not kept: the principal may be registered since).
 */
export class ResolutionAuthority {
  readonly #cache = new Map<string, ResolutionCheck>();
  readonly #cacheSize: number;

  constructor(
    private readonly source: PrincipalHistorySource,
    private readonly options: ResolutionAuthorityOptions = {},
  ) {
    this.#cacheSize = options.cacheSize ?? 4096;
  }

  /** The director decisions among the task's `events` that are refused, by event id (empty: all hold). */
  async refusals(events: readonly EventEnvelope[]): Promise<Map<string, ResolutionRefusal>> {
    const refusals = new Map<string, ResolutionRefusal>();
    const histories = new Map<string, Promise<PrincipalHistory | undefined>>();
    const lookup = (principalId: string) => {
      let found = histories.get(principalId);
      if (found === undefined) {
        found = this.source.history(principalId);
        histories.set(principalId, found);
      }
      return found;
    };
    for (const event of events) {
      if (!DIRECTOR_DECISIONS.includes(event.event_type)) continue;
      const approvalId = approvalIdOf(event) ?? '';
      const approval = requestedApproval(events, approvalId);
      // A decision on no (well-formed) requested approval answers nothing a director was shown: refused, whoever reads it loosely.
      const check: ResolutionCheck =
        approval === undefined
          ? { ok: false, code: 'APPROVAL_RESOLUTION_MISMATCH', message: `${event.event_type} ${event.event_id} resolves no requested approval of the task`, details: { reason: 'no_requested_approval' } }
          : await this.#check(event, approval, lookup);
      if (check.ok) continue;
      refusals.set(event.event_id, {
        event_id: event.event_id,
        event_type: event.event_type,
        approval_id: approvalId,
        ...(event.step_id === undefined ? {} : { step_id: event.step_id }),
        ...(event.attempt_id === undefined ? {} : { attempt_id: event.attempt_id }),
        code: check.code,
        message: check.message,
        details: check.details,
      });
    }
    return refusals;
  }

  async #check(event: EventEnvelope, approval: ResolvedApproval, lookup: PrincipalHistoryLookup): Promise<ResolutionCheck> {
    const cached = this.#cache.get(event.hash);
    if (cached !== undefined) return cached;
    const check = await checkResolutionAuthority(event, approval, lookup, this.options);
    if (check.ok || check.details['reason'] !== 'unknown_principal') {
      if (this.#cache.size >= this.#cacheSize) this.#cache.delete(this.#cache.keys().next().value as string);
      this.#cache.set(event.hash, check);
    }
    return check;
  }
}
