import { LIMITS, type ActionClass, type ApprovalStatus, type IssueReceipt, type Receipt, type ReceiptClass, type ReceiptResultCode, type ReplayClass } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { derivedId } from '@writ/runtime';
import type { ApprovalFacts, AttemptFacts } from './attempt-facts.js';
import { ReceiptServiceError } from './receipt-errors.js';

/** A receipt before it is hashed and signed: everything but `receipt_hash` and `signature`. */
export type ReceiptBody = Omit<Receipt, 'receipt_hash' | 'signature'>;

/**
 * One receipt per attempt, cause and result: `rct-` + their hash, so a
 * redelivered command finds its receipt, while an attempt first receipted as
 * `unknown_outcome` gets a second receipt once its outcome is settled. An
 * `approval_resolved` receipt is one per approval (an attempt may wait for
 * several, one per policy entry).
 */
export function receiptIdFor(command: Pick<IssueReceipt, 'attempt_id' | 'cause' | 'approval_id'>, resultCode: ReceiptResultCode): string {
  const approval = command.approval_id === undefined ? '' : `:${command.approval_id}`;
  return derivedId('rct', `${command.attempt_id}:${command.cause}${approval}:${resultCode}`);
}

/** Receipt class of an action that ran, or was refused, under its class (Hermit 18.1). */
export function receiptClassOf(actionClass: ActionClass): ReceiptClass {
  switch (actionClass) {
    case 'execute_command':
      return 'command_execution';
    case 'publication':
      return 'publish';
    case 'rollback':
      return 'rollback';
    case 'memory_write':
      return 'memory_promotion';
    default:
      return 'tool_execution';
  }
}

const READ_ONLY: readonly ActionClass[] = ['read_local', 'network_read'];

/** `sha256:<hex>` of a JSON value's RFC 8785 form: a content address of something recorded in the log. */
export function contentRef(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}

function clip(text: string): string {
  return text.length <= LIMITS.text ? text : `${text.slice(0, LIMITS.text - 1)}…`;
}

interface Outcome {
  readonly receipt_class: ReceiptClass;
  readonly result_code: ReceiptResultCode;
  readonly result_summary: string;
  readonly capability_grant_ref: string | null;
  readonly environment_ref: string | null;
  readonly output_refs: string[];
  readonly replay_class: ReplayClass;
}

function settledOutcome(facts: AttemptFacts, actionClass: ActionClass): Outcome {
  const execution = facts.execution?.completed ?? null;
  const grantId = execution?.grant_id ?? facts.grant?.jti;
  if (grantId === undefined) {
    throw new ReceiptServiceError('RECEIPT_GRANT_NOT_FOUND', 'a settled attempt was dispatched under a grant, and this one has none', { details: {} });
  }
  let result: ReceiptResultCode;
  if (facts.settledResult !== null) result = facts.settledResult;
  else if (execution === null || execution.outcome === 'unknown' || facts.observedOutcome === 'unknown') result = 'unknown_outcome';
  else result = execution.outcome === 'completed' && execution.exit_code === 0 ? 'succeeded' : 'failed';

  let summary: string;
  if (execution === null) summary = `${actionClass}: dispatched under grant ${grantId}; no execution was recorded, the outcome is unknown`;
  else {
    const ran = execution.timed_out ? `timed out after ${Math.round(execution.duration_ms)} ms` : `exited ${execution.exit_code ?? 'without a code'} after ${Math.round(execution.duration_ms)} ms`;
    const changed = `${execution.changed_files.length} file(s) changed`;
    const error = execution.error === undefined ? '' : `; ${execution.error.code}`;
    summary = `${actionClass}: ${execution.outcome === 'unknown' ? 'outcome unknown' : ran}; ${changed}${error}`;
  }
  // Settled by a director (Hermit 19.4): the receipt says so and asserts nothing about the effect itself.
  const resolution = facts.resolution !== null && facts.resolution.resolved.execution_event_id === facts.execution?.eventId && facts.settledResult !== null ? facts.resolution : null;
  if (resolution !== null) {
    const { resolved } = resolution;
    const note = resolved.note === undefined ? '' : ` (note: ${resolved.note})`;
    summary = `${summary}; the outcome was unknown and resolved as ${resolved.outcome} by ${resolved.resolved_by} at ${resolved.resolved_at}${note}; the effect was not observed by Writ`;
  }
  const outputs =
    execution === null
      ? []
      : [
          `event:${facts.execution?.eventId}`,
          ...(resolution === null ? [] : [`event:${resolution.eventId}`]),
          ...execution.artifacts.map((artifact) => `artifact:${artifact.artifact_id}`),
          `sha256:${execution.stdout_sha256}`,
          `sha256:${execution.stderr_sha256}`,
        ];
  return {
    receipt_class: receiptClassOf(actionClass),
    result_code: result,
    result_summary: clip(`${result}: ${summary}`),
    capability_grant_ref: `grant:${grantId}`,
    environment_ref: execution?.environment === null || execution === null ? null : contentRef(execution.environment),
    // The execution event comes first: whatever the list bound cuts off stays reachable through it.
    output_refs: [...new Set(outputs)].slice(0, LIMITS.listItems),
    replay_class: result === 'unknown_outcome' || resolution !== null ? 'observe_only' : READ_ONLY.includes(actionClass) ? 'idempotent_replay' : 'observe_only',
  };
}

