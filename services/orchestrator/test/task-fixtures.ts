import { generateKeyPairSync, sign } from 'node:crypto';
import type {
  ActionRequest,
  ApprovalResolution,
  CapabilityGrantClaims,
  EventDraft,
  ExecutionCompleted,
  KnowledgeLimits,
  PolicyEvaluated,
  PrincipalRegistered,
  PublicEd25519Jwk,
  Receipt,
  ReceiptCause,
  ReceiptIssued,
  ReceiptRollback,
} from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import {
  approvalDecider,
  attemptDecider,
  builtinPolicyProfile,
  evaluatePolicy,
  fold,
  grantDecider,
  stepDecider,
  taskDecider,
  toPolicyResult,
  type ApprovalEvent,
  type ApprovalState,
  type AttemptEvent,
  type AttemptState,
  type StepEvent,
  type StepState,
  type TaskEvent,
  type TaskState,
} from '@writ/kernel';
import type { LoggedEvent } from '../src/application/task-view.js';

/**
 * Builds the events other services append to a task stream (ingress's
 * creation, policy's evaluation, approval's packet and resolution and grant,
 * the executor's claim and completion, the receipt), each through the
 * kernel's own deciders or the contracts, so the orchestrator is driven by
 * exactly what it will meet in the log.
 */

export const T0 = '2030-01-01T00:00:00.000Z';
export const EXECUTOR = 'writ-executor';
export const AGENT = 'agent-1';
export const DIRECTOR = 'director-1';

export interface TaskIds {
  readonly task_id: string;
  readonly step_id: string;
  readonly attempt_id: string;
}

export function taskIds(suffix: string): TaskIds {
  return { task_id: `tsk-${suffix}`, step_id: `stp-${suffix}`, attempt_id: `att-${suffix}` };
}

export function instant(offsetSeconds: number, base = T0): string {
  return new Date(Date.parse(base) + offsetSeconds * 1000).toISOString();
}

export function commandRequest(ids: TaskIds, argv: string[], profile = 'local_edit_allowed'): ActionRequest {
  return {
    action_request_id: `ar-${ids.task_id}`,
    task: { title: 'Write a file', goal: 'Leave a greeting in out.txt', policy_profile: profile, files_owned: ['**'] },
    action_class: 'execute_command',
    target_resources: ['out.txt'],
    params: { argv },
    expected_effects: ['out.txt holds a greeting'],
    reversibility_hint: 'reversible',
    reason: 'The task asks for it.',
    proposed_by: AGENT,
    proposed_at: T0,
  } as ActionRequest;
}

export function writeRequest(ids: TaskIds, profile = 'readonly_analysis'): ActionRequest {
  return {
    action_request_id: `ar-${ids.task_id}`,
    task: { title: 'Edit notes', goal: 'Update the notes', policy_profile: profile, files_owned: ['**'] },
    action_class: 'write_local',
    target_resources: ['notes.txt'],
    params: { path: 'notes.txt', content: 'hello' },
    expected_effects: ['notes.txt updated'],
    reversibility_hint: 'reversible',
    reason: 'The notes are stale.',
    proposed_by: AGENT,
    proposed_at: T0,
  } as ActionRequest;
}

/** A later request in the same task (`task_id`, no task spec), optionally superseding an earlier one. */
export function followUpRequest(taskId: string, base: ActionRequest, id: string, changes: Partial<ActionRequest> = {}): ActionRequest {
  const { task: _task, ...rest } = base;
  return { ...rest, action_request_id: id, task_id: taskId, ...changes } as ActionRequest;
}

type Where = { entity_type: EventDraft['entity_type']; entity_id: string; step_id?: string; attempt_id?: string };

function draft(ids: TaskIds, where: Where, type: string, data: unknown, key: string, at: string, actor = 'writ-test'): EventDraft {
  return {
    event_id: `fx-${key.replace(/[^A-Za-z0-9_-]/g, '-')}`.slice(0, 128),
    schema_version: 1,
    event_type: type,
    ...where,
    occurred_at: at,
    actor_type: 'service',
    actor_id: actor,
    payload: data as Record<string, unknown>,
    causation_id: null,
    correlation_id: ids.task_id,
    idempotency_key: key,
  };
}

