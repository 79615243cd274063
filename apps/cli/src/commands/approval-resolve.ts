import { Id, hasErrorCode, parseContract } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { SIGNED_REQUESTS, approvalPacketHash, packetHashOfRef } from '@writ/runtime';
import { z } from 'zod';
import { CliError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { cell } from '../format.js';
import type { WritApi } from '../http-api.js';
import { ResolveApprovalReply } from '../projection-api.js';
import { directorSigner } from '../signed-request.js';

export type ApprovalDecision = 'grant' | 'deny';

export interface ApprovalResolveOptions {
  /** Path of the director's PRIVATE JWK. */
  readonly key: string;
  /** The director's principal id (`resolved_by`). */
  readonly principal: string;
  readonly note?: string;
  /** The approval's task; default: the one `GET /v1/approvals/<id>` names. */
  readonly task?: string;
  readonly json?: boolean;
}

const EXPECTED: Readonly<Record<ApprovalDecision, string>> = { grant: 'granted', deny: 'denied' };

/** What `GET /v1/approvals/<id>` must show for a director to sign over it: the packet, its ref and the state witness. */
const ShownApproval = z.looseObject({
  task_id: z.string(),
  packet: z.record(z.string(), z.unknown()),
  packet_ref: z.string().nullish(),
  state_witness: z.record(z.string(), z.unknown()).nullish(),
});

/** The approval as the director is asked to decide on it: its task, and the hash of the packet shown. */
export interface PacketShown {
  readonly task_id: string;
  /** `sha256:<hex>`: what the resolution signs as `packet_hash`. */
  readonly packet_hash: string;
}

/**
 * The packet `GET /v1/approvals/<id>` shows, and its hash as the director signs it: the
 * SHA-256 of the RFC 8785 packet document `{ format, packet, state_witness? }` recomputed
 * from what was shown, which must be the hash the approval records (`packet_ref`). A
 * packet that does not hash to its ref (changed on its way, or by the projection) is
 * refused before anything is signed: CLI_APPROVAL_PACKET_MISMATCH. An approval the
 * projection does not hold yet: CLI_APPROVAL_NOT_FOUND.
 */
export async function shownPacket(api: WritApi, approvalId: string): Promise<PacketShown> {
  let shown: z.output<typeof ShownApproval>;
  try {
    shown = await api.get(`/v1/approvals/${encodeURIComponent(approvalId)}`, ShownApproval);
  } catch (error) {
    if (!hasErrorCode(error, 'PROJECTION_NOT_FOUND')) throw error;
    throw new CliError('CLI_APPROVAL_NOT_FOUND', `no approval ${approvalId} in the projection (it may not have caught up yet): retry shortly`, {
      cause: error,
      details: { approval_id: approvalId },
    });
  }
  const recorded = shown.packet_ref === null || shown.packet_ref === undefined ? undefined : packetHashOfRef(shown.packet_ref);
  const document = approvalPacketHash(shown.packet, shown.state_witness ?? undefined);
  // Approvals of older releases named the packet alone (`sha256:<hex>`).
  const matches = recorded !== undefined && (recorded === document || (shown.packet_ref?.startsWith('sha256:') === true && recorded === `sha256:${sha256Hex(canonicalJson(shown.packet))}`));
  if (!matches || recorded === undefined) {
    throw new CliError(
      'CLI_APPROVAL_PACKET_MISMATCH',
      `the packet shown for approval ${approvalId} does not hash to the packet it records (${shown.packet_ref ?? 'none'}; shown: ${document}): nothing was signed`,
      { details: { approval_id: approvalId, packet_ref: shown.packet_ref ?? null, shown_packet_hash: document } },
    );
  }
  return { task_id: shown.task_id, packet_hash: recorded };
}

/**
 * `writ approve|deny <approval_id> --key <file> --principal <director>`:
 * fetches the approval's packet (`GET /v1/approvals/<id>`) and checks it hashes to
 * the packet the approval records, signs an `ApprovalResolution` `{ approval_id,
 * decision, packet_hash, resolved_by, resolved_at, note? }` over that hash as a
 * compact EdDSA JWS with the director's key (its kid in the header), and POSTs
 * `{ task_id, resolution_jws }` to `/v1/approvals/<id>/grant|deny`. The approval
 * service decides (signature, director role, not the requester, the packet still
 * the one signed, still pending, state witness); its refusal code is the exit
 * error. An answer other than the one asked for (`invalidated`: the witnessed
 * state drifted; `expired`) is printed, then reported as CLI_APPROVAL_INVALIDATED /
 * CLI_APPROVAL_EXPIRED.
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
  // The director signs over the packet as shown: a packet that changes after this is refused by the approval service.
  const shown = await shownPacket(api, approvalId);
  const taskId = givenTask ?? parseContract('task_id', Id, shown.task_id);
  const resolutionJws = await director.sign(SIGNED_REQUESTS.approvalResolution, {
    approval_id: approvalId,
    decision,
    packet_hash: shown.packet_hash,
    ...(options.note === undefined ? {} : { note: options.note }),
  });
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
