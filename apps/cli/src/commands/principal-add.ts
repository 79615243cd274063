import { resolve } from 'node:path';
import { COMMANDS, Id, PrincipalRegistrationOutcome, PrincipalRole, PrincipalType, PublicEd25519Jwk, Title, parseContract } from '@writ/contracts';
import { importEd25519PublicJwk } from '@writ/crypto';
import {
  NatsAuthority,
  SIGNED_REQUESTS,
  agentPermissions,
  busLayout,
  dashboardPermissions,
  directorPermissions,
  fileExists,
  writeSecret,
} from '@writ/runtime';
import { z } from 'zod';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { pushAccount, writHome } from '../bus-authority.js';
import { readJsonFile } from '../files.js';
import { directorSigner, sendSignedRequest } from '../signed-request.js';

export interface PrincipalAddOptions {
  readonly id: string;
  readonly type: string;
  readonly roles: readonly string[];
  /** Path of the PUBLIC JWK. */
  readonly jwk: string;
  readonly name?: string;
  /** The operator's PRIVATE JWK that signs the registration; default WRIT_OPERATOR_KEY. */
  readonly key?: string;
  /** The operator who signs (`registered_by`); default WRIT_OPERATOR_ID, else `operator`. */
  readonly principal?: string;
  /** Where the principal's bus credential goes (default `./<id>.creds`; never overwritten). */
  readonly credsOut?: string;
  /** `--no-creds`: register only; issue no bus credential. */
  readonly creds?: boolean;
  readonly json?: boolean;
}

export type PrincipalAddOutcome = PrincipalRegistrationOutcome['outcome'];

export interface PrincipalAddResult {
  readonly principal_id: string;
  readonly outcome: PrincipalAddOutcome;
  readonly kids_added: readonly string[];
  /** The bus credential written by this run (a path), if one was issued. */
  readonly creds?: string;
}

const Input = z.object({ id: Id, type: PrincipalType, roles: z.array(PrincipalRole).min(1).max(5), name: Title });

/**
 * `writ principal add`: registers a principal with its public key (or adds the
 * key to it) through ingress, signed by an operator (`--key`, `--principal`;
 * ingress verifies the signer's role and appends with the signature as the
 * event's authorization; a refusal appends nothing), then issues the
 * principal's bus credential (`--creds-out`, 0600) from the operator's NATS
 * authority (WRIT_HOME): an agent gets its own NATS account that can publish
 * only `<root>.ingress.action.<id>`; a director or operator a CLI credential
 * (signed requests, reads); an observer the dashboard's (read-only
 * projections). Idempotent: a re-run with the same key appends nothing and
 * keeps an existing credential file. Refuses a JWK carrying `d`.
 */
export async function principalAdd(options: PrincipalAddOptions, conn: Connection, io: CliIo): Promise<PrincipalAddResult> {
  const input = parseContract('principal add', Input, { id: options.id, type: options.type, roles: [...new Set(options.roles)], name: options.name ?? options.id });
  const jwk = await readPublicJwk(io, options.jwk);
  const keyFile = options.key ?? io.env['WRIT_OPERATOR_KEY'];
  if (keyFile === undefined || keyFile === '') {
    throw new CliError('CLI_KEY_REQUIRED', 'a registration is signed by an operator: pass --key <operator private JWK> (and --principal <operator id>), or set WRIT_OPERATOR_KEY (writ init wrote it; . <WRIT_HOME>/writ.env)');
  }
  const operator = await directorSigner(io, keyFile, options.principal ?? (io.env['WRIT_OPERATOR_ID'] || 'operator'));
  const issue = options.creds !== false && credentialKind(input) !== undefined;
  const credsOut = resolve(io.cwd, options.credsOut ?? `${input.id}.creds`);
  // The authority is checked before anything is appended, so a missing WRIT_HOME fails the whole command.
  const authority = issue ? await NatsAuthority.load(writHome(io)) : undefined;

  const jws = await operator.sign(SIGNED_REQUESTS.principalRegistration, {
    principal_id: input.id,
    principal_type: input.type,
    display_name: input.name,
    roles: input.roles,
    keys: [jwk],
  });
  const reply = await sendSignedRequest(conn, COMMANDS.ingressRegisterPrincipal, { jws }, PrincipalRegistrationOutcome, 'PrincipalRegistrationOutcome');

  let creds: string | undefined;
  if (authority !== undefined) {
    if (await fileExists(credsOut)) {
      io.stderr(`${credsOut} exists: kept (no new bus credential issued)`);
    } else {
      await writeSecret(credsOut, await issueCredential(authority, input, conn, io));
      creds = credsOut;
    }
  }
  const result: PrincipalAddResult = { principal_id: input.id, outcome: reply.outcome, kids_added: reply.kids_added, ...(creds === undefined ? {} : { creds }) };
  io.stdout(options.json === true ? JSON.stringify(result) : input.id);
  if (reply.outcome !== 'registered') io.stderr(reply.outcome === 'unchanged' ? `${input.id} already has key ${jwk.kid}` : `${input.id}: key ${jwk.kid} added`);
  if (creds !== undefined) io.stderr(`bus credential written to ${creds} (mode 0600): give it to ${input.id} as WRIT_NATS_CREDS`);
  return result;
}

type CredentialKind = 'agent' | 'director' | 'dashboard';

/** Which bus credential a principal gets: none for a service (writ init issues those). */
function credentialKind(input: z.output<typeof Input>): CredentialKind | undefined {
  if (input.type === 'agent') return 'agent';
  if (input.type === 'service') return undefined;
  if (input.roles.includes('director') || input.roles.includes('operator')) return 'director';
  return 'dashboard';
}

async function issueCredential(authority: NatsAuthority, input: z.output<typeof Input>, conn: Connection, io: CliIo): Promise<string> {
  const layout = busLayout({ root: conn.subjectRoot, eventsPrefix: conn.eventsPrefix });
  const kind = credentialKind(input);
  if (kind === 'director') return authority.issueWritUser(input.id, inboxToken(input.id), directorPermissions(inboxToken(input.id), layout));
  if (kind === 'dashboard') return authority.issueWritUser(input.id, inboxToken(input.id), dashboardPermissions(layout));
  const agent = await authority.issueAgent(input.id, layout, agentPermissions(input.id, layout));
  // The agent's account must be on the server before its credential can connect.
  await pushAccount(conn, io, agent.accountJwt);
  return agent.creds;
}

/** A principal id as one subject token (its inbox `_INBOX.<token>`). */
function inboxToken(principalId: string): string {
  return principalId.replace(/[^A-Za-z0-9_-]/g, '_');
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
