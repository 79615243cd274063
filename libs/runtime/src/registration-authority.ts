import {
  PRINCIPAL_REGISTRATION_JWS_TYPE,
  PrincipalKeyAdded,
  PrincipalRegistered,
  PrincipalRegistration,
  SERVICE_ENROLLMENT_JWS_TYPE,
  ServiceEnrollment,
  WritError,
  type BundleKey,
  type EventEnvelope,
  type TrustAnchor,
} from '@writ/contracts';
import { verifyJws, type KeySet } from '@writ/crypto';
import { keySetOfJwks, unverifiedJwsClaims } from './jws-inspection.js';
import { keyWindows, keyValidAt, type KeyWindow } from './key-history.js';
import type { PrincipalHistory, RegistrationCheck } from './resolution-authority.js';

/**
 * Whether a principal's registration, keys and roles were authorized back to the
 * deployment's trust anchor (issue 12: nothing is trusted for merely being in the log).
 * Pure: it reads only the principals' events, as the log (or a bundle) holds them, and
 * the trust anchor; the verdict is the same for every reader, today and on a replay.
 *
 * Each `principal.registered` (its roles and keys) and each `principal.key_added` (its key)
 * must carry an `authorization`:
 *
 * - an operator-signed PrincipalRegistration (`writ principal add`, typ
 *   writ-principal-registration+jws) that matches the event: same principal, type, roles
 *   (a registration), the key among the signed keys, `registered_by` and `at` the signed
 *   ones, appended within the ingress's freshness window of when it was signed (an event's
 *   `occurred_at` is the ingress clock); or
 * - for a principal of type `service` registering or rotating its own keys, an operator-signed
 *   ServiceEnrollment (`writ init`, typ writ-service-enrollment+jws) naming this principal,
 *   signed before the event, with the event's roles among the enrolled ones.
 *
 * The signer must have been an operator when it signed: the trust anchor's principal
 * verifying under an anchor key, or a principal registered with the `operator` role (never
 * an agent) whose registration is itself authorized, verifying under a key that was valid
 * at the signing time and whose own addition is authorized — recursively, until the chain
 * ends at the anchor (a cycle or a chain longer than MAX_CHAIN never does).
 *
 * Revocations (`principal.key_revoked`) only ever take authority away: they are honoured as
 * the log holds them, whoever appended them.
 */

/** Why a registration, a key or a role is not authorized. Closed: callers branch on it. */
export type RegistrationAuthorityCode =
  /** The event carries no `authorization` (appended by a bus credential, not through an operator). */
  | 'REGISTRATION_UNSIGNED'
  /** The authorization is not a compact JWS of the expected kind, or does not verify under any key its signer ever held. */
  | 'REGISTRATION_SIGNATURE_INVALID'
  /** The signer was not an operator when it signed: unknown, no operator role, an agent, or its key was not valid then (added later, revoked before). */
  | 'REGISTRATION_SIGNER_NOT_OPERATOR'
  /** The signer held the role, but its own registration (or the key it signed with) is not authorized. */
  | 'REGISTRATION_SIGNER_UNAUTHORIZED'
  /** The signed request does not match the event (another principal, key, roles, type, signer or time), or is not fresh. */
  | 'REGISTRATION_MISMATCH'
  /** The chain of signers does not end at the trust anchor (no anchor given, a cycle, or too long). */
  | 'REGISTRATION_NOT_ANCHORED';

export const REGISTRATION_AUTHORITY_CODES: readonly RegistrationAuthorityCode[] = Object.freeze([
  'REGISTRATION_UNSIGNED',
  'REGISTRATION_SIGNATURE_INVALID',
  'REGISTRATION_SIGNER_NOT_OPERATOR',
  'REGISTRATION_SIGNER_UNAUTHORIZED',
  'REGISTRATION_MISMATCH',
  'REGISTRATION_NOT_ANCHORED',
]);

