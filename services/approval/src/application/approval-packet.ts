import { ApprovalPacket, LIMITS, parseContract, type ActionRequest, type RequestApproval } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';

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
 * The packet an approver decides on (Hermit 16.7): what the action does, its
 * risk and why policy asked, the proposer's rationale, the expected effects,
 * every impacted resource (the request's target_resources) and when the
 * request expires, and the ref of the state witness when one was captured
 * (the witness itself is on `approval.requested`). No evidence yet; rollback is not offered.
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
    rollback_available: false,
    expires_at: expiresAt,
    ...(stateWitnessRef === undefined ? {} : { state_witness_ref: stateWitnessRef }),
    policy_result_ref: `policy_result:${command.policy_result_id}`,
  });
}

/** Content address of a packet: `sha256:<hex of its RFC 8785 form>`, so what the approver saw can be checked later. */
export function packetRef(packet: ApprovalPacket): string {
  return `sha256:${sha256Hex(canonicalJson(packet))}`;
}
