import { readFile } from 'node:fs/promises';
import { PrincipalKeyAdded, PrincipalRegistered, TrustAnchor, parseContract, type PrincipalRegistration, type PublicEd25519Jwk } from '@writ/contracts';
import { KeySet, importEd25519PublicJwk, type JwsSigner } from '@writ/crypto';
import type { PrincipalRecord } from './principal-registry.js';
import type { EventStore } from '@writ/eventstore';
import type { Logger } from '@writ/telemetry';
import { anchoredRegistrationCheck } from './registration-authority.js';
import type { RegistrationCheck } from './resolution-authority.js';
import { RuntimeError } from './runtime-errors.js';
import { SIGNED_REQUESTS, signRequest, type SignedRequestPrincipals } from './signed-request.js';

/** Why a registration cannot be applied to the principal the log describes. */
export type RegistrationConflict = 'type_differs' | 'roles_differ' | 'kid_revoked' | 'kid_reused';

/** What an authorized registration changes: the events to append, or why it cannot. */
export type RegistrationDecision =
  | { readonly outcome: 'registered'; readonly payload: PrincipalRegistered }
  | { readonly outcome: 'key_added'; readonly payloads: readonly PrincipalKeyAdded[] }
  | { readonly outcome: 'unchanged' }
  | { readonly outcome: 'conflict'; readonly conflict: RegistrationConflict; readonly message: string };

/**
 * Decides what an operator-signed registration appends, given the principal as
 * the log describes it (pure: the caller has verified the signature and the
 * signer's authority). A new principal is registered; an existing one gets the
 * keys it lacks; type and roles never change through it (no event says so, and
 * a replay must not grant a role), and a revoked kid never returns.
 */
export function decideRegistration(record: PrincipalRecord | undefined, registration: PrincipalRegistration, authorization: string): RegistrationDecision {
  if (record === undefined) {
    return {
      outcome: 'registered',
      payload: parseContract('PrincipalRegistered', PrincipalRegistered, {
        principal_id: registration.principal_id,
        principal_type: registration.principal_type,
        display_name: registration.display_name,
        roles: [...new Set(registration.roles)],
        keys: registration.keys,
        registered_by: registration.registered_by,
        at: registration.registered_at,
        authorization,
      }),
    };
  }
  const conflict = (kind: RegistrationConflict, why: string) => ({ outcome: 'conflict' as const, conflict: kind, message: `principal ${record.principal_id} exists ${why}` });
  if (record.principal_type !== registration.principal_type) return conflict('type_differs', `as ${record.principal_type}, not ${registration.principal_type}`);
  const roles = (list: readonly string[]) => [...new Set(list)].sort().join(',');
  if (roles(record.roles) !== roles(registration.roles)) return conflict('roles_differ', `with roles ${roles(record.roles) || '(none)'}, not ${roles(registration.roles)}`);
  const added: PublicEd25519Jwk[] = [];
  for (const jwk of registration.keys) {
    if (record.revoked_kids.has(jwk.kid)) return conflict('kid_revoked', `and key ${jwk.kid} was revoked; register the new key under a new kid`);
    const existing = record.keys.get(jwk.kid);
    if (existing !== undefined && existing.x !== jwk.x) return conflict('kid_reused', `with another key under kid ${jwk.kid}`);
    if (existing === undefined) added.push(jwk);
  }
  if (added.length === 0) return { outcome: 'unchanged' };
  return {
    outcome: 'key_added',
    payloads: added.map((key) => parseContract('PrincipalKeyAdded', PrincipalKeyAdded, { key, added_by: registration.registered_by, at: registration.registered_at, authorization })),
  };
}

/** Reads `WRIT_TRUST_ANCHOR`'s file; RUNTIME_CONFIG_INVALID naming the file when it is missing or malformed. */
export async function loadTrustAnchor(file: string): Promise<TrustAnchor> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new RuntimeError('RUNTIME_CONFIG_INVALID', `the trust anchor ${file} cannot be read: run \`writ init\` (it writes <WRIT_HOME>/trust-anchor.json) or fix WRIT_TRUST_ANCHOR`, { cause });
  }
  try {
    return parseContract('TrustAnchor', TrustAnchor, JSON.parse(text));
  } catch (cause) {
    throw new RuntimeError('RUNTIME_CONFIG_INVALID', `the trust anchor ${file} is not a TrustAnchor ({ principal_id, keys: [public Ed25519 JWK] })`, { cause });
  }
}

