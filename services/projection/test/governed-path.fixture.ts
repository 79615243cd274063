import { createHash } from 'node:crypto';
import {
  ActionRequest,
  Artifact,
  DecisionRecorded,
  EventDraft,
  EventEnvelope,
  ExecutionCompleted,
  ExecutionStarted,
  IngressAccepted,
  IngressReceived,
  IngressRejected,
  PolicyEvaluated,
  ReceiptIssued,
  type EntityType,
  type IngressRejectionCode,
} from '@writ/contracts';
import { ApprovalEvent, AttemptEvent, CellEvent, GrantEvent, StepEvent, TaskEvent } from '@writ/kernel';
import type { ProjectedEvent } from '../src/application/projected-event.js';

/**
 * A realistic governed path as the services append it (docs/governed-path.md),
 * every payload checked against the real schemas (contracts for facts, the
 * kernel's event unions for state-machine events), so the folds are tested
 * on the shapes the log will hold.
 */

export type Aggregate = 'task' | 'ingress' | 'principal' | 'cell' | 'memory';

export interface StoryEvent {
  readonly aggregate: Aggregate;
  readonly aggregateId: string;
  readonly draft: EventDraft;
}

export interface StoryIds {
  readonly tag: string;
  readonly principal: string;
  readonly ingress: string;
  readonly actionRequest: string;
  readonly task: string;
  readonly step: string;
  readonly attempt: string;
  readonly policyResult: string;
  readonly decision: string;
  readonly approval: string;
  readonly grant: string;
  readonly receipt: string;
  readonly executor: string;
}

export function storyIds(tag: string): StoryIds {
  return {
    tag,
    principal: `agent-${tag}`,
    ingress: `ing-${tag}`,
    actionRequest: `ar-${tag}`,
    task: `task-${tag}`,
    step: `step-${tag}`,
    attempt: `attempt-${tag}`,
    policyResult: `pr-${tag}`,
    decision: `dec-${tag}`,
    approval: `approval-${tag}`,
    grant: `grant-${tag}`,
    receipt: `receipt-${tag}`,
    executor: 'executor-1',
  };
}

const T0 = Date.parse('2030-01-01T00:00:00Z');
/** The instant `seconds` after the story starts. */
export const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();
const HEX_A = 'a'.repeat(64);
const HEX_B = 'b'.repeat(64);

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A compact JWS of `payload` with a dummy signature: the projection never verifies, it only peeks. */
export function fakeJws(payload: unknown, kid = 'agent-k1'): string {
  return `${b64({ alg: 'EdDSA', kid })}.${b64(payload)}.${Buffer.alloc(64).toString('base64url')}`;
}

export function actionRequest(ids: StoryIds, overrides: Partial<ActionRequest> = {}): ActionRequest {
  return ActionRequest.parse({
    action_request_id: ids.actionRequest,
    task: { title: `Fix the bug (${ids.tag})`, goal: 'Make the failing test pass.', policy_profile: 'local_edit_allowed', files_owned: ['src/**'] },
    step: { kind: 'edit', title: 'Edit src/a.ts' },
    action_class: 'write_local',
    target_resources: ['src/a.ts'],
    params: { path: 'src/a.ts', content: 'export const fixed = true;\n' },
    expected_effects: ['src/a.ts rewritten'],
    reversibility_hint: 'reversible',
    reason: 'The test expects fixed to be true.',
    proposed_by: ids.principal,
    proposed_at: at(0),
    ...overrides,
  });
}

type Kernel = { safeParse: (v: unknown) => { success: boolean; error?: unknown } };

function checked(schema: Kernel, type: string, data: unknown): Record<string, unknown> {
  const result = schema.safeParse({ type, data });
  if (!result.success) throw new Error(`fixture ${type} does not match the kernel schema: ${String(result.error)}`);
  return data as Record<string, unknown>;
}

function fact<T>(schema: { parse: (v: unknown) => T }, data: unknown): Record<string, unknown> {
  return schema.parse(data) as Record<string, unknown>;
}

interface DraftInput {
  readonly type: string;
  readonly entity: EntityType;
  readonly entityId: string;
  readonly payload: Record<string, unknown>;
  readonly occurredAt: string;
  readonly step?: boolean;
  readonly attempt?: boolean;
  readonly actor?: string;
}