/**
 * What ingress appends for a new task: task, step and attempt up to `attempt.awaiting_policy`;
 * with `existingTask`, only the new step and attempt of a later request in the same task.
 */
export function ingressDrafts(ids: TaskIds, request: ActionRequest, options: { at?: string; maxAttempts?: number; existingTask?: boolean } = {}): EventDraft[] {
  const at = options.at ?? T0;
  const spec = request.task ?? { title: 'Task', goal: 'Goal', policy_profile: 'local_edit_allowed', files_owned: ['**'] };
  const out: EventDraft[] = [];
  if (options.existingTask !== true) out.push(...taskCreationDrafts(ids, request, spec, at));
  return [...out, ...stepAndAttemptDrafts(ids, request, at, options.maxAttempts ?? 3)];
}

function taskCreationDrafts(ids: TaskIds, request: ActionRequest, spec: NonNullable<ActionRequest['task']>, at: string): EventDraft[] {
  const meta = { now: at };
  const out: EventDraft[] = [];
  let task: TaskState = taskDecider.initialState();
  const taskEvents: TaskEvent[] = [
    ...taskDecider.decide(
      {
        type: 'create-task',
        data: {
          task_id: ids.task_id,
          title: spec.title,
          goal: spec.goal,
          owner_principal_id: request.proposed_by,
          policy_profile_ref: spec.policy_profile,
          task_contract_ref: `action_request:${request.action_request_id}`,
          files_owned: spec.files_owned,
          ...(spec.sacred_exceptions === undefined ? {} : { sacred_exceptions: spec.sacred_exceptions }),
          ...(spec.brief === undefined ? {} : { brief: spec.brief }),
        },
        metadata: meta,
      },
      task,
    ),
  ];
  task = fold(taskDecider, taskEvents);
  taskEvents.push(...taskDecider.decide({ type: 'mark-task-ready', data: {}, metadata: meta }, task));
  task = fold(taskDecider, taskEvents);
  taskEvents.push(...taskDecider.decide({ type: 'start-task', data: {}, metadata: meta }, task));
  for (const e of taskEvents) out.push(draft(ids, { entity_type: 'task', entity_id: ids.task_id }, e.type, e.data, `${ids.task_id}:${e.type}`, at, 'writ-ingress'));
  return out;
}

function stepAndAttemptDrafts(ids: TaskIds, request: ActionRequest, at: string, maxAttempts: number): EventDraft[] {
  const meta = { now: at };
  const out: EventDraft[] = [];
  const stepEvents: StepEvent[] = [];
  let step: StepState = stepDecider.initialState();
  stepEvents.push(
    ...stepDecider.decide(
      {
        type: 'plan-step',
        data: { step_id: ids.step_id, task_id: ids.task_id, kind: 'run', title: 'Run the action', contract_ref: `action_request:${request.action_request_id}`, max_attempts: maxAttempts },
        metadata: meta,
      },
      step,
    ),
  );
  step = fold(stepDecider, stepEvents);
  stepEvents.push(...stepDecider.decide({ type: 'mark-step-ready', data: {}, metadata: meta }, step));
  step = fold(stepDecider, stepEvents);
  stepEvents.push(...stepDecider.decide({ type: 'open-attempt', data: { attempt_id: ids.attempt_id }, metadata: meta }, step));
  for (const e of stepEvents) {
    out.push(draft(ids, { entity_type: 'step', entity_id: ids.step_id, step_id: ids.step_id }, e.type, e.data, `${ids.step_id}:${e.type}`, at, 'writ-ingress'));
  }

  const attemptEvents: AttemptEvent[] = [];
  let attempt: AttemptState = attemptDecider.initialState();
  attemptEvents.push(
    ...attemptDecider.decide(
      { type: 'create-attempt', data: { ...ids, attempt_no: 1, idempotency_key: request.action_request_id }, metadata: meta },
      attempt,
    ),
  );
  attempt = fold(attemptDecider, attemptEvents);
  attemptEvents.push(...attemptDecider.decide({ type: 'lease-workspace', data: { workspace_lease_ref: `cell:${ids.task_id}` }, metadata: meta }, attempt));
  attempt = fold(attemptDecider, attemptEvents);
  attemptEvents.push(...attemptDecider.decide({ type: 'submit-action', data: { action_request: request }, metadata: meta }, attempt));
  for (const e of attemptEvents) {
    out.push(
      draft(ids, { entity_type: 'attempt', entity_id: ids.attempt_id, step_id: ids.step_id, attempt_id: ids.attempt_id }, e.type, e.data, `${ids.attempt_id}:${e.type}`, at, 'writ-ingress'),
    );
  }
  return out;
}

