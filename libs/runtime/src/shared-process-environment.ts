import { join } from 'node:path';
import { RuntimeError } from './runtime-errors.js';

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The variables that say who a service is on the bus or where it listens: in one process
 * running several services (apps/serve) none of them is shared, so no service ever
 * connects with another's credential (invariant 9) and no two bind one port. A value
 * meant for one service is given as `WRIT_SERVE_<SERVICE>__<VARIABLE>`.
 */
export const PER_SERVICE_VARIABLES = Object.freeze([
  'WRIT_HTTP_PORT',
  'WRIT_NATS_CREDS',
  'WRIT_NATS_CONSUMER_CREDS',
  'WRIT_NATS_NKEY',
  'WRIT_NATS_USER',
  'WRIT_NATS_PASS',
  'WRIT_NATS_TOKEN',
  'WRIT_NATS_TLS_CERT',
  'WRIT_NATS_TLS_KEY',
  'WRIT_SERVICE_ENROLLMENT',
]);

/** The variables that identify a bus user: two services may not end up with the same one. */
const IDENTITY_VARIABLES = ['WRIT_NATS_CREDS', 'WRIT_NATS_NKEY', 'WRIT_NATS_USER', 'WRIT_NATS_TOKEN', 'WRIT_NATS_TLS_CERT'] as const;

const SERVE_PREFIX = 'WRIT_SERVE_';

/**
 * Each service's own environment when `services` (in their order) share one process:
 *
 * - everything of `env` but the per-service variables (`PER_SERVICE_VARIABLES`) and the
 *   `WRIT_SERVE_*` ones;
 * - `WRIT_NATS_CREDS=<dir>/<service>.creds`, `dir` being `WRIT_SERVE_CREDS_DIR`, else
 *   `$WRIT_HOME/creds` (where `writ init` issues each service's credential; the consumer
 *   credential beside it follows, as for a service alone);
 * - `WRIT_HTTP_PORT=<WRIT_HTTP_PORT_BASE + its index>` when `WRIT_HTTP_PORT_BASE` is set (the
 *   ports scripts/writ-up.sh gives them), else the service's own default;
 * - then `WRIT_SERVE_<SERVICE>__<VARIABLE>=value` as `VARIABLE=value` for that service alone.
 *
 * RUNTIME_CONFIG_INVALID when no credential directory is known, or when two services would
 * connect as the same bus user.
 */
export function sharedProcessEnvironments(services: readonly string[], env: Environment): Map<string, Record<string, string>> {
  const shared: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || key.startsWith(SERVE_PREFIX) || PER_SERVICE_VARIABLES.includes(key)) continue;
    shared[key] = value;
  }
  const credsDir = nonEmpty(env['WRIT_SERVE_CREDS_DIR']) ?? (nonEmpty(env['WRIT_HOME']) === undefined ? undefined : join(env['WRIT_HOME'] as string, 'creds'));
  const base = nonEmpty(env['WRIT_HTTP_PORT_BASE']);
  const portBase = base === undefined ? undefined : Number(base);
  if (portBase !== undefined && !(Number.isInteger(portBase) && portBase > 0 && portBase + services.length - 1 <= 65_535)) {
    throw new RuntimeError('RUNTIME_CONFIG_INVALID', `WRIT_HTTP_PORT_BASE=${base} is not a port with ${services.length} ports free above it`);
  }
  const result = new Map<string, Record<string, string>>();
  services.forEach((service, index) => {
    const own: Record<string, string> = { ...shared };
    if (credsDir !== undefined) own['WRIT_NATS_CREDS'] = join(credsDir, `${service}.creds`);
    if (portBase !== undefined) own['WRIT_HTTP_PORT'] = String(portBase + index);
    const prefix = `${SERVE_PREFIX}${service.toUpperCase()}__`;
    for (const [key, value] of Object.entries(env)) if (value !== undefined && key.startsWith(prefix) && key.length > prefix.length) own[key.slice(prefix.length)] = value;
    if (IDENTITY_VARIABLES.every((name) => nonEmpty(own[name]) === undefined)) {
      throw new RuntimeError('RUNTIME_CONFIG_INVALID', `${service}: no bus credential of its own: set WRIT_HOME (its credential is $WRIT_HOME/creds/${service}.creds, as writ init issues it), WRIT_SERVE_CREDS_DIR, or ${prefix}WRIT_NATS_CREDS`, { details: { service } });
    }
    result.set(service, own);
  });
  for (const name of IDENTITY_VARIABLES) {
    const seen = new Map<string, string>();
    for (const [service, own] of result) {
      const value = nonEmpty(own[name]);
      if (value === undefined) continue;
      const other = seen.get(value);
      if (other !== undefined) throw new RuntimeError('RUNTIME_CONFIG_INVALID', `${other} and ${service} would connect with the same ${name}: each service needs its own bus credential (its permissions are its own)`, { details: { services: [other, service], variable: name } });
      seen.set(value, service);
    }
  }
  return result;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