function taskEvent(ids: StoryIds, input: DraftInput): StoryEvent {
  const draft = EventDraft.parse({
    event_id: `${ids.task}-${input.type.replaceAll('.', '_')}`.slice(0, 128),
    schema_version: 1,
    event_type: input.type,
    entity_type: input.entity,
    entity_id: input.entityId,
    ...(input.step === false ? {} : { step_id: ids.step }),
    ...(input.attempt === false ? {} : { attempt_id: ids.attempt }),
    occurred_at: input.occurredAt,
    actor_type: 'service',
    actor_id: input.actor ?? 'orchestrator',
    payload: input.payload,
    causation_id: null,
    correlation_id: ids.task,
    idempotency_key: `${ids.attempt}:${input.type}`,
  });
  return { aggregate: 'task', aggregateId: ids.task, draft };
}

function ingressEvent(ids: StoryIds, type: string, payload: Record<string, unknown>, occurredAt: string): StoryEvent {
  const draft = EventDraft.parse({
    event_id: `${ids.ingress}-${type.replaceAll('.', '_')}`,
    schema_version: 1,
    event_type: type,
    entity_type: 'ingress',
    entity_id: ids.ingress,
    occurred_at: occurredAt,
    actor_type: 'service',
    actor_id: 'ingress',
    payload,
    causation_id: null,
    correlation_id: ids.actionRequest,
    idempotency_key: `${ids.ingress}:${type}`,
  });
  return { aggregate: 'ingress', aggregateId: ids.ingress, draft };
}

// ---- ingress -----------------------------------------------------------------------------------

export function ingressReceived(ids: StoryIds, raw: string, seconds = 1): StoryEvent {
  return ingressEvent(
    ids,
    'ingress.received',
    fact(IngressReceived, {
      ingress_id: ids.ingress,
      source_channel: 'nats',
      claimed_principal_id: ids.principal,
      idempotency_key: ids.actionRequest,
      raw,
      raw_sha256: createHash('sha256').update(raw).digest('hex'),
      received_at: at(seconds),
    }),
    at(seconds),
  );
}

export function ingressRejected(ids: StoryIds, code: IngressRejectionCode, options: { withActionId: boolean; seconds?: number }): StoryEvent {
  const seconds = options.seconds ?? 2;
  return ingressEvent(
    ids,
    'ingress.rejected',
    fact(IngressRejected, {
      ingress_id: ids.ingress,
      reason_code: code,
      message: 'refused',
      ...(options.withActionId ? { action_request_id: ids.actionRequest } : {}),
      at: at(seconds),
    }),
    at(seconds),
  );
}

export function ingressAccepted(ids: StoryIds, seconds = 3): StoryEvent {
  return ingressEvent(
    ids,
    'ingress.accepted',
    fact(IngressAccepted, {
      ingress_id: ids.ingress,
      action_request_id: ids.actionRequest,
      principal_id: ids.principal,
      task_id: ids.task,
      step_id: ids.step,
      attempt_id: ids.attempt,
      created_task: true,
      at: at(seconds),
    }),
    at(seconds),
  );
}

// ---- the task stream -----------------------------------------------------------------------------

