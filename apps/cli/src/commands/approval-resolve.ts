import { Id, parseContract } from '@writ/contracts';
import { SIGNED_REQUESTS } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { cell } from '../format.js';
import type { WritApi } from '../http-api.js';
import { ApprovalList, ResolveApprovalReply } from '../projection-api.js';
import { directorSigner } from '../signed-request.js';

export type ApprovalDecision = 'grant' | 'deny';

export interface ApprovalResolveOptions {
  /** Path of the director's PRIVATE JWK. */
  readonly key: string;
  /** The director's principal id (`resolved_by`). */
  readonly principal: string;
  readonly note?: string;
  /** The approval's task; default: looked up in `GET /v1/approvals`. */
  readonly task?: string;
  readonly json?: boolean;
}

/** The largest page the API serves: the lookup scans the inbox, then every approval, at most this many each. */
const LOOKUP_LIMIT = 1_000;

const EXPECTED: Readonly<Record<ApprovalDecision, string>> = { grant: 'granted', deny: 'denied' };

/**
 * `writ approve|deny <approval_id> --key <file> --principal <director>`:
 * learns the approval's task from the projection (unless `--task`), signs an
 * `ApprovalResolution` `{ approval_id, decision, resolved_by, resolved_at, note? }`
 * as a compact EdDSA JWS with the director's key (its kid in the header), and
 * POSTs `{ task_id, resolution_jws }` to `/v1/approvals/<id>/grant|deny`. The
 * approval service decides (signature, director role, not the requester,
 * still pending, state witness); its refusal code is the exit error. An answer
 * other than the one asked for (`invalidated`: the witnessed state drifted;
 * `expired`) is printed, then reported as CLI_APPROVAL_INVALIDATED / CLI_APPROVAL_EXPIRED.
 */
export async function approvalResolve(
  approvalIdArg: string,
  decision: ApprovalDecision,
  options: ApprovalResolveOptions,
  api: WritApi,
  io: CliIo,
): Promise<ResolveApprovalReply> {
  const approvalId = parseContract('approval id', Id, approvalIdArg);
  const director = await directorSigner(io, options.key, options.principal);
  const givenTask = options.task === undefined ? undefined : parseContract('--task', Id, options.task);
  const resolutionJws = await director.sign(SIGNED_REQUESTS.approvalResolution, {
    approval_id: approvalId,
    decision,
    ...(options.note === undefined ? {} : { note: options.note }),
  });

  // Signed before the lookup, so resolved_at is when the director decided; the API goes to approval over HTTP.
  const taskId = givenTask ?? (await taskOfApproval(api, approvalId));
  const reply = await api.post(`/v1/approvals/${encodeURIComponent(approvalId)}/${decision}`, { task_id: taskId, resolution_jws: resolutionJws }, ResolveApprovalReply);

  io.stdout(
    options.json === true
      ? JSON.stringify(reply)
      : `${cell(reply.status)} ${cell(reply.approval_id)} (task ${cell(reply.task_id)})${reply.resolved_by ? ` by ${cell(reply.resolved_by)}` : ''}`,
  );
  if (reply.status === EXPECTED[decision]) return reply;
  const details = { approval_id: reply.approval_id, task_id: reply.task_id, status: reply.status };
  if (reply.status === 'invalidated') {
    throw new CliError('CLI_APPROVAL_INVALIDATED', `approval ${approvalId} was invalidated: the state it witnessed changed, so the action re-enters policy (see writ task ${taskId})`, { details });
  }
  if (reply.status === 'expired') {
    throw new CliError('CLI_APPROVAL_EXPIRED', `approval ${approvalId} had expired; the action was not run (see writ task ${taskId})`, { details });
  }
  throw new CliError('CLI_HTTP_REPLY_INVALID', `the API answered ${cell(reply.status)} to a ${decision}`, { details });
}

/**
 * The approval's task, from the projection: the inbox first, then every
 * status (a resolved approval is still POSTed, and the approval service
 * says why it is not pending). Nothing here authorizes anything.
 */
async function taskOfApproval(api: WritApi, approvalId: string): Promise<string> {
  for (const status of ['pending', undefined]) {
    const { approvals } = await api.get('/v1/approvals', ApprovalList, { status, limit: LOOKUP_LIMIT });
    const row = approvals.find((approval) => approval.approval_id === approvalId);
    if (row !== undefined) return parseContract('task_id', Id, row.task_id);
  }
  throw new CliError('CLI_APPROVAL_NOT_FOUND', `no approval ${approvalId} in the projection (it may not have caught up yet): retry, or pass its task with --task`, {
    details: { approval_id: approvalId },
  });
}
