import { ApplyPolicyProfileReply, COMMANDS } from '@writ/contracts';
import { SIGNED_REQUESTS } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { cell } from '../format.js';
import { directorSigner, sendSignedRequest } from '../signed-request.js';
import { readProfileFile, requestPolicyService, validateProfileLocally } from './policy-common.js';

export interface PolicyApplyOptions {
  /** Path of the director's PRIVATE JWK; without it the file is only validated (CLI_KEY_REQUIRED after the check). */
  readonly key?: string;
  /** The director (applied_by); default WRIT_OPERATOR_ID. */
  readonly principal?: string;
  readonly json?: boolean;
}

/**
 * `writ policy apply <file> --key <director jwk> [--principal id]`: reads the
 * profile (YAML or JSON) and validates it locally first — every issue printed
 * as `path: message`, exit 1, nothing sent. A valid one is signed as a
 * PolicyProfileApplication `{ document, applied_by, applied_at: now }`
 * (compact EdDSA JWS, typ `writ-policy-apply+jws`) and sent to
 * `<root>.qry.policy.apply-profile`; the policy service checks the signer
 * (a registered director, active key), the freshness, and the document again.
 * Prints `applied <id> <version> (was <previous>)` or `unchanged <id> <version>`.
 */
export async function policyApply(file: string, options: PolicyApplyOptions, conn: Connection, io: CliIo): Promise<ApplyPolicyProfileReply> {
  const input = await readProfileFile(io.cwd, file);
  const { version } = validateProfileLocally(input, file, io);
  if (options.key === undefined) {
    throw new CliError('CLI_KEY_REQUIRED', `${file} is a valid policy profile (${version}); to apply it, sign it with the director's private key: --key <file>`);
  }
  const principal = options.principal ?? (io.env['WRIT_OPERATOR_ID'] || undefined);
  if (principal === undefined) throw new CliError('CLI_PRINCIPAL_REQUIRED', 'name the director with --principal (or WRIT_OPERATOR_ID)');
  const director = await directorSigner(io, options.key, principal);
  // The document as written (validated above; the contract checks it is an object before signing).
  const jws = await director.sign(SIGNED_REQUESTS.policyApplication, { document: input as Record<string, unknown> });
  // The policy commands' own requester: nobody answering stays CLI_NATS_UNREACHABLE.
  const reply = await sendSignedRequest(conn, COMMANDS.policyApplyProfile, { application_jws: jws }, ApplyPolicyProfileReply, 'ApplyPolicyProfileReply', requestPolicyService);
  if (options.json === true) io.stdout(JSON.stringify(reply));
  else if (reply.status === 'unchanged') io.stdout(`unchanged ${cell(reply.profile_id)} ${cell(reply.version)}`);
  else io.stdout(`applied ${cell(reply.profile_id)} ${cell(reply.version)} (was ${reply.previous_version === null ? 'none' : cell(reply.previous_version)})`);
  return reply;
}
