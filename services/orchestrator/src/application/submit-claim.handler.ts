import {
  BlockedClaim,
  ClaimReply,
  Correction,
  DoneClaim,
  hasErrorCode,
  parseContract,
  type EventDraft,
  type EventEnvelope,
  type SubmitClaim,
} from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import type { TaskRecord } from '@writ/kernel';
import { SIGNED_REQUESTS, decision, handleCommand, verifySignedRequest, type CommandDecision, type SignedRequestFailure, type SignedRequestPrincipals } from '@writ/runtime';
import { redactSecrets, type Logger } from '@writ/telemetry';
import { claimIdFor, eventIdFor } from './ids.js';
import { OrchestratorError, type OrchestratorErrorCode } from './orchestrator.errors.js';
import type { Clock, TaskLog } from './ports.js';
import { taskCommandStream } from './task-command-stream.js';
import { TaskView } from './task-view.js';

/** The three claims of seed 003 the orchestrator takes. */
export type ClaimKind = 'done' | 'blocked' | 'correction';

export interface SubmitClaimDeps {
  readonly log: TaskLog;
  readonly principals: SignedRequestPrincipals;
  readonly clock: Clock;
  /** The orchestrator's principal: actor of what it appends. */
  readonly actorId: string;
  /** ±seconds around the clock a claim's `claimed_at` must lie in. */
  readonly freshnessSeconds: number;
  /** Handles the recorded claim event at once, as the task-event consumer will (the consumer finds the work done). */
  readonly judge: (event: EventEnvelope) => Promise<unknown>;
  /** Re-read-and-append rounds after losing an append race (default 5). */
  readonly maxConflicts?: number;
  readonly logger?: Logger;
}

/** Codes a claimant may see; anything else (the log down, a bug) is ORCHESTRATOR_UNAVAILABLE. */
const REPLY_CODES = new Set<string>([
  'ORCHESTRATOR_CLAIM_SIGNATURE_INVALID',
  'ORCHESTRATOR_CLAIM_SIGNER_NOT_ALLOWED',
  'ORCHESTRATOR_CLAIM_STALE',
  'ORCHESTRATOR_CLAIM_MISMATCH',
  'ORCHESTRATOR_CLAIM_TASK_UNKNOWN',
  'ORCHESTRATOR_TASK_NOT_BRIEFED',
  'ORCHESTRATOR_CLAIM_UNKNOWN',
  'ORCHESTRATOR_UNAVAILABLE',
  'CONTRACT_INVALID',
]);

const FAILURE_CODES: Readonly<Record<'signature_invalid' | 'signer_not_allowed' | 'stale', OrchestratorErrorCode>> = {
  signature_invalid: 'ORCHESTRATOR_CLAIM_SIGNATURE_INVALID',
  signer_not_allowed: 'ORCHESTRATOR_CLAIM_SIGNER_NOT_ALLOWED',
  stale: 'ORCHESTRATOR_CLAIM_STALE',
};

/** `@writ/runtime`'s refusals as the orchestrator's codes; a payload off its contract stays CONTRACT_INVALID. */
const failure: SignedRequestFailure = (reason, message, details, cause) => {
  if (reason === 'contract_invalid') return cause instanceof Error ? cause : new OrchestratorError('ORCHESTRATOR_CLAIM_SIGNATURE_INVALID', message, { details });
  return new OrchestratorError(FAILURE_CODES[reason], message, { cause, details });
};

const KINDS = {
  done: { prefix: 'dcl', event: 'claim.done_submitted' },
  blocked: { prefix: 'bcl', event: 'claim.blocked_submitted' },
  correction: { prefix: 'cor', event: 'claim.correction_recorded' },
} as const;

/**
 * `<root>.qry.orchestrator.claim-done|claim-blocked|claim-correction`
 * (request/reply): a claim signed by the task's owner is verified
 * (`verifySignedRequest`: an active key, the kind's `typ`, fresh), recorded in
 * the task stream before anything is judged (`claim.*_submitted`, secret-looking
 * values redacted), then judged at once by the same planner the task-event
 * consumer runs (kernel `judgeDoneClaim` / `judgeBlockedClaim`). The reply is
 * the claim's standing: refused with every code, accepted, or verifying (the
 * brief's verify command now runs as a governed action; the verdict follows in
 * the task stream). The same signed claim sent again answers its standing
 * (`duplicate: true`) and appends nothing.
 */