/** What ingress appends for a new task, ending with the attempt awaiting policy. */
export function taskOpening(ids: StoryIds, request: ActionRequest, seconds = 2): StoryEvent[] {
  const t = at(seconds);
  return [
    taskEvent(ids, {
      type: 'task.created',
      entity: 'task',
      entityId: ids.task,
      step: false,
      attempt: false,
      actor: 'ingress',
      occurredAt: t,
      payload: checked(TaskEvent, 'task.created', {
        task_id: ids.task,
        title: request.task?.title ?? 'task',
        goal: request.task?.goal ?? 'goal',
        owner_principal_id: ids.principal,
        policy_profile_ref: 'local_edit_allowed',
        task_contract_ref: `artifact:contract-${ids.tag}`,
        files_owned: ['src/**'],
        priority: 'normal',
        at: t,
      }),
    }),
    taskEvent(ids, { type: 'task.marked_ready', entity: 'task', entityId: ids.task, step: false, attempt: false, actor: 'ingress', occurredAt: t, payload: checked(TaskEvent, 'task.marked_ready', { at: t }) }),
    taskEvent(ids, { type: 'task.started', entity: 'task', entityId: ids.task, step: false, attempt: false, actor: 'ingress', occurredAt: t, payload: checked(TaskEvent, 'task.started', { at: t }) }),
    taskEvent(ids, {
      type: 'step.planned',
      entity: 'step',
      entityId: ids.step,
      attempt: false,
      actor: 'ingress',
      occurredAt: t,
      payload: checked(StepEvent, 'step.planned', {
        step_id: ids.step,
        task_id: ids.task,
        kind: 'edit',
        title: 'Edit src/a.ts',
        contract_ref: `artifact:step-${ids.tag}`,
        depends_on: [],
        max_attempts: 3,
        at: t,
      }),
    }),
    taskEvent(ids, { type: 'step.attempt_opened', entity: 'step', entityId: ids.step, attempt: false, actor: 'ingress', occurredAt: t, payload: checked(StepEvent, 'step.attempt_opened', { attempt_id: ids.attempt, attempt_no: 1, at: t }) }),
    taskEvent(ids, {
      type: 'attempt.created',
      entity: 'attempt',
      entityId: ids.attempt,
      actor: 'ingress',
      occurredAt: t,
      payload: checked(AttemptEvent, 'attempt.created', { attempt_id: ids.attempt, task_id: ids.task, step_id: ids.step, attempt_no: 1, idempotency_key: ids.actionRequest, at: t }),
    }),
    taskEvent(ids, {
      type: 'attempt.awaiting_policy',
      entity: 'attempt',
      entityId: ids.attempt,
      actor: 'ingress',
      occurredAt: t,
      payload: checked(AttemptEvent, 'attempt.awaiting_policy', { action_request: request, at: t }),
    }),
  ];
}

const policyDecision = (ids: StoryIds, outcome: 'allow' | 'require_approval' | 'deny', band: 'low' | 'high') => ({
  policy_result_id: ids.policyResult,
  outcome,
  risk_band: band,
  profile_id: 'local_edit_allowed',
  policy_version: 'v1',
  witness_required: false,
});

export function policyEvaluated(ids: StoryIds, outcome: 'allow' | 'require_approval' | 'deny', seconds: number): StoryEvent {
  const t = at(seconds);
  const band = outcome === 'allow' ? 'low' : 'high';
  return taskEvent(ids, {
    type: 'policy.evaluated',
    entity: 'decision',
    entityId: ids.decision,
    actor: 'policy',
    occurredAt: t,
    payload: fact(PolicyEvaluated, {
      policy_result: {
        policy_result_id: ids.policyResult,
        task_id: ids.task,
        step_id: ids.step,
        attempt_id: ids.attempt,
        action_request_id: ids.actionRequest,
        outcome,
        action_class: 'write_local',
        risk_band: band,
        action_summary: 'write src/a.ts',
        risk_summary: 'a local, reversible edit',
        policy_profile_ref: 'local_edit_allowed',
        policy_version: 'v1',
        affected_resources: ['src/a.ts'],
        reasoning_summary: 'inside files_owned',
        matched_rules: ['local_edit'],
        witness_required: false,
        revalidation_conditions: [],
        ...(outcome === 'require_approval' ? { approver_roles: ['director'] } : {}),
        evaluated_at: t,
        evaluated_by: 'policy',
      },
      decision: {
        decision_id: ids.decision,
        task_id: ids.task,
        step_id: ids.step,
        attempt_id: ids.attempt,
        decision_type: 'safety',
        summary: `policy: ${outcome}`,
        rationale: 'the edit stays inside the task scope',
        evidence_refs: [],
        risk_level: band,
        decided_by: 'policy',
        reversible: true,
        created_at: t,
      },
    }),
  });
}

export function attemptAuthorized(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'attempt.authorized',
    entity: 'attempt',
    entityId: ids.attempt,
    occurredAt: t,
    payload: checked(AttemptEvent, 'attempt.authorized', { via: 'policy_allow', policy: policyDecision(ids, 'allow', 'low'), at: t }),
  });
}

