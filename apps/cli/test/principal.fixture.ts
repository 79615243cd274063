import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { PrincipalRole, PrincipalType, PublicEd25519Jwk } from '@writ/contracts';
import { importEd25519PrivateJwk } from '@writ/crypto';
import type { EventStore } from '@writ/eventstore';
import { SIGNED_REQUESTS, decideRegistration, signRequest } from '@writ/runtime';

/**
 * Registers a principal straight into a test's log, exactly as ingress records an
 * operator-signed registration (`principal.registered` carrying the operator's
 * signed PrincipalRegistration as `authorization`), for CLI tests whose subject
 * is not registration and that run no ingress. The operator is the one `npm test`
 * names (WRIT_OPERATOR_ID / WRIT_OPERATOR_KEY, from `writ init`).
 */
export async function registerInLog(
  store: EventStore,
  principal: { readonly id: string; readonly type: PrincipalType; readonly roles: readonly PrincipalRole[]; readonly jwk: PublicEd25519Jwk },
): Promise<void> {
  const keyFile = process.env['WRIT_OPERATOR_KEY'];
  if (keyFile === undefined) throw new Error('WRIT_OPERATOR_KEY is not set: run the tests through npm test (it points it at var/writ, made by writ init)');
  const key = await importEd25519PrivateJwk(JSON.parse(await readFile(keyFile, 'utf8')) as Record<string, unknown>);
  const registeredBy = process.env['WRIT_OPERATOR_ID'] ?? 'operator';
  const { payload, jws } = await signRequest(
    SIGNED_REQUESTS.principalRegistration,
    { principal_id: principal.id, principal_type: principal.type, display_name: principal.id, roles: [...principal.roles], keys: [principal.jwk] },
    { principalId: registeredBy, key, now: new Date() },
  );
  const decision = decideRegistration(undefined, payload, jws);
  if (decision.outcome !== 'registered') throw new Error(`unexpected registration outcome ${decision.outcome}`);
  await store.appendToEntity(
    'principal',
    principal.id,
    [
      {
        event_id: randomUUID(),
        schema_version: 1,
        event_type: 'principal.registered',
        entity_type: 'principal',
        entity_id: principal.id,
        occurred_at: payload.registered_at,
        actor_type: 'user',
        actor_id: registeredBy,
        causation_id: null,
        correlation_id: principal.id,
        payload: decision.payload,
        idempotency_key: `principal.registered:${principal.id}`,
      },
    ],
    0,
  );
}