/** How far the signing time of a registration may lie from when it was appended: the ingress's freshness (REGISTRATION_FRESHNESS_SECONDS). */
export const REGISTRATION_FRESHNESS_MS = 300_000;
/** The longest chain of operators registering operators checked (past it: REGISTRATION_NOT_ANCHORED). */
export const MAX_CHAIN = 16;

/** A verdict on one registration event (or the key or roles it brought). */
export type AuthorityVerdict =
  | { readonly ok: true; readonly via: 'anchor' | 'operator' | 'enrollment'; readonly signer: string; readonly event_type: string }
  | { readonly ok: false; readonly code: RegistrationAuthorityCode; readonly message: string; readonly details: Readonly<Record<string, unknown>> };

/** What the check says of one principal. */
export interface PrincipalAuthority {
  readonly principal_id: string;
  /** Its `principal.registered` (type and roles); undefined when it was never (validly) registered. */
  readonly registration: AuthorityVerdict | undefined;
  /** Each key it ever held, by kid: whether the event that brought it was authorized. */
  readonly keys: ReadonlyMap<string, AuthorityVerdict>;
}

/** A principal event as the check reads it (`occurred_at`: when it was appended, for freshness). */
export type PrincipalEventLike = Pick<EventEnvelope, 'event_type' | 'payload'> & { readonly occurred_at?: string };

/** The events of a principal (`writ.evt.principal.<id>`, in order); undefined or empty when the log holds none. */
export type PrincipalEventsLookup = (principalId: string) => Promise<readonly PrincipalEventLike[] | undefined> | readonly PrincipalEventLike[] | undefined;

type Refusal = Extract<AuthorityVerdict, { ok: false }>;
const refuse = (code: RegistrationAuthorityCode, message: string, details: Record<string, unknown> = {}): Refusal => ({ ok: false, code, message, details });

/** The first event that brought each kid, and the registration. */
interface Introduced {
  readonly events: readonly PrincipalEventLike[];
  readonly registered?: { readonly event: PrincipalEventLike; readonly payload: PrincipalRegistered };
  readonly keys: Map<string, { readonly event: PrincipalEventLike; readonly payload: PrincipalRegistered | PrincipalKeyAdded }>;
  readonly windows: readonly KeyWindow[];
}

function introduced(principalId: string, events: readonly PrincipalEventLike[]): Introduced {
  let registered: Introduced['registered'];
  const keys: Introduced['keys'] = new Map();
  for (const event of events) {
    if (event.event_type === 'principal.registered') {
      const parsed = PrincipalRegistered.safeParse(event.payload);
      // The first registration stands (the fold's rule); a later one changes nothing.
      if (!parsed.success || registered !== undefined || parsed.data.principal_id !== principalId) continue;
      registered = { event, payload: parsed.data };
      for (const key of parsed.data.keys) if (!keys.has(key.kid)) keys.set(key.kid, { event, payload: parsed.data });
    } else if (event.event_type === 'principal.key_added') {
      const parsed = PrincipalKeyAdded.safeParse(event.payload);
      if (parsed.success && registered !== undefined && !keys.has(parsed.data.key.kid)) keys.set(parsed.data.key.kid, { event, payload: parsed.data });
    }
  }
  return { events, ...(registered === undefined ? {} : { registered }), keys, windows: keyWindows(events) };
}

const sameSet = (a: readonly string[], b: readonly string[]) => [...new Set(a)].sort().join(',') === [...new Set(b)].sort().join(',');

/**
 * The check over a set of principals' events and one trust anchor, memoized per principal
 * (a reader checks a whole bundle, or every grant, against one instance). `anchor` undefined:
 * nothing chains (every verdict is REGISTRATION_NOT_ANCHORED) — a reader with no anchor
 * cannot say any registration was authorized.
 */
