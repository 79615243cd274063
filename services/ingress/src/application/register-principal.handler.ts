import { randomUUID } from 'node:crypto';
import { PrincipalKeyRevoked, hasErrorCode, parseContract, type PrincipalRegistrationOutcome, type PrincipalRevocationOutcome, type RegisterPrincipal, type RevokePrincipal } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';
import {
  SIGNED_REQUESTS,
  decideRegistration,
  evolvePrincipal,
  verifySignedRequest,
  type PrincipalRecord,
  type SignedRequestFailureReason,
  type SignedRequestKind,
  type SignedRequestPrincipals,
} from '@writ/runtime';
import type { z } from 'zod';
import type { Logger } from '@writ/telemetry';
import { IngressError, type IngressErrorCode } from '../ingress-errors.js';
import type { Clock } from './ports.js';

/** How far `registered_at` may lie from the clock: a captured registration cannot be replayed later. */
export const REGISTRATION_FRESHNESS_SECONDS = 300;
const CONFLICT_RETRIES = 3;

const REFUSALS: Record<SignedRequestFailureReason, IngressErrorCode> = {
  signature_invalid: 'INGRESS_ADMIN_SIGNATURE_INVALID',
  signer_not_allowed: 'INGRESS_ADMIN_FORBIDDEN',
  stale: 'INGRESS_ADMIN_STALE',
  contract_invalid: 'INGRESS_ADMIN_SIGNATURE_INVALID',
};

export interface RegisterPrincipalDeps {
  readonly store: EventStore;
  /** The log's principals with the trust anchor's operator over them (TrustAnchoredPrincipals). */
  readonly principals: SignedRequestPrincipals<PrincipalRecord>;
  /** The service principals' ids: their keys are registered by the services themselves, never through here. */
  readonly servicePrincipals: ReadonlySet<string>;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * `<root>.qry.ingress.register-principal`: an operator-signed
 * PrincipalRegistration, verified here (signature under a key the signer holds,
 * the signer an operator or the trust anchor, signed within five minutes), then
 * decided against the principal as the log says (`decideRegistration`) and
 * appended with the JWS as its `authorization`. Any refusal appends nothing and
 * answers a stable code: INGRESS_ADMIN_SIGNATURE_INVALID, INGRESS_ADMIN_FORBIDDEN,
 * INGRESS_ADMIN_STALE, INGRESS_PRINCIPAL_CONFLICT.
 */
export class RegisterPrincipalHandler {
  constructor(private readonly deps: RegisterPrincipalDeps) {}

  async register(request: RegisterPrincipal): Promise<PrincipalRegistrationOutcome> {
    const payload = await this.#verified(request.jws, SIGNED_REQUESTS.principalRegistration);
    this.#refuseService(payload.principal_id);
    const outcome = await this.#retrying(() => this.#append(payload.principal_id, payload, request.jws));
    this.deps.logger.info({ principal_id: payload.principal_id, registered_by: payload.registered_by, outcome: outcome.outcome, kids_added: outcome.kids_added }, 'principal registration applied');
    return outcome;
  }

