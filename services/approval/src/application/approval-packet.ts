import { ApprovalPacket, LIMITS, parseContract, type ActionRequest, type RequestApproval } from '@writ/contracts';
import { canonicalJson } from '@writ/crypto';
import type { StateWitness } from '@writ/kernel';
import { APPROVAL_PACKET_FORMAT, approvalPacketDocument } from '@writ/runtime';

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A URL as shown to approvers: any user:password part is removed (never shown, never logged). */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}

function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : JSON.stringify(word);
}

/** One line saying what the action does, from its class and params. */
export function actionSummary(request: ActionRequest): string {
  const { action_class: actionClass, params } = request;
  let what: string;
  if (actionClass === 'execute_command' && params.argv !== undefined) {
    what = `${params.argv.map(shellWord).join(' ')}${params.cwd === undefined ? '' : ` (in ${params.cwd})`}`;
  } else if (params.url !== undefined) {
    what = `${params.method ?? 'GET'} ${displayUrl(params.url)}`;
  } else if (params.path !== undefined) {
    what = params.path;
  } else {
    what = request.target_resources.map((resource) => (/^https?:\/\//i.test(resource) ? displayUrl(resource) : resource)).join(', ');
  }
  return clip(`${actionClass}: ${what}`, LIMITS.text);
}

/**
 * Classes whose change the executor keeps pre-images for before it runs them
 * (docs/governed-path.md → Rollback), so their receipt can name a rollback
 * method. Any other class is not offered one at approval time: a command's
 * targets are unknown before it runs, and a network effect is outside Writ.
 */
const PRE_IMAGED_CLASSES: ReadonlySet<string> = new Set(['write_local', 'delete_local', 'rollback']);

/**
 * Whether the approver can count on undoing the action afterwards, from what
 * is known before it runs: its class is one the executor keeps pre-images for.
 * The receipt has the final word (a file above WRIT_EXECUTOR_PREIMAGE_MAX_BYTES
 * or an incomplete diff names no method).
 */
export function rollbackAvailable(request: ActionRequest): boolean {
  return PRE_IMAGED_CLASSES.has(request.action_class);
}

/**
 * The packet an approver decides on (Hermit 16.7): what the action does, its
 * risk and why policy asked, the proposer's rationale, the expected effects,
 * every impacted resource (the request's target_resources) and when the
 * request expires, whether a rollback will be available (`rollbackAvailable`),
 * and the ref of the state witness when one was captured (the witness itself
 * is on `approval.requested`). No evidence yet.
 */
export function buildApprovalPacket(command: RequestApproval, expiresAt: string, stateWitnessRef?: string): ApprovalPacket {
  const request = command.action_request;
  return parseContract('ApprovalPacket', ApprovalPacket, {
    task_id: command.task_id,
    step_id: command.step_id,
    attempt_id: command.attempt_id,
    action_request_id: request.action_request_id,
    action_class: request.action_class,
    action_summary: actionSummary(request),
    risk_band: command.risk_band,
    risk_summary: clip(`risk ${command.risk_band}: ${command.reason}`, LIMITS.text),
    decision_rationale: clip(`Proposed by ${request.proposed_by}: ${request.reason}\nPolicy: ${command.reason}`, LIMITS.longText),
    evidence_refs: [],
    expected_effects: request.expected_effects,
    impacted_resources: request.target_resources,
    rollback_available: rollbackAvailable(request),
    expires_at: expiresAt,
    ...(stateWitnessRef === undefined ? {} : { state_witness_ref: stateWitnessRef }),
    policy_result_ref: `policy_result:${command.policy_result_id}`,
  });
}


/** The stored form of a packet (Hermit 16.7: packets are artifacts, inspectable later): `@writ/runtime`'s, which resolutions sign the hash of. */
export const PACKET_DOCUMENT_FORMAT = APPROVAL_PACKET_FORMAT;

/**
 * What is stored as the approval.packet artifact: the packet and, when one was captured, the
 * state witness it refers to (fingerprints and observation time), so the artifact alone shows
 * what the approver was asked and the state the answer depends on.
 */
export function packetDocument(packet: ApprovalPacket, stateWitness?: StateWitness): Record<string, unknown> {
  return approvalPacketDocument(packet, stateWitness);
}

/** The RFC 8785 bytes of a packet document: what is hashed and stored. */
export function packetDocumentBytes(document: Record<string, unknown>): Uint8Array {
  return new TextEncoder().encode(canonicalJson(document));
}

const PACKET_ARTIFACT_REF = /^artifact:sha256:([0-9a-f]{64})$/;

/** `artifact:sha256:<hex>`: `approval_packet_ref` of a packet stored as an artifact. */
export function packetArtifactRef(sha256: string): string {
  return `artifact:sha256:${sha256}`;
}

/** The SHA-256 a packet ref names, or undefined for a ref that is not a stored artifact (older approvals: `sha256:<hash of the packet>`). */
export function packetArtifactSha256(ref: string): string | undefined {
  return PACKET_ARTIFACT_REF.exec(ref)?.[1];
}
