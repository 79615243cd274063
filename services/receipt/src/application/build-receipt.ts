import {
  GRANT_RENEWALS_MAX,
  LIMITS,
  type ActionClass,
  type ActionParams,
  type ApprovalStatus,
  type CellEnvironment,
  type ExecutionCompleted,
  type IssueReceipt,
  type Receipt,
  type ReceiptApprovalResolution,
  type ReceiptAttestation,
  type ReceiptClass,
  type ReceiptResultCode,
  type ReplayClass,
} from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { derivedId } from '@writ/runtime';
import { contentHash, type ApprovalFacts, type AttemptApproval, type AttemptFacts } from './attempt-facts.js';
import { actionNotAsserted, approvalNotAsserted } from './not-asserted.js';
import { ReceiptServiceError } from './receipt-errors.js';
import { rollbackOf, type RecordedSnapshot } from './rollback-method.js';

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

/**
 * Replay class of an action that ran and settled, by its class (Hermit 18.5).
 * Reads, and file writes and deletes whose whole input is in the request,
 * leave the same state when repeated; anything else may act differently the
 * second time and is observe-only. Nothing Writ runs is byte-for-byte
 * deterministic (clocks, the workspace as it then is), so no class claims
 * `deterministic_replay`. An unknown or director-settled outcome is always
 * observe-only; a refusal ran nothing and is explain-only.
 */
export const REPLAY_CLASS: Readonly<Record<ActionClass, ReplayClass>> = {
  read_local: 'idempotent_replay',
  network_read: 'idempotent_replay',
  write_local: 'idempotent_replay',
  delete_local: 'idempotent_replay',
  execute_command: 'observe_only',
  network_write: 'observe_only',
  credentialed_api_call: 'observe_only',
  vcs_mutation: 'observe_only',
  publication: 'observe_only',
  payment: 'observe_only',
  memory_write: 'observe_only',
  rollback: 'observe_only',
};

/** The attested fields of the cell as the executor read it back. */
export function attestationOf(environment: CellEnvironment): ReceiptAttestation {
  return {
    image: environment.image,
    image_id: environment.image_id,
    network_mode: environment.network_mode,
    readonly_rootfs: environment.readonly_rootfs,
    cap_drop: [...environment.cap_drop],
    user: environment.user,
    memory_bytes: environment.memory_bytes,
    pids_limit: environment.pids_limit,
    mounts: environment.mounts.map((mount) => ({ destination: mount.destination, read_only: mount.read_only })),
    ...(environment.egress_hosts === undefined ? {} : { egress_hosts: [...environment.egress_hosts] }),
  };
}

/** How the attempt's approval was resolved, bound by the resolution event and its content hash; undefined while pending or when none was requested. */
function approvalResolutionOf(approval: AttemptApproval | null): ReceiptApprovalResolution | undefined {
  if (approval === null || approval.resolution === null || approval.status === 'pending') return undefined;
  return {
    status: approval.status,
    resolved_by: approval.resolved_by,
    resolution_ref: `event:${approval.resolution.eventId}`,
    resolution_hash: approval.resolution.payloadHash,
    packet_ref: approval.approval_packet_ref,
    ...(approval.resolution.witness_validated === null ? {} : { witness_validated: approval.resolution.witness_validated }),
  };
}

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
  /** The settlement of an unknown outcome by a director the receipt relies on. */
  readonly directorResolution: NonNullable<AttemptFacts['resolution']>['resolved'] | null;
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
    // Only what the record shows (issue 13): "exited" only with an exit status; a use proven never started says so.
    const ran =
      execution.outcome === 'not_run'
        ? `never started (use ${execution.use_no} was proven not run and released)`
        : execution.timed_out
          ? `timed out after ${Math.round(execution.duration_ms)} ms`
          : execution.exit_code === null
            ? `did not complete (no exit status) after ${Math.round(execution.duration_ms)} ms`
            : `exited ${execution.exit_code} after ${Math.round(execution.duration_ms)} ms`;
    const changed = `${execution.changed_files.length} file(s) changed`;
    const error = execution.error === undefined ? '' : `; ${execution.error.code}`;
    summary = `${actionClass}: ${execution.outcome === 'unknown' ? 'outcome unknown' : ran}; ${changed}${error}`;
    if (execution.memory !== undefined) summary = `${actionClass}: ${memorySummary(execution.memory)}${error}`;
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
          // A memory_write's effect: the memory event on the record's own stream, bound by its hash (recorded in
          // execution.completed.memory, so a task bundle resolves it; the event itself is not in the task's segment).
          ...(execution.memory === undefined ? [] : [`sha256:${execution.memory.event_sha256}`]),
          ...execution.artifacts.map((artifact) => `artifact:${artifact.artifact_id}`),
          `sha256:${execution.stdout_sha256}`,
          `sha256:${execution.stderr_sha256}`,
        ];
  const renewed = renewalNote(facts);
  if (result === 'failed' && execution?.outcome === 'not_run' && resolution === null) {
    // Its last use was proven never started and nothing ran after it (issue 13: "failed" read as "ran and
    // failed" where the command never ran): the receipt says the action was not run, and why it stopped.
    // The refusal is of the latest grant: the one in force, a renewal when the attempt was renewed.
    const refusedGrant = facts.grant?.jti ?? grantId;
    const renewals = facts.grantsIssued - 1;
    const limit = renewals >= GRANT_RENEWALS_MAX ? ` (its grant renewed ${renewals} time(s), the limit)` : '';
    const refusal = facts.refusal === null ? '' : `; then the executor refused grant ${refusedGrant}: ${facts.refusal.code}: ${facts.refusal.message}${limit}`;
    return refusedOutcome(receiptClassOf(actionClass), `${actionClass} not run: ${summary}${renewed}${refusal}`, `grant:${refusedGrant}`);
  }
  summary = `${summary}${renewed}`;
  return {
    receipt_class: receiptClassOf(actionClass),
    result_code: result,
    result_summary: clip(`${result}: ${summary}`),
    capability_grant_ref: `grant:${grantId}`,
    environment_ref: execution?.environment === null || execution === null ? null : contentRef(execution.environment),
    // The execution event comes first: whatever the list bound cuts off stays reachable through it.
    output_refs: [...new Set(outputs)].slice(0, LIMITS.listItems),
    replay_class: result === 'unknown_outcome' || resolution !== null ? 'observe_only' : REPLAY_CLASS[actionClass],
    directorResolution: resolution?.resolved ?? null,
  };
}