export function attemptPolicyDenied(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'attempt.policy_denied',
    entity: 'attempt',
    entityId: ids.attempt,
    occurredAt: t,
    payload: checked(AttemptEvent, 'attempt.policy_denied', {
      policy: policyDecision(ids, 'deny', 'high'),
      reasons: [{ code: 'sacred_scope', message: 'touches a sacred path' }],
      at: t,
    }),
  });
}

export function attemptAwaitingApproval(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'attempt.awaiting_approval',
    entity: 'attempt',
    entityId: ids.attempt,
    occurredAt: t,
    payload: checked(AttemptEvent, 'attempt.awaiting_approval', { policy: policyDecision(ids, 'require_approval', 'high'), approval_id: ids.approval, at: t }),
  });
}

export function approvalRequested(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'approval.requested',
    entity: 'approval',
    entityId: ids.approval,
    actor: 'approval',
    occurredAt: t,
    payload: checked(ApprovalEvent, 'approval.requested', {
      approval_id: ids.approval,
      task_id: ids.task,
      step_id: ids.step,
      attempt_id: ids.attempt,
      approval_type: 'action',
      requested_action_ref: `action_request:${ids.actionRequest}`,
      approval_packet_ref: `artifact:packet-${ids.tag}`,
      requested_by: ids.principal,
      policy_result_ref: `policy_result:${ids.policyResult}`,
      expires_at: at(seconds + 3600),
      at: t,
    }),
  });
}

export function approvalResolved(ids: StoryIds, decision: 'granted' | 'denied', seconds: number): StoryEvent {
  const t = at(seconds);
  const data = decision === 'granted' ? { resolved_by: 'director-1', note: 'ok', witness_validated: false, at: t } : { resolved_by: 'director-1', note: 'no', at: t };
  return taskEvent(ids, {
    type: `approval.${decision}`,
    entity: 'approval',
    entityId: ids.approval,
    actor: 'approval',
    occurredAt: t,
    payload: checked(ApprovalEvent, `approval.${decision}`, data),
  });
}

export function attemptApprovalDenied(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'attempt.approval_denied',
    entity: 'attempt',
    entityId: ids.attempt,
    occurredAt: t,
    payload: checked(AttemptEvent, 'attempt.approval_denied', { approval_id: ids.approval, at: t }),
  });
}

export function grantClaims(ids: StoryIds, seconds: number, maxUses = 1) {
  const iat = Math.floor((Date.parse(at(seconds)) as number) / 1000);
  return {
    iss: 'approval',
    sub: ids.executor,
    aud: 'writ-executor',
    jti: ids.grant,
    iat,
    exp: iat + 300,
    task_id: ids.task,
    step_id: ids.step,
    attempt_id: ids.attempt,
    action_class: 'write_local' as const,
    resource_scope: { paths: ['src'], hosts: [] },
    max_uses: maxUses,
    issued_by_principal_id: 'policy',
    policy_result_ref: `policy_result:${ids.policyResult}`,
  };
}

export function grantIssued(ids: StoryIds, seconds: number, maxUses = 1): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'grant.issued',
    entity: 'grant',
    entityId: ids.grant,
    actor: 'approval',
    occurredAt: t,
    payload: checked(GrantEvent, 'grant.issued', { claims: grantClaims(ids, seconds, maxUses), at: t }),
  });
}

export function attemptGrantAttached(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'attempt.grant_attached',
    entity: 'attempt',
    entityId: ids.attempt,
    occurredAt: t,
    payload: checked(AttemptEvent, 'attempt.grant_attached', { grant_id: ids.grant, expires_at: at(seconds + 300), at: t }),
  });
}

/** A renewal of the attempt's grant (`<grant>-r1`, issued at `seconds`), attached while the attempt executes: use 1 of the grant never started (issue 13). */
export function grantRenewal(ids: StoryIds, seconds: number): StoryEvent[] {
  const t = at(seconds);
  const renewal = `${ids.grant}-r1`;
  return [
    taskEvent(ids, {
      type: 'grant.issued',
      entity: 'grant',
      entityId: renewal,
      actor: 'approval',
      occurredAt: t,
      payload: checked(GrantEvent, 'grant.issued', { claims: { ...grantClaims(ids, seconds), jti: renewal }, at: t }),
    }),
    taskEvent(ids, {
      type: 'attempt.grant_renewed',
      entity: 'attempt',
      entityId: ids.attempt,
      occurredAt: t,
      payload: checked(AttemptEvent, 'attempt.grant_renewed', {
        grant_id: renewal,
        expires_at: at(seconds + 300),
        renews_grant_id: ids.grant,
        renews_expired_at: at(seconds - 1),
        not_run_uses: [1],
        at: t,
      }),
    }),
  ];
}

