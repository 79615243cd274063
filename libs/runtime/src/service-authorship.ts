import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { AuthorService } from '@writ/contracts';
import { eventSealer, type AuthorshipOptions, type EventStore } from '@writ/eventstore';
import type { Ed25519SigningKey } from '@writ/crypto';
import { z } from 'zod';
import { DEFAULT_SERVICE_PRINCIPALS, WRIT_SERVICES } from './bus-auth/bus-permissions.js';
import { registerServicePrincipal } from './principal-registry.js';
import { RuntimeError } from './runtime-errors.js';
import { loadServiceEnrollment } from './service-enrollment.js';
import { loadOrCreateServiceKey } from './service-key.js';

/**
 * How a service proves what it appends and checks what it reads
 * (docs/security.md, "Authorship"), from its environment at boot:
 *
 * - `WRIT_AUTHORSHIP`: `enforce` — every read of the log quarantines an event
 *   whose seal does not prove a service allowed to author it
 *   (`QUARANTINE_AUTHOR_UNPROVEN`) and every append is refused that this
 *   service may not author; `off` — nothing is checked (events are sealed all
 *   the same). Every service of one deployment must say the same.
 * - `WRIT_SEAL_KEY_DIR`: where each service's sealing key lives
 *   (`<principal>.seal.jwk.json`, 0600, made on first start); default
 *   `$WRIT_HOME/keys`, else `/var/lib/writ/keys`. Approval and receipt seal
 *   with their rotating signing keys instead.
 * - `WRIT_<SERVICE>_PRINCIPAL_ID`: each service's principal (defaults as the
 *   bus permissions'), so that a reader knows which principal is which service.
 */
const Env = z.object({
  WRIT_AUTHORSHIP: z.enum(['enforce', 'off']).default('off'),
  WRIT_SEAL_KEY_DIR: z.string().min(1).optional(),
  WRIT_HOME: z.string().min(1).optional(),
  ...Object.fromEntries(WRIT_SERVICES.map((service) => [`WRIT_${service.toUpperCase()}_PRINCIPAL_ID`, z.string().min(1).max(128).optional()])),
});

export interface ServiceAuthorship {
  readonly enforce: boolean;
  /** What an event store checks authors against when enforcing (undefined when off). */
  readonly store: AuthorshipOptions | undefined;
  readonly servicePrincipals: Readonly<Record<AuthorService, string>>;
  /** The sealing key file of a service principal. */
  sealKeyFile(principalId: string): string;
}

/** Reads the authorship settings; RUNTIME_CONFIG_INVALID names the offending variable. */
export function serviceAuthorship(env: Readonly<Record<string, string | undefined>> = process.env): ServiceAuthorship {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RuntimeError('RUNTIME_CONFIG_INVALID', `${String(issue?.path[0] ?? 'environment')}: ${issue?.message ?? 'invalid'} (WRIT_AUTHORSHIP is enforce or off)`);
  }
  const values = parsed.data as z.infer<typeof Env> & Record<string, string | undefined>;
  const servicePrincipals = Object.fromEntries(
    WRIT_SERVICES.map((service) => [service, values[`WRIT_${service.toUpperCase()}_PRINCIPAL_ID`] ?? DEFAULT_SERVICE_PRINCIPALS[service]]),
  ) as Record<AuthorService, string>;
  const dir = values.WRIT_SEAL_KEY_DIR ?? (values.WRIT_HOME === undefined ? '/var/lib/writ/keys' : join(values.WRIT_HOME, 'keys'));
  const enforce = values.WRIT_AUTHORSHIP === 'enforce';
  return {
    enforce,
    store: enforce ? { servicePrincipals } : undefined,
    servicePrincipals,
    sealKeyFile: (principalId) => join(dir, `${principalId}.seal.jwk.json`),
  };
}

/**
 * Gives a service its sealing key (any service principal: loaded, or made on
 * first start) and makes sure the log registers it on the principal's own
 * subject, sealed by that key and authorized by the operator's enrollment of
 * the principal when `writ init` made one (so the key chains to the trust
 * anchor; found through `env`, the service's own environment); from then on `store` seals every event it appends. Returns the key.
 */
export async function useSealKey(
  store: EventStore,
  input: { readonly principalId: string; readonly displayName: string; readonly keyFile: string },
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<{ key: Ed25519SigningKey; created: boolean; registration: string }> {
  const { key, created } = await loadOrCreateServiceKey(input.keyFile, `${input.principalId}-seal-${randomUUID().slice(0, 8)}`);
  store.sealWith(eventSealer(input.principalId, key));
  const authorization = await loadServiceEnrollment(input.principalId, env);
  const registration = await registerServicePrincipal(store, { principalId: input.principalId, displayName: input.displayName, key, ...(authorization === undefined ? {} : { authorization }) });
  return { key, created, registration };
}