/** What a memory_write came to, in the receipt's words: promoted, invalidated, or not promoted and why (Hermit 6.3.1). */
function memorySummary(memory: NonNullable<ExecutionCompleted['memory']>): string {
  switch (memory.outcome) {
    case 'promoted':
      return `promoted memory ${memory.memory_id} (memory.promoted ${memory.event_id})`;
    case 'invalidated':
      return `invalidated memory ${memory.memory_id}; the record is kept, marked invalidated (memory.invalidated ${memory.event_id})`;
    case 'degraded_to_working_state':
      return `memory ${memory.memory_id} was NOT promoted: unsupported (${(memory.reasons ?? []).join(', ')}), it degraded to a working state candidate (memory.promotion_degraded ${memory.event_id})`;
  }
}

/**
 * What the receipt says of the renewals of an executing attempt's grant (issue 13): which grant
 * took whose place, after which uses of it were proven never started, and when (and how) it had
 * expired. Empty when the attempt ran on the grant it started executing on.
 */
function renewalNote(facts: AttemptFacts): string {
  return facts.renewals
    .map((renewal) => {
      const uses =
        renewal.not_run_uses.length === 0
          ? `no use of ${renewal.renews_grant_id} was claimed`
          : `use ${renewal.not_run_uses.join(', ')} of ${renewal.renews_grant_id} never started (proven not run and released)`;
      const refused = renewal.refusal === null ? '' : `, refused ${renewal.refusal.code}`;
      return `; grant ${renewal.grant_id} renewed grant ${renewal.renews_grant_id} on the same authority: ${uses}, and ${renewal.renews_grant_id} expired at ${renewal.renews_expired_at}${refused}`;
    })
    .join('');
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
    directorResolution: null,
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
  /** The task's `file.preimage` and `file.snapshot` artifacts by content hash (`recordedSnapshots`): pre-images a rollback can restore. */
  readonly snapshots?: ReadonlyMap<string, RecordedSnapshot>;
  /** The task's receipts issued so far (`issuedReceipts`), in log order: a rollback's receipt names the one it rolls back. */
  readonly taskReceipts?: readonly Receipt[];
}

/**
 * The receipt a rollback request names (`params.receipt_id`), as the task's
 * log holds it with the `receipt_hash` the params bind; null when the params
 * name none, or one the log does not hold with that hash.
 */
function rolledBackReceipt(params: ActionParams, receipts: readonly Receipt[]): Receipt | null {
  const id = params['receipt_id'];
  const hash = params['receipt_hash'];
  if (typeof id !== 'string' || typeof hash !== 'string') return null;
  return receipts.find((receipt) => receipt.receipt_id === id && receipt.receipt_hash === hash) ?? null;
}