  /**
   * `<root>.qry.ingress.revoke-principal`: an operator-signed PrincipalRevocation,
   * verified as a registration is; one `principal.key_revoked` per named (or
   * every active) key, carrying the JWS. Already revoked keys append nothing;
   * an unknown principal or kid is INGRESS_PRINCIPAL_CONFLICT.
   */
  async revoke(request: RevokePrincipal): Promise<PrincipalRevocationOutcome> {
    const payload = await this.#verified(request.jws, SIGNED_REQUESTS.principalRevocation);
    this.#refuseService(payload.principal_id);
    const outcome = await this.#retrying(async () => {
      const events = await this.deps.store.readEntity('principal', payload.principal_id);
      let record: PrincipalRecord | undefined;
      for (const { event } of events) record = evolvePrincipal(record, event);
      if (record === undefined) throw new IngressError('INGRESS_PRINCIPAL_CONFLICT', `there is no principal ${payload.principal_id} to revoke`, { details: { principal_id: payload.principal_id } });
      const known = record;
      const kids = payload.kids ?? [...known.keys.keys()];
      const unknown = kids.filter((kid) => !known.keys.has(kid) && !known.revoked_kids.has(kid));
      if (unknown.length > 0) throw new IngressError('INGRESS_PRINCIPAL_CONFLICT', `${payload.principal_id} has no key ${unknown.join(', ')}`, { details: { principal_id: payload.principal_id, kids: unknown } });
      const revoking = kids.filter((kid) => known.keys.has(kid));
      if (revoking.length > 0) {
        await this.deps.store.appendToEntity(
          'principal',
          payload.principal_id,
          revoking.map((kid) => ({
            ...this.#base(payload.principal_id, payload.revoked_by),
            event_id: randomUUID(),
            event_type: 'principal.key_revoked',
            payload: parseContract('PrincipalKeyRevoked', PrincipalKeyRevoked, { kid, reason: payload.reason, revoked_by: payload.revoked_by, at: payload.revoked_at, authorization: request.jws }),
            idempotency_key: `principal.key_revoked:${payload.principal_id}:${kid}`,
          })),
          events.at(-1)?.event.task_seq ?? 0,
        );
      }
      return { principal_id: payload.principal_id, kids_revoked: revoking };
    });
    this.deps.logger.info({ principal_id: payload.principal_id, revoked_by: payload.revoked_by, kids_revoked: outcome.kids_revoked }, 'principal revocation applied');
    return outcome;
  }

  async #verified<S extends z.ZodType>(jws: string, kind: SignedRequestKind<S>): Promise<z.output<S>> {
    const { payload } = await verifySignedRequest(jws, { ...kind, signers: 'operator', freshnessSeconds: REGISTRATION_FRESHNESS_SECONDS }, {
      principals: this.deps.principals,
      clock: () => this.deps.clock.now(),
      failure: (reason, message, details, cause) => new IngressError(REFUSALS[reason], message, { details, cause }),
    });
    return payload;
  }

  #refuseService(principalId: string): void {
    if (this.deps.servicePrincipals.has(principalId)) {
      throw new IngressError('INGRESS_ADMIN_FORBIDDEN', `${principalId} is a Writ service principal: its keys are registered and rotated by the service itself (writ keys rotate)`, {
        details: { principal_id: principalId },
      });
    }
  }

  /** Someone appended to the principal meanwhile: read again and decide again (bounded). */
  async #retrying<T>(step: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await step();
      } catch (error) {
        if (!hasErrorCode(error, 'EVENTSTORE_CONFLICT') || attempt >= CONFLICT_RETRIES) throw error;
      }
    }
  }

  #base(principalId: string, actorId: string) {
    return {
      schema_version: 1,
      entity_type: 'principal' as const,
      entity_id: principalId,
      occurred_at: this.deps.clock.now().toISOString(),
      actor_type: 'user' as const,
      actor_id: actorId,
      causation_id: null,
      correlation_id: principalId,
    };
  }

  async #append(principalId: string, registration: Parameters<typeof decideRegistration>[1], jws: string): Promise<PrincipalRegistrationOutcome> {
    const events = await this.deps.store.readEntity('principal', principalId);
    let record: PrincipalRecord | undefined;
    for (const { event } of events) record = evolvePrincipal(record, event);
    const decision = decideRegistration(record, registration, jws);
    const expected = events.at(-1)?.event.task_seq ?? 0;
    const base = this.#base(principalId, registration.registered_by);
    switch (decision.outcome) {
      case 'conflict':
        throw new IngressError('INGRESS_PRINCIPAL_CONFLICT', decision.message, { details: { principal_id: principalId, conflict: decision.conflict } });
      case 'unchanged':
        return { principal_id: principalId, outcome: 'unchanged', kids_added: [] };
      case 'registered':
        await this.deps.store.appendToEntity(
          'principal',
          principalId,
          [{ ...base, event_id: randomUUID(), event_type: 'principal.registered', payload: decision.payload, idempotency_key: `principal.registered:${principalId}` }],
          expected,
        );
        return { principal_id: principalId, outcome: 'registered', kids_added: decision.payload.keys.map((key) => key.kid) };
      case 'key_added':
        await this.deps.store.appendToEntity(
          'principal',
          principalId,
          decision.payloads.map((payload) => ({ ...base, event_id: randomUUID(), event_type: 'principal.key_added', payload, idempotency_key: `principal.key_added:${principalId}:${payload.key.kid}` })),
          expected,
        );
        return { principal_id: principalId, outcome: 'key_added', kids_added: decision.payloads.map((payload) => payload.key.kid) };
    }
  }
}