export class RegistrationAuthority {
  /** Each principal's events, read once. */
  readonly #events = new Map<string, Promise<Introduced>>();
  /** Settled verdicts by event (`<principal>#<position>`): an event's verdict never changes (only fully computed ones are kept). */
  readonly #verdicts = new Map<string, AuthorityVerdict>();
  #anchorKeys: Promise<KeySet> | undefined;

  constructor(
    private readonly lookup: PrincipalEventsLookup,
    private readonly anchor: TrustAnchor | undefined,
  ) {}

  /** What the check says of the principal (undefined: the log holds no registration of it). */
  async check(principalId: string): Promise<PrincipalAuthority | undefined> {
    const intro = await this.#introduced(principalId);
    if (intro.registered === undefined) return undefined;
    const registration = await this.#verdict(principalId, intro, intro.registered.event, []);
    const keys = new Map<string, AuthorityVerdict>();
    for (const [kid, { event }] of intro.keys) keys.set(kid, await this.#verdict(principalId, intro, event, []));
    return { principal_id: principalId, registration, keys };
  }

  /** Undefined when the key `kid` of the principal was authorized when it was added; else the refusal. */
  async key(principalId: string, kid: string): Promise<Refusal | undefined> {
    const intro = await this.#introduced(principalId);
    const brought = intro.keys.get(kid);
    if (intro.registered === undefined || brought === undefined) {
      return refuse('REGISTRATION_UNSIGNED', `${principalId} has no key ${kid} in the log`, { principal_id: principalId, kid, reason: 'unknown_key' });
    }
    const verdict = await this.#verdict(principalId, intro, brought.event, []);
    return verdict.ok ? undefined : verdict;
  }

  /**
   * The `RegistrationCheck` seam of resolution-authority.ts: the signer's registration (its
   * roles) and the key it signed with were authorized back to the anchor; why not, in words
   * that start with the stable code.
   */
  registrationCheck(): RegistrationCheck {
    return async (signer: PrincipalHistory, key?: BundleKey) => {
      const intro = await this.#introduced(signer.principal_id);
      if (intro.registered === undefined) return `REGISTRATION_UNSIGNED: ${signer.principal_id} has no registration`;
      const registration = await this.#verdict(signer.principal_id, intro, intro.registered.event, []);
      if (!registration.ok) return `${registration.code}: ${registration.message}`;
      if (key !== undefined) {
        const refused = await this.key(signer.principal_id, key.jwk.kid);
        if (refused !== undefined) return `${refused.code}: ${refused.message}`;
      }
      return undefined;
    };
  }

  #introduced(principalId: string): Promise<Introduced> {
    let found = this.#events.get(principalId);
    if (found === undefined) {
      found = Promise.resolve(this.lookup(principalId)).then((events) => introduced(principalId, events ?? []));
      this.#events.set(principalId, found);
      // A failed read is not kept: the next check reads again.
      found.catch(() => this.#events.delete(principalId));
    }
    return found;
  }

  /** The verdict on one registration event; `chain`: the events whose verdict waits on this one (a cycle never ends at the anchor). */
  async #verdict(principalId: string, intro: Introduced, event: PrincipalEventLike, chain: readonly string[]): Promise<AuthorityVerdict> {
    const id = `${principalId}#${intro.events.indexOf(event)}`;
    const settled = this.#verdicts.get(id);
    if (settled !== undefined) return settled;
    const verdict = await this.#event(principalId, intro, event, [...chain, id]);
    this.#verdicts.set(id, verdict);
    return verdict;
  }