/** What policy appends: `policy.evaluated` with the kernel's evaluation under `profile` (or a forced outcome's shape). */
export function policyEvaluatedDraft(
  ids: TaskIds,
  request: ActionRequest,
  profileId: string,
  options: { at?: string; entry?: number; withoutRewrite?: boolean; knowledge?: KnowledgeLimits } = {},
): EventDraft {
  const at = options.at ?? instant(1);
  const entry = options.entry ?? 1;
  const evaluation = evaluatePolicy(request, builtinPolicyProfile(profileId), { files_owned: ['**'] });
  const policyResultId = `pr-${ids.attempt_id}-${entry}`;
  const result = toPolicyResult(evaluation, request, {
    policy_result_id: policyResultId,
    task_id: ids.task_id,
    step_id: ids.step_id,
    attempt_id: ids.attempt_id,
    evaluated_at: at,
    evaluated_by: 'writ-policy',
    ...(evaluation.downgrade === undefined ? {} : { rewritten_action_request_ref: `action_request:${evaluation.downgrade.action_request.action_request_id}` }),
  });
  const payload: PolicyEvaluated = {
    ...(evaluation.downgrade === undefined || options.withoutRewrite === true ? {} : { rewritten_action_request: evaluation.downgrade.action_request }),
    ...(options.knowledge === undefined ? {} : { knowledge: options.knowledge }),
    policy_result: result,
    decision: {
      decision_id: `dec-${ids.attempt_id}-${entry}`,
      task_id: ids.task_id,
      step_id: ids.step_id,
      attempt_id: ids.attempt_id,
      decision_type: 'safety',
      summary: `policy ${result.outcome}`,
      rationale: result.reasoning_summary,
      evidence_refs: [],
      risk_level: result.risk_band,
      decided_by: 'writ-policy',
      reversible: true,
      created_at: at,
    },
  };
  return draft(ids, { entity_type: 'decision', entity_id: payload.decision.decision_id, step_id: ids.step_id, attempt_id: ids.attempt_id }, 'policy.evaluated', payload, `${ids.attempt_id}:policy.evaluated:${entry}`, at, 'writ-policy');
}

/** The director's key pair (made once per run): it signs the resolutions `approvalResolvedDraft` records. */
const DIRECTOR_KEY = generateKeyPairSync('ed25519');
const DIRECTOR_KID = `${DIRECTOR}-k1`;

/** `principal.registered` of the director (role director), long before any fixture time: the rig appends it. */
/** The director's public key, as registered. */
export function directorJwk(): PublicEd25519Jwk {
  return { ...(DIRECTOR_KEY.publicKey.export({ format: 'jwk' }) as { kty: 'OKP'; crv: 'Ed25519'; x: string }), kid: DIRECTOR_KID } as PublicEd25519Jwk;
}

/** When the director was registered. */
export const DIRECTOR_REGISTERED_AT = '2000-01-01T00:00:00.000Z';

/** `principal.registered` of the director; `signed`: the operator-signed payload ingress would append (with its authorization). */
export function directorRegisteredDraft(signed?: PrincipalRegistered): EventDraft {
  const jwk = directorJwk();
  const at = DIRECTOR_REGISTERED_AT;
  const payload: PrincipalRegistered = signed ?? { principal_id: DIRECTOR, principal_type: 'user', display_name: 'Director', roles: ['director'], keys: [jwk], registered_by: 'operator', at };
  return {
    event_id: `evt-registered-${DIRECTOR}`,
    schema_version: 1,
    event_type: 'principal.registered',
    entity_type: 'principal',
    entity_id: DIRECTOR,
    occurred_at: at,
    actor_type: 'system',
    actor_id: 'operator',
    payload: payload as unknown as Record<string, unknown>,
    causation_id: null,
    correlation_id: DIRECTOR,
  };
}