export function grantUseClaimed(ids: StoryIds, seconds: number, useNo = 1): StoryEvent {
  const t = at(seconds);
  return {
    ...taskEvent(ids, {
      type: 'grant.use_claimed',
      entity: 'grant',
      entityId: ids.grant,
      actor: ids.executor,
      occurredAt: t,
      payload: checked(GrantEvent, 'grant.use_claimed', { use_id: `use-${ids.tag}-${useNo}`, use_no: useNo, task_id: ids.task, attempt_id: ids.attempt, action_class: 'write_local', at: t }),
    }),
  };
}

export function attemptExecuting(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, { type: 'attempt.executing', entity: 'attempt', entityId: ids.attempt, occurredAt: t, payload: checked(AttemptEvent, 'attempt.executing', { grant_id: ids.grant, at: t }) });
}

/** An artifact an execution captured (`n` tells several apart). */
export function artifactOf(ids: StoryIds, n: number, seconds: number): Artifact {
  const content = `${ids.tag} output ${n}`;
  return Artifact.parse({
    artifact_id: `art-${ids.tag}-${n}`,
    class: 'evidence',
    kind: n === 1 ? 'command.transcript' : 'diff',
    uri: `cas://sha256/${createHash('sha256').update(content).digest('hex')}`,
    content_hash: createHash('sha256').update(content).digest('hex'),
    media_type: 'text/plain',
    byte_size: Buffer.byteLength(content),
    created_at: at(seconds),
    producer: ids.executor,
    retention_class: 'task',
    trust_tier: 'observed',
    sensitivity_class: 'internal',
    task_id: ids.task,
    step_id: ids.step,
    attempt_id: ids.attempt,
  });
}

export function executionStarted(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'execution.started',
    entity: 'attempt',
    entityId: ids.attempt,
    actor: ids.executor,
    occurredAt: t,
    payload: fact(ExecutionStarted, {
      use_id: `use-${createHash('sha1').update(ids.tag).digest('hex')}`,
      grant_id: ids.grant,
      use_no: 1,
      executor_id: ids.executor,
      container_id: createHash('sha256').update(`container-${ids.tag}`).digest('hex').slice(0, 64),
      exec_id: createHash('sha256').update(`exec-${ids.tag}`).digest('hex').slice(0, 64),
      started_at: t,
      deadline: at(seconds + 60),
    }),
  });
}

export function executionCompleted(ids: StoryIds, outcome: 'completed' | 'unknown', seconds: number, artifacts: readonly Artifact[] = []): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'execution.completed',
    entity: 'attempt',
    entityId: ids.attempt,
    actor: ids.executor,
    occurredAt: t,
    payload: fact(ExecutionCompleted, {
      grant_id: ids.grant,
      use_no: 1,
      executor_id: ids.executor,
      outcome,
      exit_code: outcome === 'completed' ? 0 : null,
      timed_out: false,
      duration_ms: 12,
      stdout_sha256: HEX_A,
      stderr_sha256: HEX_B,
      changed_files: [{ path: 'src/a.ts', change: 'modified', before_sha256: HEX_A, after_sha256: HEX_B }],
      artifacts,
      environment:
        artifacts.length === 0
          ? null
          : {
              image: 'writ/cell:1',
              image_id: `sha256:${HEX_A}`,
              network_mode: 'none',
              readonly_rootfs: true,
              cap_drop: ['ALL'],
              user: '1000:1000',
              memory_bytes: 268435456,
              pids_limit: 128,
              mounts: [{ destination: '/cell', read_only: false }],
            },
      at: t,
    }),
  });
}

export function attemptObserving(ids: StoryIds, outcome: 'completed' | 'unknown', seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'attempt.observing',
    entity: 'attempt',
    entityId: ids.attempt,
    occurredAt: t,
    payload: checked(AttemptEvent, 'attempt.observing', { execution_outcome: outcome, output_refs: [], at: t }),
  });
}

