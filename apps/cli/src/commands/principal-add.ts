import { createHash } from 'node:crypto';
import {
  Id,
  PrincipalKeyAdded,
  PrincipalRegistered,
  PrincipalRole,
  PrincipalType,
  PublicEd25519Jwk,
  Title,
  hasErrorCode,
  parseContract,
} from '@writ/contracts';
import { importEd25519PublicJwk } from '@writ/crypto';
import type { EventStore } from '@writ/eventstore';
import { evolvePrincipal, type PrincipalRecord } from '@writ/runtime';
import { z } from 'zod';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { readJsonFile } from '../files.js';

export interface PrincipalAddOptions {
  readonly id: string;
  readonly type: string;
  readonly roles: readonly string[];
  /** Path of the PUBLIC JWK. */
  readonly jwk: string;
  readonly name?: string;
  /** Who registers (the operator); default WRIT_OPERATOR_ID or `operator`. */
  readonly by?: string;
  readonly json?: boolean;
}

export type PrincipalAddOutcome = 'registered' | 'key_added' | 'unchanged';

const Input = z.object({ id: Id, type: PrincipalType, roles: z.array(PrincipalRole).min(1).max(5), name: Title, by: Id });
const CONFLICT_RETRIES = 3;

const eventId = (principalId: string, what: string, kid: string) =>
  `prn-${createHash('sha256').update(`${principalId}:${what}:${kid}`).digest('hex').slice(0, 32)}`;

/**
 * `writ principal add`: appends `principal.registered` (or `principal.key_added`
 * when the principal exists and the kid is new) to the event log. Idempotent:
 * a re-run with the same key appends nothing. Refuses a JWK carrying `d`.
 */
export async function principalAdd(options: PrincipalAddOptions, conn: Connection, io: CliIo): Promise<{ principal_id: string; outcome: PrincipalAddOutcome }> {
  const input = parseContract('principal add', Input, {
    id: options.id,
    type: options.type,
    roles: [...new Set(options.roles)],
    name: options.name ?? options.id,
    by: options.by ?? (io.env['WRIT_OPERATOR_ID'] || 'operator'),
  });
  const jwk = await readPublicJwk(io, options.jwk);

  const nc = await connectNats(conn);
  try {
    const store = await attachEventLog(nc, conn);
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = await register(store, input, jwk, io.now().toISOString());
        io.stdout(options.json === true ? JSON.stringify({ principal_id: input.id, outcome }) : input.id);
        if (outcome !== 'registered') io.stderr(outcome === 'unchanged' ? `${input.id} already has key ${jwk.kid}` : `${input.id}: key ${jwk.kid} added`);
        return { principal_id: input.id, outcome };
      } catch (error) {
        // Someone appended to the principal meanwhile: read again and decide again.
        if (!hasErrorCode(error, 'EVENTSTORE_CONFLICT') || attempt >= CONFLICT_RETRIES) throw error;
      }
    }
  } finally {
    await nc.drain().catch(() => undefined);
  }
}

async function readPublicJwk(io: CliIo, path: string): Promise<PublicEd25519Jwk> {
  const value = await readJsonFile(io.cwd, path, 'JWK');
  if (typeof value === 'object' && value !== null && 'd' in value) {
    throw new CliError('CLI_PRIVATE_KEY_REFUSED', `${path} holds a PRIVATE key ("d"); register the public JWK printed by \`writ principal keygen\``);
  }
  const parsed = PublicEd25519Jwk.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
    throw new CliError('CLI_JWK_INVALID', `${path} is not a public Ed25519 JWK with a kid: ${issues}`);
  }
  try {
    await importEd25519PublicJwk(parsed.data);
  } catch (cause) {
    throw new CliError('CLI_JWK_INVALID', `${path} is not a usable Ed25519 public key`, { cause });
  }
  return parsed.data;
}

async function register(store: EventStore, input: z.output<typeof Input>, jwk: PublicEd25519Jwk, at: string): Promise<PrincipalAddOutcome> {
  const events = await store.readEntity('principal', input.id);
  let record: PrincipalRecord | undefined;
  for (const { event } of events) record = evolvePrincipal(record, event);
  const base = {
    schema_version: 1,
    entity_type: 'principal' as const,
    entity_id: input.id,
    occurred_at: at,
    actor_type: 'user' as const,
    actor_id: input.by,
    causation_id: null,
    correlation_id: input.id,
  };
  if (record === undefined) {
    const payload = PrincipalRegistered.parse({
      principal_id: input.id,
      principal_type: input.type,
      display_name: input.name,
      roles: input.roles,
      keys: [jwk],
      registered_by: input.by,
      at,
    });
    await store.appendToEntity(
      'principal',
      input.id,
      [{ ...base, event_id: eventId(input.id, 'principal.registered', jwk.kid), event_type: 'principal.registered', payload, idempotency_key: `principal.registered:${jwk.kid}` }],
      events.at(-1)?.event.task_seq ?? 0,
    );
    return 'registered';
  }
  conflictsWith(record, input, jwk);
  if (record.keys.has(jwk.kid)) return 'unchanged';
  const payload = PrincipalKeyAdded.parse({ key: jwk, added_by: input.by, at });
  await store.appendToEntity(
    'principal',
    input.id,
    [{ ...base, event_id: eventId(input.id, 'principal.key_added', jwk.kid), event_type: 'principal.key_added', payload, idempotency_key: `principal.key_added:${jwk.kid}` }],
    events.at(-1)?.event.task_seq ?? 0,
  );
  return 'key_added';
}

/** A re-run must describe the same principal; the log has no event to change a type or roles. */
function conflictsWith(record: PrincipalRecord, input: z.output<typeof Input>, jwk: PublicEd25519Jwk): void {
  const fail = (why: string) => {
    throw new CliError('CLI_PRINCIPAL_CONFLICT', `principal ${record.principal_id} exists ${why}`, { details: { principal_id: record.principal_id } });
  };
  if (record.principal_type !== input.type) fail(`as ${record.principal_type}, not ${input.type}`);
  const roles = (list: readonly string[]) => [...list].sort().join(',');
  if (roles(record.roles) !== roles(input.roles)) fail(`with roles ${roles(record.roles) || '(none)'}, not ${roles(input.roles)}`);
  if (record.revoked_kids.has(jwk.kid)) fail(`and key ${jwk.kid} was revoked; register the new key under a new kid`);
  const existing = record.keys.get(jwk.kid);
  if (existing !== undefined && existing.x !== jwk.x) fail(`with another key under kid ${jwk.kid}`);
}