/** The director's compact EdDSA JWS over `resolution` (signed synchronously, so drafts stay plain functions). */
export function directorJws(resolution: ApprovalResolution): string {
  const b64 = (value: string | Buffer) => Buffer.from(value).toString('base64url');
  const input = `${b64(JSON.stringify({ alg: 'EdDSA', kid: DIRECTOR_KID }))}.${b64(JSON.stringify(resolution))}`;
  return `${input}.${b64(sign(null, Buffer.from(input), DIRECTOR_KEY.privateKey))}`;
}

/** The packet hash an approval's fixture packet ref names (`artifact:sha256:<hex>`). */
export function packetHashOf(approvalId: string): string {
  return `sha256:${sha256Hex(`packet:${approvalId}`)}`;
}

/** What approval appends when asked: `approval.requested`, with a state witness when policy required one. */
export function approvalRequestedDraft(ids: TaskIds, approvalId: string, options: { at?: string; witness?: boolean } = {}): EventDraft {
  const at = options.at ?? instant(2);
  const events = approvalDecider.decide(
    {
      type: 'request-approval',
      data: {
        approval_id: approvalId,
        ...ids,
        approval_type: 'action',
        requested_action_ref: `action_request:ar-${ids.task_id}`,
        approval_packet_ref: `artifact:${packetHashOf(approvalId)}`,
        requested_by: AGENT,
        expires_at: instant(3600, at),
        ...(options.witness === false ? {} : { state_witness: { ref: `state_witness:${approvalId}`, fingerprints: { build: 'sha256:aaaa' }, observed_at: at } }),
      },
      metadata: { now: at },
    },
    approvalDecider.initialState(),
  );
  return approvalDraft(ids, approvalId, events[0] as ApprovalEvent, at);
}

/**
 * What approval appends when a director resolves: granted (witness revalidated) or denied;
 * a grant whose re-observed fingerprints differ from the witness (`currentFingerprints`)
 * is the kernel's `approval.invalidated` (witness_drift).
 */
export function approvalResolvedDraft(
  ids: TaskIds,
  approvalId: string,
  requested: EventDraft,
  decision: 'grant' | 'deny',
  options: { at?: string; currentFingerprints?: Record<string, string>; unsigned?: boolean } = {},
): EventDraft {
  const at = options.at ?? instant(3);
  const state: ApprovalState = approvalDecider.evolve(approvalDecider.initialState(), { type: requested.event_type, data: requested.payload });
  const resolver = { principal_id: DIRECTOR, roles: ['director'] };
  // Signed by the director over the approval's packet, as `writ approve|deny` does; `unsigned` records none (a forgery).
  const signed =
    options.unsigned === true ? {} : { resolution_jws: directorJws({ approval_id: approvalId, decision, packet_hash: packetHashOf(approvalId), resolved_by: DIRECTOR, resolved_at: at }) };
  const events =
    decision === 'grant'
      ? approvalDecider.decide({ type: 'grant-approval', data: { resolver, ...signed, current_fingerprints: options.currentFingerprints ?? { build: 'sha256:aaaa' } }, metadata: { now: at } }, state)
      : approvalDecider.decide({ type: 'deny-approval', data: { resolver, ...signed, note: 'not now' }, metadata: { now: at } }, state);
  return approvalDraft(ids, approvalId, events[0] as ApprovalEvent, at);
}

/** What approval appends on `approval.cancel`: `task_ended` → `approval.cancelled`, `input_drift` → `approval.invalidated` (cause input_drift). */
export function approvalCancelledDraft(ids: TaskIds, approvalId: string, requested: EventDraft, cause: 'task_ended' | 'input_drift', options: { at?: string } = {}): EventDraft {
  const at = options.at ?? instant(4);
  const state: ApprovalState = approvalDecider.evolve(approvalDecider.initialState(), { type: requested.event_type, data: requested.payload });
  const events =
    cause === 'task_ended'
      ? approvalDecider.decide({ type: 'cancel-approval', data: { resolved_by: 'writ-orchestrator', reason: 'the task ended' }, metadata: { now: at } }, state)
      : approvalDecider.decide({ type: 'invalidate-approval', data: { resolved_by: 'writ-orchestrator', cause: 'input_drift', note: 'superseded' }, metadata: { now: at } }, state);
  return approvalDraft(ids, approvalId, events[0] as ApprovalEvent, at);
}

