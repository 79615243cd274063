import { COMMANDS, Id, PrincipalRevocationOutcome, parseContract } from '@writ/contracts';
import { NatsAuthority, SIGNED_REQUESTS } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import { pushAccount, writHome } from '../bus-authority.js';
import type { CliIo, Connection } from '../cli-io.js';
import { directorSigner, sendSignedRequest } from '../signed-request.js';

export interface PrincipalRevokeOptions {
  /** Only these keys (default: every active key, and the bus credential). */
  readonly kid?: readonly string[];
  readonly reason?: string;
  /** The operator's PRIVATE JWK; default WRIT_OPERATOR_KEY. */
  readonly key?: string;
  /** The operator who signs; default WRIT_OPERATOR_ID, else `operator`. */
  readonly principal?: string;
  readonly json?: boolean;
}

export interface PrincipalRevokeResult extends PrincipalRevocationOutcome {
  /** The principal's bus credentials were cut (an agent's NATS account disabled; a director's or dashboard's users revoked in the Writ account). */
  readonly bus_revoked: boolean;
}

/**
 * `writ principal revoke <id>`: an operator-signed PrincipalRevocation sent to
 * ingress (which appends one `principal.key_revoked` per key: signatures by
 * them are refused from the next request on), then, when every key of a
 * principal is revoked, its bus credentials are cut: an agent's NATS account
 * is pushed disabled with every user revoked; a director's or dashboard's
 * users are revoked in the Writ account. Either way the server closes their
 * live connections at once and refuses the credentials from then on. Idempotent.
 */
export async function principalRevoke(idArg: string, options: PrincipalRevokeOptions, conn: Connection, io: CliIo): Promise<PrincipalRevokeResult> {
  const principalId = parseContract('principal id', Id, idArg);
  const keyFile = options.key ?? io.env['WRIT_OPERATOR_KEY'];
  if (keyFile === undefined || keyFile === '') {
    throw new CliError('CLI_KEY_REQUIRED', 'a revocation is signed by an operator: pass --key <operator private JWK> (and --principal <operator id>), or set WRIT_OPERATOR_KEY');
  }
  const operator = await directorSigner(io, keyFile, options.principal ?? (io.env['WRIT_OPERATOR_ID'] || 'operator'));
  const jws = await operator.sign(SIGNED_REQUESTS.principalRevocation, {
    principal_id: principalId,
    ...(options.kid === undefined || options.kid.length === 0 ? {} : { kids: [...options.kid] }),
    reason: options.reason ?? `revoked by ${operator.principalId}`,
  });
  const reply = await sendSignedRequest(conn, COMMANDS.ingressRevokePrincipal, { jws }, PrincipalRevocationOutcome, 'PrincipalRevocationOutcome');

  let busRevoked = false;
  if (options.kid === undefined || options.kid.length === 0) {
    const authority = await NatsAuthority.load(writHome(io));
    // An agent has its own account (disabled whole); a director or dashboard is a user of the Writ account (revoked in it).
    const accountJwt = (await authority.revokeAgent(principalId, io.now())) ?? (await authority.revokeWritUsers(principalId, io.now()));
    if (accountJwt !== undefined) {
      await pushAccount(conn, io, accountJwt);
      busRevoked = true;
    }
  }
  const result: PrincipalRevokeResult = { ...reply, bus_revoked: busRevoked };
  io.stdout(options.json === true ? JSON.stringify(result) : `${principalId}: ${reply.kids_revoked.length === 0 ? 'no active key left to revoke' : `revoked ${reply.kids_revoked.join(', ')}`}${busRevoked ? '; bus credential cut' : ''}`);
  return result;
}