export function attemptReceiptPending(ids: StoryIds, result: 'succeeded' | 'failed', seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'attempt.receipt_pending',
    entity: 'attempt',
    entityId: ids.attempt,
    occurredAt: t,
    payload: checked(AttemptEvent, 'attempt.receipt_pending', { result_code: result, evidence_refs: [], at: t }),
  });
}

export function receiptIssued(ids: StoryIds, result: 'succeeded' | 'failed', seconds: number, jws = fakeJws({ receipt_id: ids.receipt }, 'receipt-k1')): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'receipt.issued',
    entity: 'receipt',
    entityId: ids.receipt,
    actor: 'receipt',
    occurredAt: t,
    payload: fact(ReceiptIssued, {
      receipt: {
        receipt_id: ids.receipt,
        task_id: ids.task,
        step_id: ids.step,
        attempt_id: ids.attempt,
        receipt_class: 'tool_execution',
        action_request_ref: `action_request:${ids.actionRequest}`,
        input_refs: [],
        environment_ref: null,
        policy_result_ref: `policy_result:${ids.policyResult}`,
        approval_ref: null,
        capability_grant_ref: `grant:${ids.grant}`,
        output_refs: [],
        result_code: result,
        result_summary: `the edit ${result}`,
        created_at: t,
        verifiability: 'hash_chained',
        prev_receipt_hash: null,
        receipt_hash: HEX_A,
      },
      jws,
    }),
  });
}

export function attemptSucceeded(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, { type: 'attempt.succeeded', entity: 'attempt', entityId: ids.attempt, occurredAt: t, payload: checked(AttemptEvent, 'attempt.succeeded', { receipt_ref: `receipt:${ids.receipt}`, at: t }) });
}

export function attemptFailed(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'attempt.failed',
    entity: 'attempt',
    entityId: ids.attempt,
    occurredAt: t,
    payload: checked(AttemptEvent, 'attempt.failed', { reason_code: 'exit_nonzero', reason: 'the command failed', receipt_ref: `receipt:${ids.receipt}`, at: t }),
  });
}

export function taskCompleted(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, { type: 'task.completed', entity: 'task', entityId: ids.task, step: false, attempt: false, occurredAt: t, payload: checked(TaskEvent, 'task.completed', { summary: 'fixed', at: t }) });
}

export function stepMarkedReady(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, { type: 'step.marked_ready', entity: 'step', entityId: ids.step, attempt: false, actor: 'ingress', occurredAt: t, payload: checked(StepEvent, 'step.marked_ready', { at: t }) });
}

export function attemptLeased(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'attempt.leased',
    entity: 'attempt',
    entityId: ids.attempt,
    actor: 'ingress',
    occurredAt: t,
    payload: checked(AttemptEvent, 'attempt.leased', { workspace_lease_ref: `workspace:${ids.task}`, at: t }),
  });
}

export function stepSucceeded(ids: StoryIds, seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, { type: 'step.succeeded', entity: 'step', entityId: ids.step, attempt: false, occurredAt: t, payload: checked(StepEvent, 'step.succeeded', { attempt_id: ids.attempt, at: t }) });
}

/** The Decision recorded with an approval resolution (its resolver decided). */
export function decisionRecorded(ids: StoryIds, outcome: 'granted' | 'denied', seconds: number): StoryEvent {
  const t = at(seconds);
  return taskEvent(ids, {
    type: 'decision.recorded',
    entity: 'decision',
    entityId: `${ids.decision}-resolution`,
    actor: 'approval',
    occurredAt: t,
    payload: fact(DecisionRecorded, {
      decision: {
        decision_id: `${ids.decision}-resolution`,
        task_id: ids.task,
        step_id: ids.step,
        attempt_id: ids.attempt,
        decision_type: 'safety',
        summary: `approval ${outcome} by director-1`,
        rationale: outcome === 'granted' ? 'the packet matches the witnessed state' : 'too risky',
        evidence_refs: [],
        risk_level: 'high',
        decided_by: 'director-1',
        reversible: false,
        created_at: t,
      },
      subject_ref: `approval:${ids.approval}`,
      outcome_event: `approval.${outcome}`,
    }),
  });
}

// ---- cells (writ.evt.cell.<cell_id>) -------------------------------------------------------------