function refusedOutcome(receiptClass: ReceiptClass, summary: string, grantRef: string | null): Outcome {
  return {
    receipt_class: receiptClass,
    result_code: 'refused',
    result_summary: clip(`refused: ${summary}`),
    capability_grant_ref: grantRef,
    environment_ref: null,
    output_refs: [],
    replay_class: 'explain_only',
  };
}

function outcomeOf(command: IssueReceipt, facts: AttemptFacts, actionClass: ActionClass): Outcome {
  switch (command.cause) {
    case 'settled':
      return settledOutcome(facts, actionClass);
    case 'policy_denied': {
      const why = facts.policy?.policy_result.reasoning_summary ?? 'no policy result was recorded';
      return refusedOutcome(receiptClassOf(actionClass), `${actionClass} denied by policy: ${why}`, null);
    }
    case 'approval_denied': {
      const approval = facts.approval;
      const how = approval === null ? 'no approval was recorded' : `approval ${approval.approval_id} ${approval.status}${approval.resolved_by === null ? '' : ` by ${approval.resolved_by}`}`;
      return refusedOutcome('approval_resolution', `${actionClass} not approved: ${how}`, null);
    }
    case 'approval_resolved':
      // Built by approvalResolutionBody; never reached.
      throw new ReceiptServiceError('RECEIPT_APPROVAL_NOT_FOUND', 'an approval resolution is receipted from its approval, not the attempt outcome');
    case 'refused': {
      const why =
        facts.refusal !== null
          ? `${facts.refusal.code}: ${facts.refusal.message}`
          : facts.grant !== null
            ? `grant ${facts.grant.jti} was never used`
            : 'the attempt ended before any side effect';
      return refusedOutcome(receiptClassOf(actionClass), `${actionClass} not run: ${why}`, facts.grant === null ? null : `grant:${facts.grant.jti}`);
    }
  }
}

export interface ReceiptBodyInput {
  readonly command: IssueReceipt;
  readonly facts: AttemptFacts;
  readonly createdAt: string;
  /** `receipt_hash` of the task's previous receipt; null for its first. */
  readonly prevReceiptHash: string | null;
  /** Key id of the signing key. */
  readonly signerRef: string;
  /** For `approval_resolved`: the approval the command names, as the log holds it. */
  readonly approval?: ApprovalFacts;
}

/** How each approval resolution ends, as a receipt result: granted took effect, denied refused the action, the rest withdrew the question. */
const RESOLUTION_RESULTS: Readonly<Record<Exclude<ApprovalStatus, 'pending'>, ReceiptResultCode>> = {
  granted: 'succeeded',
  denied: 'refused',
  expired: 'cancelled',
  cancelled: 'cancelled',
  invalidated: 'cancelled',
};

/**
 * The receipt of one approval resolution (Hermit 16.9, 18.1 `approval_resolution`):
 * which approval of which attempt (approval_ref, attempt ids), on what packet
 * (`approval_packet_ref` and the `approval.requested` event, the state witness
 * captured), by whom and how it was resolved (the resolution event and the
 * content hash of its payload, which holds the resolver, the outcome, whether
 * the witness was revalidated, an invalidation's cause). Chained and signed
 * like every receipt of the task; no grant, nothing ran.
 */