function approvalDraft(ids: TaskIds, approvalId: string, event: ApprovalEvent, at: string): EventDraft {
  return draft(ids, { entity_type: 'approval', entity_id: approvalId, step_id: ids.step_id, attempt_id: ids.attempt_id }, event.type, event.data, `${approvalId}:${event.type}`, at, 'writ-approval');
}

export function grantId(ids: TaskIds): string {
  return `gnt-${ids.attempt_id}`;
}

/** What approval appends on issue-grant: the kernel's `{ claims, at }` plus the compact JWS. */
export function grantIssuedDraft(
  ids: TaskIds,
  request: ActionRequest,
  options: { at?: string; ttlSeconds?: number; jws?: string | null; approvalId?: string; grantId?: string } = {},
): EventDraft {
  const at = options.at ?? new Date().toISOString();
  const iat = Math.floor(Date.parse(at) / 1000);
  const claims: CapabilityGrantClaims = {
    iss: 'writ-approval',
    sub: EXECUTOR,
    aud: 'writ-executor',
    jti: options.grantId ?? grantId(ids),
    iat,
    exp: iat + (options.ttlSeconds ?? 300),
    task_id: ids.task_id,
    step_id: ids.step_id,
    attempt_id: ids.attempt_id,
    action_class: request.action_class,
    resource_scope: { paths: [...request.target_resources], hosts: [] },
    max_uses: 1,
    issued_by_principal_id: options.approvalId === undefined ? 'writ-policy' : DIRECTOR,
    policy_result_ref: `policy_result:pr-${ids.attempt_id}-1`,
    ...(options.approvalId === undefined ? {} : { approval_ref: `approval:${options.approvalId}` }),
  };
  const [issued] = grantDecider.decide({ type: 'issue-grant', data: { claims }, metadata: { now: at } }, grantDecider.initialState());
  const data = { ...(issued as { data: Record<string, unknown> }).data, ...(options.jws === null ? {} : { jws: options.jws ?? 'eyJhbGciOiJFZERTQSJ9.eyJqdGkiOiJnIn0.c2ln' }) };
  return draft(ids, { entity_type: 'grant', entity_id: claims.jti, step_id: ids.step_id, attempt_id: ids.attempt_id }, 'grant.issued', data, `${claims.jti}:grant.issued`, at, 'writ-approval');
}

/** What the executor appends before running: the claimed use (kernel `claim-grant-use`). */
export function useClaimedDraft(ids: TaskIds, grantIssued: EventDraft, request: ActionRequest, options: { at?: string } = {}): EventDraft {
  const at = options.at ?? new Date().toISOString();
  const payload = grantIssued.payload as { claims: CapabilityGrantClaims; at: string };
  const state = grantDecider.evolve(grantDecider.initialState(), { type: 'grant.issued', data: { claims: payload.claims, at: payload.at } });
  const [claimed] = grantDecider.decide(
    {
      type: 'claim-grant-use',
      data: { use_id: `use-${ids.attempt_id}`, use: { task_id: ids.task_id, attempt_id: ids.attempt_id, action_class: request.action_class, resources: { paths: [...request.target_resources] } } },
      metadata: { now: at },
    } as never,
    state,
  );
  const event = claimed as { type: string; data: unknown };
  return draft(ids, { entity_type: 'grant', entity_id: payload.claims.jti, step_id: ids.step_id, attempt_id: ids.attempt_id }, event.type, event.data, `${payload.claims.jti}:${event.type}:1`, at, EXECUTOR);
}

