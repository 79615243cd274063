import { COMMANDS, GrantRevocation, Id, RevokeGrantReply, hasErrorCode, parseContract } from '@writ/contracts';
import { importEd25519PrivateJwk, signJws } from '@writ/crypto';
import { rooted } from '@writ/runtime';
import { z } from 'zod';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { connectNats } from '../event-log.js';
import { readJsonFile } from '../files.js';
import { cell } from '../format.js';
import type { WritApi } from '../http-api.js';
import { requestService } from '../service-request.js';

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
  const principal = parseContract('--principal', Id, options.principal);
  const givenTask = options.task === undefined ? undefined : parseContract('--task', Id, options.task);
  const key = await importEd25519PrivateJwk(await readJsonFile(io.cwd, options.key, 'private JWK'));
  const taskId = givenTask ?? (await taskOfGrant(api, grantId));
  const revocation = parseContract('GrantRevocation', GrantRevocation, {
    grant_id: grantId,
    task_id: taskId,
    reason: options.reason ?? `revoked by ${principal}`,
    revoked_by: principal,
    revoked_at: io.now().toISOString(),
  });
  const revocationJws = await signJws(JSON.stringify(revocation), key);

  const nc = await connectNats(conn);
  let reply: RevokeGrantReply;
  try {
    const subject = rooted(COMMANDS.approvalRevokeGrant, conn.subjectRoot);
    reply = await requestService(nc, subject, { grant_id: grantId, task_id: taskId, revocation_jws: revocationJws }, RevokeGrantReply, 'RevokeGrantReply');
  } finally {
    await nc.drain().catch(() => undefined);
  }
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