function cellEvent(cellId: string, type: string, data: Record<string, unknown>, seconds: number): StoryEvent {
  const t = at(seconds);
  const draft = EventDraft.parse({
    event_id: `${cellId}-${type.replaceAll('.', '_')}-${seconds}`.slice(0, 128),
    schema_version: 1,
    event_type: type,
    entity_type: 'cell',
    entity_id: cellId,
    occurred_at: t,
    actor_type: 'service',
    actor_id: 'executor',
    payload: checked(CellEvent, type, data),
    causation_id: null,
    correlation_id: cellId,
    idempotency_key: `${cellId}:${type}:${seconds}`,
  });
  return { aggregate: 'cell', aggregateId: cellId, draft };
}

/** A cell created for a director, prepared, activated, checkpointed and closed (the kernel's CellEvent shapes). */
export function cellLifecycle(cellId: string, director: string, seconds = 1): StoryEvent[] {
  const seat = (participantId: string, role: string) => ({ participant_id: participantId, principal_id: participantId, role, isolation: 'standard' });
  return [
    cellEvent(
      cellId,
      'cell.participant_invited',
      {
        cell_id: cellId,
        participant: seat('executor-1', 'executor'),
        invited_by: director,
        expires_at: at(seconds + 900),
        created: {
          director: seat(director, 'director'),
          policy: {
            invitation_ttl_ms: 900_000,
            active_ttl_ms: 14_400_000,
            active_ttl_max_ms: 86_400_000,
            closed_grace_ms: 1_800_000,
            archive_retention_ms: 2_592_000_000,
            heartbeat_timeout_ms: 90_000,
            allow_guest: false,
            allow_substitute: false,
          },
        },
        at: at(seconds),
      },
      seconds,
    ),
    cellEvent(cellId, 'cell.invitation_accepted', { participant_id: 'executor-1', at: at(seconds + 1) }, seconds + 1),
    cellEvent(cellId, 'cell.preparing', { backend: 'docker', prepared_by: 'executor-1', at: at(seconds + 2) }, seconds + 2),
    cellEvent(cellId, 'cell.activated', { spawned_by: 'executor-1', active_expires_at: at(seconds + 3 + 14_400), at: at(seconds + 3) }, seconds + 3),
    cellEvent(cellId, 'cell.checkpoint_started', { checkpoint_id: `${cellId}-cp1`, requested_by: director, final: true, at: at(seconds + 4) }, seconds + 4),
    cellEvent(cellId, 'cell.checkpoint_completed', { checkpoint_id: `${cellId}-cp1`, sha256: HEX_B, final: true, at: at(seconds + 5) }, seconds + 5),
    cellEvent(cellId, 'cell.closed', { reason: 'explicit', closed_by: director, grace_ends_at: at(seconds + 5 + 1_800), at: at(seconds + 5) }, seconds + 6),
  ];
}

// ---- whole stories -------------------------------------------------------------------------------

/** A direct allow, run and receipted: ingress.received … attempt.succeeded, task.completed, in log order. */
export function happyPath(ids: StoryIds, raw = fakeJws(actionRequest(ids))): StoryEvent[] {
  return [
    ingressReceived(ids, raw, 1),
    ...taskOpening(ids, actionRequest(ids), 2),
    ingressAccepted(ids, 3),
    policyEvaluated(ids, 'allow', 4),
    attemptAuthorized(ids, 5),
    grantIssued(ids, 6),
    attemptGrantAttached(ids, 7),
    grantUseClaimed(ids, 8),
    attemptExecuting(ids, 9),
    executionCompleted(ids, 'completed', 10),
    attemptObserving(ids, 'completed', 11),
    attemptReceiptPending(ids, 'succeeded', 12),
    receiptIssued(ids, 'succeeded', 13),
    attemptSucceeded(ids, 14),
    taskCompleted(ids, 15),
  ];
}

/**
 * The governed path as the services append it today, event for event: the
 * intake of docs/governed-path.md step 1 (`step.marked_ready`, `attempt.leased`),
 * the executor's journal (`execution.started`) and captured artifacts, and
 * the orchestrator closing the step; 25 events.
 */