/** What the executor appends when a director resolves an unknown outcome (`execution.outcome_resolved`). */
export function outcomeResolvedDraft(ids: TaskIds, executionEventId: string, outcome: 'succeeded' | 'failed', options: { at?: string; resolvedBy?: string } = {}): EventDraft {
  const at = options.at ?? new Date().toISOString();
  const payload = {
    grant_id: grantId(ids),
    use_no: 1,
    execution_event_id: executionEventId,
    outcome,
    resolved_by: options.resolvedBy ?? 'director-1',
    resolved_at: at,
    note: 'checked the target by hand',
    resolution_jws_sha256: HASH,
  };
  return draft(ids, { entity_type: 'attempt', entity_id: ids.attempt_id, step_id: ids.step_id, attempt_id: ids.attempt_id }, 'execution.outcome_resolved', payload, `${executionEventId}:execution.outcome_resolved`, at, EXECUTOR);
}

/** What the executor appends when a grant is refused. */
export function grantRefusedDraft(ids: TaskIds, options: { at?: string; code?: string; message?: string; grantId?: string; useId?: string } = {}): EventDraft {
  const at = options.at ?? new Date().toISOString();
  const refused = options.grantId ?? grantId(ids);
  return draft(
    ids,
    { entity_type: 'grant', entity_id: refused, step_id: ids.step_id, attempt_id: ids.attempt_id },
    'grant.refused',
    { use_id: options.useId ?? `use-${ids.attempt_id}`, code: options.code ?? 'GRANT_OUT_OF_SCOPE', message: options.message ?? 'the request touches a path outside the grant', at },
    `${refused}:grant.refused:1`,
    at,
    EXECUTOR,
  );
}

/** What the approval service appends when a director revokes the grant. */
export function grantRevokedDraft(ids: TaskIds, options: { at?: string; grantId?: string } = {}): EventDraft {
  const at = options.at ?? new Date().toISOString();
  const revoked = options.grantId ?? grantId(ids);
  return draft(
    ids,
    { entity_type: 'grant', entity_id: revoked, step_id: ids.step_id, attempt_id: ids.attempt_id },
    'grant.revoked',
    { revoked_by: DIRECTOR, reason: 'revoked by a director', at },
    `${revoked}:grant.revoked`,
    at,
    'writ-approval',
  );
}

const HASH = 'a'.repeat(64);

/** What the executor appends after running. */
export function executionCompletedDraft(
  ids: TaskIds,
  options: { at?: string; outcome?: ExecutionCompleted['outcome']; exitCode?: number | null; changedFiles?: ExecutionCompleted['changed_files']; useNo?: number; grantId?: string } = {},
): EventDraft {
  const useNo = options.useNo ?? 1;
  // Under another grant of the attempt (a renewal): its own key.
  const under = options.grantId === undefined ? '' : `:${options.grantId}`;
  const at = options.at ?? new Date().toISOString();
  const outcome = options.outcome ?? 'completed';
  const payload: ExecutionCompleted = {
    grant_id: options.grantId ?? grantId(ids),
    use_no: useNo,
    executor_id: 'executor-test',
    outcome,
    exit_code: options.exitCode === undefined ? (outcome === 'unknown' ? null : 0) : options.exitCode,
    timed_out: false,
    duration_ms: 12,
    stdout_sha256: HASH,
    stderr_sha256: HASH,
    changed_files: options.changedFiles ?? [{ path: 'out.txt', change: 'added', before_sha256: null, after_sha256: HASH }],
    artifacts: [
      {
        artifact_id: `art-${ids.attempt_id}-stdout`,
        class: 'evidence',
        kind: 'command.transcript',
        uri: `nats-obj://WRIT_ARTIFACTS/sha256-${HASH}`,
        content_hash: HASH,
        media_type: 'text/plain',
        byte_size: 6,
        created_at: at,
        producer: EXECUTOR,
        retention_class: 'task',
        trust_tier: 'observed',
        sensitivity_class: 'internal',
      },
    ],
    environment: null,
    at,
  } as ExecutionCompleted;
  return draft(ids, { entity_type: 'attempt', entity_id: ids.attempt_id, step_id: ids.step_id, attempt_id: ids.attempt_id }, 'execution.completed', payload, `${ids.attempt_id}:execution.completed${under}${useNo === 1 ? '' : `:${useNo}`}`, at, EXECUTOR);
}

/**
 * What the executor appends for use `useNo` proven never to have started (issue 13), in one
 * append: `grant.use_released`, then `execution.completed` with outcome `not_run`.
 */