export class SubmitClaimHandler {
  constructor(private readonly deps: SubmitClaimDeps) {}

  async submit(kind: ClaimKind, request: SubmitClaim): Promise<ClaimReply> {
    try {
      return await this.#submit(kind, request);
    } catch (error) {
      if (hasErrorCode(error) && REPLY_CODES.has(error.code)) throw error;
      throw new OrchestratorError('ORCHESTRATOR_UNAVAILABLE', 'the claim could not be recorded now; send it again', { cause: error });
    }
  }

  async #submit(kind: ClaimKind, request: SubmitClaim): Promise<ClaimReply> {
    const spec = KINDS[kind];
    const { payload, signer, body } = await this.#verify(kind, request.claim_jws);
    if (payload.task_id !== request.task_id) {
      throw new OrchestratorError('ORCHESTRATOR_CLAIM_MISMATCH', `the signed claim is for task ${payload.task_id}, the request for task ${request.task_id}`, {
        details: { task_id: request.task_id, signed_task_id: payload.task_id },
      });
    }
    const taskId = request.task_id;
    const claimId = claimIdFor(spec.prefix, request.claim_jws);
    const outcome = await handleCommand({
      stream: taskCommandStream(this.deps.log, taskId),
      maxRounds: this.deps.maxConflicts,
      exhausted: () => new OrchestratorError('ORCHESTRATOR_UNAVAILABLE', `task ${taskId} kept changing while the claim was recorded; send it again`),
      decide: ({ events }): CommandDecision<{ readonly standing: ClaimReply } | { readonly appended: EventDraft }> => {
        const view = TaskView.fold(taskId, events);
        const task = this.#checkTask(kind, view, signer, body);
        // Recorded already (a duplicate append lands here too): answered from the log.
        if (recorded(view, kind, claimId)) return decision.done({ standing: replyOf(view, kind, claimId, true) });
        const draft = this.#draft(kind, task, claimId, signer, payload.claimed_at, request.claim_jws, body);
        return decision.append([draft], { appended: draft });
      },
    });
    if ('standing' in outcome) return outcome.standing;
    const stored = (await this.deps.log.read(taskId)).find((event) => event.event_id === outcome.appended.event_id);
    if (stored !== undefined && kind !== 'correction') {
      // Judged now so the claimant hears the verdict; if this loses a race, the task-event consumer judges it from the log.
      await this.deps.judge(stored).catch((error: unknown) => this.deps.logger?.warn({ err: error, task_id: taskId, claim_id: claimId }, 'claim recorded; the consumer will judge it'));
    }
    this.deps.logger?.info({ task_id: taskId, claim_id: claimId, kind, claimed_by: signer }, 'claim recorded');
    return replyOf(TaskView.fold(taskId, await this.deps.log.read(taskId)), kind, claimId, false);
  }

  /** The signature, `typ` and freshness of the kind, any registered signer (ownership is checked against the task); the claim as stored. */
  async #verify(kind: ClaimKind, jws: string): Promise<{ payload: { task_id: string; claimed_at: string }; signer: string; body: ClaimBody }> {
    const rules = { signers: 'any' as const, freshnessSeconds: this.deps.freshnessSeconds };
    const deps = { principals: this.deps.principals, clock: this.deps.clock, failure };
    switch (kind) {
      case 'done': {
        const { payload, signer } = await verifySignedRequest(jws, { ...SIGNED_REQUESTS.doneClaim, ...rules }, deps);
        return { payload, signer, body: { kind, value: parseContract('DoneClaim', DoneClaim, redactSecrets(payload.claim)) } };
      }
      case 'blocked': {
        const { payload, signer } = await verifySignedRequest(jws, { ...SIGNED_REQUESTS.blockedClaim, ...rules }, deps);
        return { payload, signer, body: { kind, value: parseContract('BlockedClaim', BlockedClaim, redactSecrets(payload.claim)) } };
      }
      case 'correction': {
        const { payload, signer } = await verifySignedRequest(jws, { ...SIGNED_REQUESTS.correction, ...rules }, deps);
        return { payload, signer, body: { kind, value: parseContract('Correction', Correction, redactSecrets(payload.correction)) } };
      }
    }
  }

  #checkTask(kind: ClaimKind, view: TaskView, signer: string, body: ClaimBody): TaskRecord {
    const task = view.task;
    if (task.status === 'initial') throw new OrchestratorError('ORCHESTRATOR_CLAIM_TASK_UNKNOWN', `there is no task ${view.taskId}`, { details: { task_id: view.taskId } });
    if (task.owner_principal_id !== signer) {
      throw new OrchestratorError('ORCHESTRATOR_CLAIM_SIGNER_NOT_ALLOWED', `${signer} does not own task ${task.task_id}: only its agent (${task.owner_principal_id}) claims for it`, {
        details: { principal_id: signer, reason: 'not_owner' },
      });
    }
    if (kind !== 'blocked' && task.brief === null) {
      throw new OrchestratorError('ORCHESTRATOR_TASK_NOT_BRIEFED', `task ${task.task_id} was not created from a brief: there is no verify command to hold a done claim to`, {
        details: { task_id: task.task_id },
      });
    }
    if (body.kind === 'correction' && !view.doneClaims.has(body.value.corrects_claim_id)) {
      throw new OrchestratorError('ORCHESTRATOR_CLAIM_UNKNOWN', `task ${task.task_id} holds no done claim ${body.value.corrects_claim_id} to correct`, {
        details: { task_id: task.task_id, claim_id: body.value.corrects_claim_id },
      });
    }
    return task;
  }

  #draft(kind: ClaimKind, task: TaskRecord, claimId: string, signer: string, claimedAt: string, jws: string, body: ClaimBody): EventDraft {
    const type = KINDS[kind].event;
    const key = `${claimId}:${type}`;
    const payload = { claim_id: claimId, claimed_by: signer, claimed_at: claimedAt, claim_jws_sha256: sha256Hex(jws), [body.kind === 'correction' ? 'correction' : 'claim']: body.value };
    return {
      event_id: eventIdFor(task.task_id, key),
      schema_version: 1,
      event_type: type,
      entity_type: 'task',
      entity_id: task.task_id,
      occurred_at: this.deps.clock().toISOString(),
      actor_type: 'service',
      actor_id: this.deps.actorId,
      payload,
      causation_id: null,
      correlation_id: task.task_id,
      idempotency_key: key,
    };
  }
}