/**
 * The principals an administrative request is verified against: the log's
 * (`PrincipalRegistry` or ingress's directory), with the trust anchor's
 * principal holding the role `operator` and its anchor keys whatever the log
 * says, so the first operator can sign its own registration and no event in the
 * log can take the anchor's authority away or add a key to it unsigned.
 */
export class TrustAnchoredPrincipals implements SignedRequestPrincipals<PrincipalRecord> {
  #anchorKeys: KeySet | undefined;

  constructor(
    private readonly log: { lookup(principalId: string): Promise<PrincipalRecord | undefined>; verificationKeys(record: PrincipalRecord): Promise<KeySet> },
    /** None: only operators the log already holds administer (a deployment without `writ init`'s anchor). */
    private readonly anchor: TrustAnchor | undefined,
  ) {}

  async lookup(principalId: string): Promise<PrincipalRecord | undefined> {
    const record = await this.log.lookup(principalId);
    if (this.anchor === undefined || principalId !== this.anchor.principal_id) return record;
    return {
      principal_id: principalId,
      principal_type: record?.principal_type ?? 'user',
      display_name: record?.display_name ?? principalId,
      roles: [...new Set([...(record?.roles ?? []), 'operator' as const])],
      keys: new Map(this.anchor.keys.map((key) => [key.kid, key])),
      revoked_kids: new Set(),
    };
  }

  async verificationKeys(principalId: string): Promise<KeySet> {
    if (this.anchor !== undefined && principalId === this.anchor.principal_id) {
      const anchor = this.anchor;
      this.#anchorKeys ??= KeySet.of(await Promise.all(anchor.keys.map((key) => importEd25519PublicJwk(key))));
      return this.#anchorKeys;
    }
    const record = await this.log.lookup(principalId);
    return record === undefined ? KeySet.of([]) : this.log.verificationKeys(record);
  }
}

/**
 * The `principal.registered` payload ingress appends for a registration `by` signs now (the
 * signed PrincipalRegistration as its authorization): what `writ principal add` leads to, for
 * fixtures and tools that append a principal themselves.
 */
export async function signedPrincipalRegistration(
  fields: Pick<PrincipalRegistration, 'principal_id' | 'principal_type' | 'display_name' | 'roles' | 'keys'>,
  by: { readonly principalId: string; readonly key: JwsSigner; readonly now: Date },
): Promise<PrincipalRegistered> {
  const { payload, jws } = await signRequest(SIGNED_REQUESTS.principalRegistration, fields, by);
  const decision = decideRegistration(undefined, payload, jws);
  if (decision.outcome !== 'registered') throw new RuntimeError('RUNTIME_CONFIG_INVALID', `cannot register ${fields.principal_id}`);
  return decision.payload;
}

/**
 * What a service that acts on directors' resolutions passes its ResolutionAuthority: with the
 * trust anchor `anchorFile` names (WRIT_TRUST_ANCHOR), a `RegistrationCheck` that each director's
 * registration and key chain back to it (registration-authority.ts), read from the log at each
 * check; without one, none (logged: registrations are then taken as the log holds them).
 */
export async function resolutionRegistrationOptions(
  store: Pick<EventStore, 'readEntity'>,
  anchorFile: string | undefined,
  logger?: Pick<Logger, 'warn'>,
): Promise<{ registration?: RegistrationCheck }> {
  if (anchorFile === undefined || anchorFile === '') {
    logger?.warn("no WRIT_TRUST_ANCHOR: a director's registration is taken as the log holds it, not checked back to an operator (run writ init and set it)");
    return {};
  }
  const anchor = await loadTrustAnchor(anchorFile);
  return { registration: anchoredRegistrationCheck(async (id) => (await store.readEntity('principal', id)).map(({ event }) => event), anchor) };
}
