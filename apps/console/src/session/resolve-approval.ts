import { approvalPacketHash, canonicalJson, packetHashOfRef, sha256Hex, signApprovalResolution } from '@writ/verification';
import { consoleError } from '../api/api-error.js';
import type { ApprovalDetail, ResolveReply } from '../api/rows.js';
import type { WritApi } from '../api/writ-api.js';
import type { Session } from './session.js';

export type Decision = 'grant' | 'deny';

const EXPECTED: Readonly<Record<Decision, string>> = { grant: 'granted', deny: 'denied' };

/**
 * The hash of the packet as shown, which must be the one the approval
 * records: the SHA-256 of the RFC 8785 packet document `{ format, packet,
 * state_witness? }` recomputed here from what the API served. A packet that
 * does not hash to its ref (changed on its way, or by the projection) is
 * refused before anything is signed. (`shownPacket` of `writ approve`.)
 */
export async function shownPacketHash(approval: ApprovalDetail): Promise<string> {
  const recorded = approval.packet_ref === null ? undefined : packetHashOfRef(approval.packet_ref);
  const document = await approvalPacketHash(approval.packet, approval.state_witness ?? undefined);
  // Approvals of older releases named the packet alone (`sha256:<hex>`).
  const legacy = approval.packet_ref?.startsWith('sha256:') === true && recorded === `sha256:${await sha256Hex(canonicalJson(approval.packet))}`;
  if (recorded === undefined || (recorded !== document && !legacy)) {
    throw consoleError(
      'CONSOLE_APPROVAL_PACKET_MISMATCH',
      `the packet shown for approval ${approval.approval_id} does not hash to the packet it records (${approval.packet_ref ?? 'none'}; shown: ${document}): nothing was signed`,
    );
  }
  return recorded;
}

/**
 * `writ approve|deny` in the browser: the director's `ApprovalResolution`
 * `{ approval_id, decision, packet_hash, resolved_by, resolved_at, note? }`
 * signed here with the session's key (WebCrypto Ed25519, the same bytes the
 * CLI's jose produces), POSTed as `{ task_id, resolution_jws }` to
 * `/v1/approvals/<id>/grant|deny`. The approval service decides (signature,
 * director role, not the requester, the packet still the one signed, still
 * pending, witness); its refusal code is the error shown.
 */
export async function resolveApproval(api: WritApi, session: Session, approval: ApprovalDetail, decision: Decision, note: string): Promise<ResolveReply> {
  const packetHash = await shownPacketHash(approval);
  const trimmed = note.trim();
  const resolutionJws = await signApprovalResolution(
    { approval_id: approval.approval_id, decision, packet_hash: packetHash, ...(trimmed === '' ? {} : { note: trimmed }) },
    { principalId: session.principalId, key: session.key, now: new Date() },
  );
  const reply = await api.resolveApproval(approval.approval_id, decision, { task_id: approval.task_id, resolution_jws: resolutionJws });
  if (reply.status === EXPECTED[decision]) return reply;
  if (reply.status === 'invalidated') throw consoleError('CONSOLE_APPROVAL_INVALIDATED', `approval ${approval.approval_id} was invalidated: the state it witnessed changed, so the action re-enters policy`);
  if (reply.status === 'expired') throw consoleError('CONSOLE_APPROVAL_EXPIRED', `approval ${approval.approval_id} had expired; the action was not run`);
  throw consoleError('CONSOLE_APPROVAL_UNEXPECTED', `the API answered ${reply.status} to a ${decision}`);
}