  /** One event: its authorization verified, matched to the event, and its signer's authority at the signing time. */
  async #event(principalId: string, intro: Introduced, event: PrincipalEventLike, chain: readonly string[]): Promise<AuthorityVerdict> {
    const registration = intro.registered?.payload as PrincipalRegistered;
    const payload = event.event_type === 'principal.registered' ? registration : (PrincipalKeyAdded.parse(event.payload) as PrincipalKeyAdded);
    const kid = event.event_type === 'principal.key_added' ? (payload as PrincipalKeyAdded).key.kid : undefined;
    const about = { principal_id: principalId, event_type: event.event_type, ...(kid === undefined ? {} : { kid }) };
    const what = `${event.event_type} of ${principalId}${kid === undefined ? '' : ` (key ${kid})`}`;
    const jws = payload.authorization;
    if (jws === undefined) return refuse('REGISTRATION_UNSIGNED', `${what} carries no operator's authorization`, about);
    const header = unverifiedHeader(jws);
    const claims = unverifiedJwsClaims(jws);
    if (header?.typ === SERVICE_ENROLLMENT_JWS_TYPE) {
      const enrollment = ServiceEnrollment.safeParse(claims);
      if (!enrollment.success) return refuse('REGISTRATION_SIGNATURE_INVALID', `the authorization of ${what} is not a ServiceEnrollment`, { ...about, reason: 'not_a_service_enrollment' });
      const mismatch = matchEnrollment(enrollment.data, registration, event, payload);
      if (mismatch !== undefined) return refuse('REGISTRATION_MISMATCH', `the enrollment on ${what} ${mismatch}`, { ...about, reason: 'enrollment_mismatch' });
      return this.#signer(jws, SERVICE_ENROLLMENT_JWS_TYPE, enrollment.data.enrolled_by, enrollment.data.enrolled_at, what, about, chain, 'enrollment');
    }
    const signed = PrincipalRegistration.safeParse(claims);
    if (!signed.success) return refuse('REGISTRATION_SIGNATURE_INVALID', `the authorization of ${what} is not a PrincipalRegistration`, { ...about, reason: 'not_a_principal_registration' });
    const mismatch = matchRegistration(signed.data, principalId, registration, event, payload);
    if (mismatch !== undefined) return refuse('REGISTRATION_MISMATCH', `the signed registration on ${what} ${mismatch}`, { ...about, reason: 'registration_mismatch' });
    return this.#signer(jws, PRINCIPAL_REGISTRATION_JWS_TYPE, signed.data.registered_by, signed.data.registered_at, what, about, chain, 'operator');
  }

  /** The JWS verifies under a key its claimed signer held at `signedAt`, and that signer was an operator then, back to the anchor. */
  async #signer(
    jws: string,
    typ: string,
    signerId: string,
    signedAt: string,
    what: string,
    about: Record<string, unknown>,
    chain: readonly string[],
    via: 'operator' | 'enrollment',
  ): Promise<AuthorityVerdict> {
    const details = { ...about, signer: signerId, signed_at: signedAt };
    const eventType = String(about['event_type']);
    if (this.anchor === undefined) return refuse('REGISTRATION_NOT_ANCHORED', `no trust anchor to check ${what} against`, { ...details, reason: 'no_anchor' });
    if (signerId === this.anchor.principal_id) {
      const anchor = this.anchor;
      this.#anchorKeys ??= keySetOfJwks(anchor.keys);
      try {
        await verifyJws(jws, await this.#anchorKeys, { typ });
        return { ok: true, via: via === 'enrollment' ? 'enrollment' : 'anchor', signer: signerId, event_type: eventType };
      } catch {
        // Not an anchor key: perhaps a key the anchor's principal was given in the log, checked below like any operator's.
      }
    }
    const signer = await this.#introduced(signerId);
    if (signer.registered === undefined && signerId === this.anchor.principal_id) {
      return refuse('REGISTRATION_SIGNATURE_INVALID', `the authorization of ${what} does not verify under the trust anchor's keys`, { ...details, reason: 'not_an_anchor_key' });
    }
    if (signer.registered === undefined) {
      return refuse('REGISTRATION_SIGNER_NOT_OPERATOR', `${signerId}, who signed ${what}, is neither the trust anchor (under an anchor key) nor a registered principal`, {
        ...details,
        reason: 'unknown_principal',
      });
    }
    let kid: string;
    try {
      kid = (await verifyJws(jws, await keySetOfJwks(signer.windows.map((window) => window.jwk)), { typ })).kid;
    } catch (error) {
      return refuse('REGISTRATION_SIGNATURE_INVALID', `the authorization of ${what} does not verify under any key ${signerId} ever held`, {
        ...details,
        reason: error instanceof WritError ? error.code : 'unverifiable',
      });
    }
    const role = signer.registered.payload;
    if (role.principal_type === 'agent' || !role.roles.includes('operator')) {
      return refuse('REGISTRATION_SIGNER_NOT_OPERATOR', `${signerId}, who signed ${what}, was not an operator (roles ${role.roles.join(',') || '(none)'}, a ${role.principal_type})`, {
        ...details,
        roles: role.roles,
        reason: role.principal_type === 'agent' ? 'agent' : 'role_missing',
      });
    }
    const window = signer.windows.find((candidate) => candidate.jwk.kid === kid) as KeyWindow;
    if (!keyValidAt(window, signedAt)) {
      return refuse(
        'REGISTRATION_SIGNER_NOT_OPERATOR',
        `key ${kid} of ${signerId} was not valid at ${signedAt}, when it signed ${what} (valid from ${window.valid_from}${window.valid_until === null ? '' : ` until ${window.valid_until}`})`,
        { ...details, kid_used: kid, valid_from: window.valid_from, valid_until: window.valid_until, reason: 'key_not_valid_then' },
      );
    }
    // The signer's own registration (its operator role) and the key it signed with: authorized in turn.
    const needed = [signer.registered.event, (signer.keys.get(kid) as { event: PrincipalEventLike }).event];
    for (const event of new Set(needed)) {
      const id = `${signerId}#${signer.events.indexOf(event)}`;
      if (chain.includes(id) || chain.length >= MAX_CHAIN) {
        return refuse('REGISTRATION_NOT_ANCHORED', `the chain of signers of ${what} loops or runs past ${MAX_CHAIN} links without reaching the trust anchor ${this.anchor.principal_id}`, {
          ...details,
          chain: [...chain, id],
          reason: chain.includes(id) ? 'cycle' : 'too_long',
        });
      }
      const verdict = await this.#verdict(signerId, signer, event, chain);
      if (!verdict.ok) {
        const code = verdict.code === 'REGISTRATION_NOT_ANCHORED' ? 'REGISTRATION_NOT_ANCHORED' : 'REGISTRATION_SIGNER_UNAUTHORIZED';
        return refuse(code, `${signerId}, who signed ${what}, is not an authorized operator: ${verdict.code}: ${verdict.message}`, { ...details, kid_used: kid, cause: verdict.code });
      }
    }
    return { ok: true, via, signer: signerId, event_type: eventType };
  }
}

