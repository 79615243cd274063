import { COMMANDS, Id, RevokeGrantReply, hasErrorCode, parseContract } from '@writ/contracts';
import { SIGNED_REQUESTS } from '@writ/runtime';
import { z } from 'zod';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { cell } from '../format.js';
import type { WritApi } from '../http-api.js';
import { directorSigner, sendSignedRequest } from '../signed-request.js';

export interface GrantRevokeOptions {
  /** Path of the director's PRIVATE JWK. */
  readonly key: string;
  /** The director's principal id (`revoked_by`). */
  readonly principal: string;
  readonly reason?: string;
  /** The grant's task; default: looked up in `GET /v1/grants/<id>`. */
  readonly task?: string;
  readonly json?: boolean;
}

/** What `GET /v1/grants/<id>` answers that this command reads. */
const GrantView = z.looseObject({ grant_id: z.string(), task_id: z.string() });

/**
 * `writ grant revoke <grant_id> --key <file> --principal <director>`: learns
 * the grant's task from the projection (unless `--task`), signs a
 * GrantRevocation `{ grant_id, task_id, reason, revoked_by, revoked_at }` as
 * a compact EdDSA JWS with the director's key, and sends it to
 * `<root>.qry.approval.revoke-grant`. The approval service decides (signature,
 * director, not an agent, not the action's proposer, fresh) and appends
 * `grant.revoked`; its refusal code is the exit error. `already_revoked` is a
 * success (the standing revocation is printed).
 */
export async function grantRevoke(grantIdArg: string, options: GrantRevokeOptions, conn: Connection, api: WritApi, io: CliIo): Promise<RevokeGrantReply> {
  const grantId = parseContract('grant id', Id, grantIdArg);
  const director = await directorSigner(io, options.key, options.principal);
  const givenTask = options.task === undefined ? undefined : parseContract('--task', Id, options.task);
  const taskId = givenTask ?? (await taskOfGrant(api, grantId));
  const revocationJws = await director.sign(SIGNED_REQUESTS.grantRevocation, {
    grant_id: grantId,
    task_id: taskId,
    reason: options.reason ?? `revoked by ${director.principalId}`,
  });
  const body = { grant_id: grantId, task_id: taskId, revocation_jws: revocationJws };
  const reply = await sendSignedRequest(conn, COMMANDS.approvalRevokeGrant, body, RevokeGrantReply, 'RevokeGrantReply');
  io.stdout(
    options.json === true
      ? JSON.stringify(reply)
      : `${cell(reply.status)} ${cell(reply.grant_id)} (task ${cell(reply.task_id)}) by ${cell(reply.revoked_by)} at ${cell(reply.revoked_at)}`,
  );
  return reply;
}

/** The grant's task, from the projection; nothing here authorizes anything. */
async function taskOfGrant(api: WritApi, grantId: string): Promise<string> {
  try {
    const row = await api.get(`/v1/grants/${encodeURIComponent(grantId)}`, GrantView);
    return parseContract('task_id', Id, row.task_id);
  } catch (error) {
    if (!hasErrorCode(error, 'PROJECTION_NOT_FOUND')) throw error;
    throw new CliError('CLI_GRANT_NOT_FOUND', `no grant ${grantId} in the projection (it may not have caught up yet): retry, or pass its task with --task`, {
      cause: error,
      details: { grant_id: grantId },
    });
  }
}