export function fullPath(ids: StoryIds, raw = fakeJws(actionRequest(ids))): StoryEvent[] {
  const opening = taskOpening(ids, actionRequest(ids), 2);
  const [created, ready, started, planned, opened, attemptCreated, awaiting] = opening as [StoryEvent, StoryEvent, StoryEvent, StoryEvent, StoryEvent, StoryEvent, StoryEvent];
  return [
    ingressReceived(ids, raw, 1),
    created,
    ready,
    started,
    planned,
    stepMarkedReady(ids, 2),
    opened,
    attemptCreated,
    attemptLeased(ids, 2),
    awaiting,
    ingressAccepted(ids, 3),
    policyEvaluated(ids, 'allow', 4),
    attemptAuthorized(ids, 5),
    grantIssued(ids, 6),
    attemptGrantAttached(ids, 7),
    grantUseClaimed(ids, 8),
    attemptExecuting(ids, 9),
    executionStarted(ids, 9),
    executionCompleted(ids, 'completed', 10, [artifactOf(ids, 1, 10), artifactOf(ids, 2, 10)]),
    attemptObserving(ids, 'completed', 11),
    attemptReceiptPending(ids, 'succeeded', 12),
    receiptIssued(ids, 'succeeded', 13),
    attemptSucceeded(ids, 14),
    stepSucceeded(ids, 14),
    taskCompleted(ids, 15),
  ];
}

/** An approval path resolved: requested, then granted or denied with the Decision that records it. */
export function resolvedApprovalPath(ids: StoryIds, outcome: 'granted' | 'denied', raw = fakeJws(actionRequest(ids))): StoryEvent[] {
  return [...approvalPath(ids, raw), approvalResolved(ids, outcome, 7), decisionRecorded(ids, outcome, 7)];
}

/** Policy requires approval; the approval is requested and still pending. */
export function approvalPath(ids: StoryIds, raw = fakeJws(actionRequest(ids))): StoryEvent[] {
  return [
    ingressReceived(ids, raw, 1),
    ...taskOpening(ids, actionRequest(ids), 2),
    ingressAccepted(ids, 3),
    policyEvaluated(ids, 'require_approval', 4),
    attemptAwaitingApproval(ids, 5),
    approvalRequested(ids, 6),
  ];
}

/**
 * A log of at least `minEvents` events, as stories (each one task, ingress or
 * cell in order): whole governed paths with artifacts, approvals granted and
 * denied with their decisions, and cell lifecycles, in rotation. Ids carry
 * `prefix` and the story number.
 */
export function governedLog(prefix: string, minEvents: number): StoryEvent[][] {
  const stories: StoryEvent[][] = [];
  let events = 0;
  for (let n = 0; events < minEvents; n++) {
    const ids = storyIds(`${prefix}-${n}`);
    const story = [
      () => fullPath(ids),
      () => resolvedApprovalPath(ids, 'granted'),
      () => resolvedApprovalPath(ids, 'denied'),
      () => cellLifecycle(`cell-${prefix}-${n}`, `director-${n % 7}`, n),
    ][n % 4]!();
    stories.push(story);
    events += story.length;
  }
  return stories;
}

// ---- as the log would hold them (unit tests) ----------------------------------------------------

/**
 * Stamps stories as stored events: stream sequences from `firstSeq`, task_seq
 * per aggregate, placeholder hashes (the folds never look at them).
 */
export function toProjectedEvents(events: readonly StoryEvent[], firstSeq = 1): ProjectedEvent[] {
  const seqs = new Map<string, number>();
  return events.map((event, index) => {
    const key = `${event.aggregate}.${event.aggregateId}`;
    const taskSeq = (seqs.get(key) ?? 0) + 1;
    seqs.set(key, taskSeq);
    const envelope = EventEnvelope.parse({
      ...event.draft,
      task_id: event.aggregateId,
      task_seq: taskSeq,
      prev_event_hash: taskSeq === 1 ? null : HEX_A,
      hash: HEX_B,
    });
    return { streamSeq: firstSeq + index, aggregate: { type: event.aggregate, id: event.aggregateId }, envelope };
  });
}

/** One stored event with another payload (for shapes the schemas would refuse). */
export function withPayload(event: StoryEvent, payload: Record<string, unknown>): StoryEvent {
  return { ...event, draft: { ...event.draft, payload } };
}
