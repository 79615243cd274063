import { canonicalJson, sha256Hex } from '@writ/crypto';

/**
 * The stored form of an approval packet (Hermit 16.7: packets are artifacts):
 * `{ format, packet, state_witness? }`, kept as its RFC 8785 bytes in the
 * artifact bucket. `approval_packet_ref` = `artifact:sha256:<SHA-256 of those bytes>`,
 * and a director's ApprovalResolution signs `packet_hash` = `sha256:<the same hex>`.
 */
export const APPROVAL_PACKET_FORMAT = 'writ.approval-packet/1';

/**
 * The packet document: the packet and, when one was captured, the state witness it
 * refers to (`approval.requested`'s `state_witness`), so the document alone shows
 * what the approver was asked and the state the answer depends on.
 */
export function approvalPacketDocument(packet: unknown, stateWitness?: unknown): Record<string, unknown> {
  return { format: APPROVAL_PACKET_FORMAT, packet, ...(stateWitness === undefined || stateWitness === null ? {} : { state_witness: stateWitness }) };
}

/** `sha256:<hex>` of the RFC 8785 packet document: what a director signs as `packet_hash`. */
export function approvalPacketHash(packet: unknown, stateWitness?: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(approvalPacketDocument(packet, stateWitness)))}`;
}

const PACKET_REF = /^(?:artifact:)?sha256:([0-9a-f]{64})$/;

/**
 * The `packet_hash` a resolution of the approval must sign, from its `approval_packet_ref`:
 * `artifact:sha256:<hex>` (a stored packet document), or `sha256:<hex>` (approvals of older
 * releases, whose ref hashed the packet alone). Undefined for any other ref: no resolution
 * can match it.
 */
export function packetHashOfRef(ref: string): string | undefined {
  const hex = PACKET_REF.exec(ref)?.[1];
  return hex === undefined ? undefined : `sha256:${hex}`;
}