function unverifiedHeader(jws: string): { typ?: unknown } | undefined {
  const head = jws.split('.')[0];
  if (head === undefined || !/^[A-Za-z0-9_-]+$/.test(head)) return undefined;
  try {
    return JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as { typ?: unknown };
  } catch {
    return undefined;
  }
}

/** Why the signed PrincipalRegistration does not authorize this event (undefined: it does). */
function matchRegistration(signed: PrincipalRegistration, principalId: string, registration: PrincipalRegistered, event: PrincipalEventLike, payload: PrincipalRegistered | PrincipalKeyAdded): string | undefined {
  if (signed.principal_id !== principalId) return `names principal ${signed.principal_id}`;
  if (event.event_type === 'principal.registered') {
    const p = payload as PrincipalRegistered;
    if (signed.principal_type !== p.principal_type) return `registers a ${signed.principal_type}, the event a ${p.principal_type}`;
    if (!sameSet(signed.roles, p.roles)) return `grants roles ${signed.roles.join(',')}, the event ${p.roles.join(',') || '(none)'}`;
    const stray = p.keys.find((key) => !signed.keys.some((s) => s.kid === key.kid && s.x === key.x));
    if (stray !== undefined) return `does not name key ${stray.kid}`;
    if (signed.registered_by !== p.registered_by) return `is by ${signed.registered_by}, the event says ${p.registered_by}`;
    if (signed.registered_at !== p.at) return `was signed at ${signed.registered_at}, the event says ${p.at}`;
  } else {
    const p = payload as PrincipalKeyAdded;
    // A registration that adds keys restates the principal: its type and roles must be the registered ones.
    if (signed.principal_type !== registration.principal_type || !sameSet(signed.roles, registration.roles)) return `restates the principal with other type or roles than its registration`;
    if (!signed.keys.some((s) => s.kid === p.key.kid && s.x === p.key.x)) return `does not name key ${p.key.kid}`;
    if (signed.registered_by !== p.added_by) return `is by ${signed.registered_by}, the event says ${p.added_by}`;
    if (signed.registered_at !== p.at) return `was signed at ${signed.registered_at}, the event says ${p.at}`;
  }
  if (event.occurred_at !== undefined) {
    const skew = Math.abs(Date.parse(event.occurred_at) - Date.parse(signed.registered_at));
    if (!(skew <= REGISTRATION_FRESHNESS_MS)) return `was signed at ${signed.registered_at} and appended at ${event.occurred_at}: more than ${REGISTRATION_FRESHNESS_MS / 1000} s apart (a replay)`;
  }
  return undefined;
}