/** What a rollback's receipt says of the receipt it names, after its own outcome. */
function rollbackNote(params: ActionParams, original: Receipt | null): string {
  if (original !== null) return `rolls back receipt ${original.receipt_id} (${original.receipt_class}, ${original.result_code}; receipt_hash ${original.receipt_hash}), which stays as it was`;
  const id = params['receipt_id'];
  return `names receipt ${typeof id === 'string' ? id : '(none)'}, which the task's log does not hold with the receipt_hash the request binds`;
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
  const policyResultRef = requested.policy_result_ref ?? (policy === null ? null : `policy_result:${policy.policy_result.policy_result_id}`);
  // The policy result is bound by hash only when it is the one the approval was requested on.
  const policyHash = policy !== null && input.facts.policyResultHash !== null && policyResultRef === `policy_result:${policy.policy_result.policy_result_id}` ? input.facts.policyResultHash : null;
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
    policy_result_ref: policyResultRef,
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
    ...(input.facts.requestHash === null ? {} : { request_hash: input.facts.requestHash }),
    ...(policyHash === null ? {} : { policy_result_hash: policyHash }),
    approval_resolution: {
      status: resolution.status,
      resolved_by: resolution.resolved_by,
      resolution_ref: `event:${resolution.eventId}`,
      resolution_hash: contentHash(resolution.payload),
      packet_ref: requested.approval_packet_ref,
      ...(resolution.witness_validated === null ? {} : { witness_validated: resolution.witness_validated }),
    },
    state_witness_ref: requested.state_witness_ref,
    attestation: null,
    not_asserted: approvalNotAsserted({ status: resolution.status, state_witness_ref: requested.state_witness_ref, witness_validated: resolution.witness_validated }),
    rollback: {
      method: 'none',
      statement: 'an approval resolution changes no state outside the log; a later change of mind needs a new approval, not a rollback',
      prerequisites: [],
      steps: [],
    },
  };
}

/**
 * The receipt of one attempt (Hermit 8.10, 18.2), binding its whole chain of
 * authority: what was intended (the ActionRequest and its content hash), what
 * was authorized (the policy result and its hash, the approval with its
 * resolver and resolution event, the grant and the hash of its JWS, the state
 * witness taken before execution), what ran and where (the execution event,
 * the cell as actually applied), what it produced (artifacts, output hashes),
 * how it ended, its replay class, whether and how it can be rolled back, and
 * in plain words what it does not assert. Denials are receipted too, with
 * result `refused` and no grant.
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
  const settled = outcomeOf(command, facts, ran.action_class);
  // A rollback names the receipt it rolls back (Hermit 18.6): `receipt:<id>` among its inputs, bound by the hash its params carry.
  const rollingBack = ran.action_class === 'rollback';
  const original = rollingBack ? rolledBackReceipt(ran.params, input.taskReceipts ?? []) : null;
  const outcome: Outcome = rollingBack ? { ...settled, result_summary: clip(`${settled.result_summary}; ${rollbackNote(ran.params, original)}`) } : settled;
  const policy = facts.policy;
  const inputs = [
    `sha256:${sha256Hex(canonicalJson(ran.params))}`,
    ...(facts.downgradedRequest === null ? [] : [`action_request:${facts.downgradedRequest.action_request_id}`]),
    ...(original === null ? [] : [`receipt:${original.receipt_id}`]),
  ];
  // Only a settled attempt's own execution is attested; a refusal ran nothing.
  const execution = command.cause === 'settled' ? (facts.execution?.completed ?? null) : null;
  const rollback = rollbackOf({
    actionClass: ran.action_class,
    result: outcome.result_code,
    execution,
    settledByDirector: outcome.directorResolution !== null,
    snapshots: input.snapshots ?? new Map(),
  });
  const approvalResolution = approvalResolutionOf(facts.approval);
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
    rollback_supported: rollback.method !== 'none',
    replay_class: outcome.replay_class,
    verifiability: 'signed',
    signer_ref: input.signerRef,
    prev_receipt_hash: input.prevReceiptHash,
    ...(facts.requestHash === null ? {} : { request_hash: facts.requestHash }),
    ...(facts.policyResultHash === null ? {} : { policy_result_hash: facts.policyResultHash }),
    ...(approvalResolution === undefined ? {} : { approval_resolution: approvalResolution }),
    ...(outcome.capability_grant_ref === null || facts.grantJwsHash === null || outcome.capability_grant_ref !== `grant:${facts.grant?.jti}` ? {} : { grant_hash: facts.grantJwsHash }),
    state_witness_ref: facts.approval?.state_witness_ref ?? null,
    attestation: execution === null || execution.environment === null ? null : attestationOf(execution.environment),
    not_asserted: actionNotAsserted({
      result: outcome.result_code,
      execution,
      resolution: outcome.directorResolution,
      approval:
        facts.approval === null
          ? null
          : { status: facts.approval.status, state_witness_ref: facts.approval.state_witness_ref, witness_validated: facts.approval.resolution?.witness_validated ?? null },
      grant: facts.grant === null ? null : { jwsRecorded: facts.grantJwsHash !== null },
      rollback,
    }),
    rollback,
  };
}