function approvalResolutionBody(input: ReceiptBodyInput, request: { action_request_id: string }): ReceiptBody {
  const { command, approval } = input;
  const approvalId = command.approval_id ?? '';
  if (approval === undefined || approval.requested === null || approval.resolution === null || approval.attempt_id !== command.attempt_id) {
    throw new ReceiptServiceError('RECEIPT_APPROVAL_NOT_FOUND', `task ${command.task_id} holds no resolved approval ${approvalId} of attempt ${command.attempt_id}`, {
      details: { task_id: command.task_id, attempt_id: command.attempt_id, approval_id: approvalId },
    });
  }
  const { requested, resolution } = approval;
  const result = RESOLUTION_RESULTS[resolution.status];
  const cause =
    resolution.invalidation_cause === null
      ? ''
      : ` (${resolution.invalidation_cause}${resolution.drifted_resources.length === 0 ? '' : `: ${resolution.drifted_resources.join(', ')}`})`;
  const by = resolution.resolved_by === null ? '' : ` by ${resolution.resolved_by}`;
  const witness =
    resolution.status !== 'granted'
      ? ''
      : resolution.witness_validated === true
        ? '; state witness revalidated'
        : requested.state_witness_ref === null
          ? '; no state witness was captured'
          : '; state witness NOT revalidated';
  const note = resolution.note === null ? '' : `; ${resolution.note}`;
  const policy = input.facts.policy;
  return {
    receipt_id: receiptIdFor(command, result),
    task_id: command.task_id,
    step_id: command.step_id,
    attempt_id: command.attempt_id,
    receipt_class: 'approval_resolution',
    action_request_ref: `action_request:${request.action_request_id}`,
    input_refs: [
      requested.approval_packet_ref,
      `event:${requested.eventId}`,
      ...(requested.state_witness_ref === null ? [] : [requested.state_witness_ref]),
    ],
    environment_ref: null,
    policy_result_ref: requested.policy_result_ref ?? (policy === null ? null : `policy_result:${policy.policy_result.policy_result_id}`),
    approval_ref: `approval:${approvalId}`,
    capability_grant_ref: null,
    output_refs: [`event:${resolution.eventId}`, contentRef(resolution.payload)],
    result_code: result,
    result_summary: clip(`${result}: approval ${approvalId} ${resolution.status}${cause}${by}${witness}${note}`),
    created_at: input.createdAt,
    rollback_supported: false,
    replay_class: 'explain_only',
    verifiability: 'signed',
    signer_ref: input.signerRef,
    prev_receipt_hash: input.prevReceiptHash,
  };
}

/**
 * The receipt of one attempt (Hermit 8.10, 18.2): what was intended (the
 * ActionRequest), what was authorized (policy result, approval, grant), what
 * ran and where (execution event, environment attestation), what it produced
 * (artifacts, output hashes), how it ended, and that it cannot be rolled back
 * by Writ yet. Denials are receipted too, with result `refused` and no grant.
 */
export function buildReceiptBody(input: ReceiptBodyInput): ReceiptBody {
  const { command, facts } = input;
  const request = facts.request;
  if (request === null) {
    throw new ReceiptServiceError('RECEIPT_ATTEMPT_NOT_FOUND', `task ${command.task_id} holds no action request for attempt ${command.attempt_id}`, {
      details: { task_id: command.task_id, attempt_id: command.attempt_id },
    });
  }
  if (command.cause === 'approval_resolved') return approvalResolutionBody(input, request);
  const ran = facts.downgradedRequest ?? request;
  const outcome = outcomeOf(command, facts, ran.action_class);
  const policy = facts.policy;
  const inputs = [`sha256:${sha256Hex(canonicalJson(ran.params))}`, ...(facts.downgradedRequest === null ? [] : [`action_request:${facts.downgradedRequest.action_request_id}`])];
  return {
    receipt_id: receiptIdFor(command, outcome.result_code),
    task_id: command.task_id,
    step_id: command.step_id,
    attempt_id: command.attempt_id,
    receipt_class: outcome.receipt_class,
    action_request_ref: `action_request:${request.action_request_id}`,
    input_refs: inputs,
    environment_ref: outcome.environment_ref,
    policy_result_ref: policy === null ? null : `policy_result:${policy.policy_result.policy_result_id}`,
    approval_ref: facts.approval === null ? null : `approval:${facts.approval.approval_id}`,
    capability_grant_ref: outcome.capability_grant_ref,
    output_refs: outcome.output_refs,
    result_code: outcome.result_code,
    result_summary: outcome.result_summary,
    created_at: input.createdAt,
    ...(policy === null ? {} : { decision_ref: `decision:${policy.decision.decision_id}` }),
    rollback_supported: false,
    replay_class: outcome.replay_class,
    verifiability: 'signed',
    signer_ref: input.signerRef,
    prev_receipt_hash: input.prevReceiptHash,
  };
}