/** Why the ServiceEnrollment does not authorize this event (undefined: it does). */
function matchEnrollment(enrollment: ServiceEnrollment, registration: PrincipalRegistered, event: PrincipalEventLike, payload: PrincipalRegistered | PrincipalKeyAdded): string | undefined {
  if (enrollment.principal_id !== registration.principal_id) return `names principal ${enrollment.principal_id}`;
  if (registration.principal_type !== 'service') return `is for a service, ${registration.principal_id} is registered as a ${registration.principal_type}`;
  const extra = registration.roles.filter((role) => !enrollment.roles.includes(role));
  if (extra.length > 0) return `does not enroll the roles ${extra.join(',')}`;
  const at = event.event_type === 'principal.registered' ? (payload as PrincipalRegistered).at : (payload as PrincipalKeyAdded).at;
  if (!(Date.parse(enrollment.enrolled_at) <= Date.parse(at) + REGISTRATION_FRESHNESS_MS)) return `was signed at ${enrollment.enrolled_at}, after the key was added (${at})`;
  return undefined;
}

/**
 * Who the authorizations among a principal's events claim signed them (`registered_by` of a
 * PrincipalRegistration, `enrolled_by` of a ServiceEnrollment), read WITHOUT verifying anything:
 * only to know whose events a reader must fetch (a bundle carries them); the check decides.
 */
export function claimedAuthorizers(events: readonly PrincipalEventLike[]): string[] {
  const signers = new Set<string>();
  for (const event of events) {
    if (event.event_type !== 'principal.registered' && event.event_type !== 'principal.key_added') continue;
    const jws = (event.payload as { authorization?: unknown }).authorization;
    if (typeof jws !== 'string') continue;
    const claims = unverifiedJwsClaims(jws) as { registered_by?: unknown; enrolled_by?: unknown } | undefined;
    const signer = claims?.registered_by ?? claims?.enrolled_by;
    if (typeof signer === 'string') signers.add(signer);
  }
  return [...signers];
}

/**
 * The `RegistrationCheck` a long-running service passes to its ResolutionAuthority: each call
 * reads the principals' events afresh (a director registered a moment ago is seen) and checks
 * them back to `anchor`. ResolutionAuthority keeps each resolution's verdict, so it runs once per
 * resolution.
 */
export function anchoredRegistrationCheck(lookup: PrincipalEventsLookup, anchor: TrustAnchor): RegistrationCheck {
  return (signer, key) => new RegistrationAuthority(lookup, anchor).registrationCheck()(signer, key);
}