export function notRunDrafts(ids: TaskIds, useNo = 1, options: { at?: string; grantId?: string; useId?: string } = {}): EventDraft[] {
  const at = options.at ?? new Date().toISOString();
  const useId = options.useId ?? `use-${ids.attempt_id}${useNo === 1 ? '' : `-${useNo}`}`;
  const grant = { entity_type: 'grant' as const, entity_id: options.grantId ?? grantId(ids), step_id: ids.step_id, attempt_id: ids.attempt_id };
  const released = draft(ids, grant, 'grant.use_released', { use_id: useId, use_no: useNo, reason_code: 'CELL_USE_FENCED', reason: 'never started; released', at }, `${useId}:grant.use_released`, at, EXECUTOR);
  const under = options.grantId === undefined ? {} : { grantId: options.grantId };
  const completed = executionCompletedDraft(ids, { at, outcome: 'not_run', exitCode: null, changedFiles: [], useNo, ...under });
  const payload = { ...(completed.payload as ExecutionCompleted), artifacts: [], error: { code: 'CELL_USE_FENCED', message: 'never started; released' } };
  return [released, { ...completed, payload }];
}

/** A later use (`useNo` ≥ 2) of the attempt's grant claimed by the executor, after earlier uses were released. */
export function laterUseClaimedDraft(ids: TaskIds, useNo: number, request: ActionRequest, options: { at?: string } = {}): EventDraft {
  const at = options.at ?? new Date().toISOString();
  const payload = { use_id: `use-${ids.attempt_id}-${useNo}`, use_no: useNo, task_id: ids.task_id, attempt_id: ids.attempt_id, action_class: request.action_class, at };
  return draft(ids, { entity_type: 'grant', entity_id: grantId(ids), step_id: ids.step_id, attempt_id: ids.attempt_id }, 'grant.use_claimed', payload, `${grantId(ids)}:grant.use_claimed:${useNo}`, at, EXECUTOR);
}

/** What the receipt service appends. */
export function receiptIssuedDraft(
  ids: TaskIds,
  resultCode: Receipt['result_code'],
  options: { at?: string; cause?: ReceiptCause; approvalId?: string; rollback?: ReceiptRollback; receiptHash?: string } = {},
): EventDraft {
  const at = options.at ?? new Date().toISOString();
  const receiptId = `rct-${ids.attempt_id}-${options.cause ?? 'settled'}${options.approvalId === undefined ? '' : `-${options.approvalId}`}`;
  const dispatched = resultCode === 'succeeded' || resultCode === 'failed' || resultCode === 'unknown_outcome';
  const receipt: Receipt = {
    receipt_id: receiptId,
    task_id: ids.task_id,
    step_id: ids.step_id,
    attempt_id: ids.attempt_id,
    receipt_class: options.cause === 'approval_resolved' ? 'approval_resolution' : 'command_execution',
    action_request_ref: `action_request:ar-${ids.task_id}`,
    input_refs: [],
    environment_ref: null,
    policy_result_ref: `policy_result:pr-${ids.attempt_id}-1`,
    approval_ref: options.approvalId === undefined ? null : `approval:${options.approvalId}`,
    capability_grant_ref: dispatched && options.cause !== 'approval_resolved' ? `grant:${grantId(ids)}` : null,
    output_refs: [],
    result_code: resultCode,
    result_summary: `the action ${resultCode}`,
    created_at: at,
    ...(options.rollback === undefined ? {} : { rollback: options.rollback }),
    ...(options.receiptHash === undefined ? {} : { receipt_hash: options.receiptHash }),
  };
  const payload: ReceiptIssued = { receipt, jws: 'eyJhbGciOiJFZERTQSJ9.e30.c2ln', ...(options.cause === undefined ? {} : { cause: options.cause }) };
  return draft(ids, { entity_type: 'receipt', entity_id: receiptId, step_id: ids.step_id, attempt_id: ids.attempt_id }, 'receipt.issued', payload, `${receiptId}:receipt.issued`, at, 'writ-receipt');
}

/** Drafts as the log would hold them (task_seq 1, 2, 3…), for the pure fold and planner. */
export function logged(drafts: readonly EventDraft[], from = 1): LoggedEvent[] {
  return drafts.map((d, i) => ({ ...d, task_seq: from + i }));
}