/** The claim as it is stored: secret-looking values redacted (invariant 6), still within its contract. */
type ClaimBody = { readonly kind: 'done'; readonly value: DoneClaim } | { readonly kind: 'blocked'; readonly value: BlockedClaim } | { readonly kind: 'correction'; readonly value: Correction };

function recorded(view: TaskView, kind: ClaimKind, claimId: string): boolean {
  if (kind === 'done') return view.doneClaims.has(claimId);
  if (kind === 'blocked') return view.blockedClaims.has(claimId);
  return view.corrections.some((correction) => correction.claim_id === claimId);
}

/** The claim's standing as the log says now. */
export function replyOf(view: TaskView, kind: ClaimKind, claimId: string, duplicate: boolean): ClaimReply {
  const base = { task_id: view.taskId, claim_id: claimId, kind, duplicate, refusals: [], verify_action_request_id: null, question_id: null };
  if (kind === 'done') {
    const claim = view.doneClaims.get(claimId);
    const verdict = claim?.verdict ?? null;
    const verifyId = claim?.verification?.action_request_id ?? null;
    const status = verdict !== null ? verdict.kind : verifyId !== null ? 'verifying' : 'submitted';
    return parseContract('ClaimReply', ClaimReply, { ...base, status, refusals: verdict?.kind === 'refused' ? verdict.value.refusals : [], verify_action_request_id: verifyId });
  }
  if (kind === 'blocked') {
    const verdict = view.blockedClaims.get(claimId)?.verdict ?? null;
    return parseContract('ClaimReply', ClaimReply, {
      ...base,
      status: verdict === null ? 'submitted' : verdict.kind,
      refusals: verdict?.kind === 'refused' ? verdict.value.refusals : [],
      question_id: verdict?.kind === 'accepted' ? verdict.value.question_id : null,
    });
  }
  return parseContract('ClaimReply', ClaimReply, { ...base, status: 'recorded' });
}
