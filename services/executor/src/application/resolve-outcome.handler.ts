import { ExecutionCompleted, ExecutionOutcomeResolved, hasErrorCode, type EventDraft, type EventEnvelope, type ResolveOutcome, type ResolveOutcomeReply } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { SIGNED_REQUESTS, decision, handleCommand, verifySignedRequest, versioned, type CommandDecision, type SignedRequestFailure, type SignedRequestPrincipals } from '@writ/runtime';
import { ExecutorError } from './executor-errors.js';
import type { TaskLog } from './ports.js';

export interface ResolveOutcomeDeps {
  readonly log: TaskLog;
  /** Principals as the log describes them (the executor's PrincipalRegistry behind it). */
  readonly principals: SignedRequestPrincipals;
  readonly clock: () => Date;
  /** The executor service principal: actor of `execution.outcome_resolved` (the resolver is in its payload). */
  readonly principalId: string;
  /** ±window around the executor's clock a signed resolution is accepted in (seconds). */
  readonly freshnessSeconds: number;
  /** Re-read-and-decide rounds after losing an append race (default 5). */
  readonly maxConflicts?: number;
}

/** Codes a resolver may see; anything else (the log down) is EXECUTOR_NOT_READY. */
const REPLY_CODES = new Set([
  'EXECUTOR_RESOLUTION_SIGNATURE_INVALID',
  'EXECUTOR_RESOLUTION_NOT_ALLOWED',
  'EXECUTOR_RESOLUTION_STALE',
  'EXECUTOR_RESOLUTION_MISMATCH',
  'EXECUTOR_EXECUTION_NOT_FOUND',
  'EXECUTOR_OUTCOME_NOT_UNKNOWN',
  'CONTRACT_INVALID',
]);

/** The id of the resolution of one execution: at most one per `execution.completed`, whoever asks. */
export function resolutionEventId(executionEventId: string): string {
  return `exr-${sha256Hex(executionEventId).slice(0, 40)}`;
}

/**
 * `<root>.qry.executor.resolve-outcome` (request/reply; Hermit 19.4): a director settles
 * an execution whose outcome is `unknown` on evidence outside the log.
 *
 * 1. The signed OutcomeResolution is verified like every director-signed request:
 *    an active key of the principal it names, role `director`, never an agent, signed
 *    within ±`freshnessSeconds` of this clock; it must name the requested task and attempt.
 * 2. The proposer of the attempt's action may not resolve it (the separation approval keeps).
 * 3. The attempt's last `execution.completed` must have outcome `unknown`; a standing
 *    resolution of it answers `already_resolved` and appends nothing.
 * 4. `execution.outcome_resolved` is appended with the resolver, outcome, note, time and the
 *    hash of the signed resolution. Nothing runs: the orchestrator settles the attempt on it.
 */
export class ResolveOutcomeHandler {
  constructor(private readonly deps: ResolveOutcomeDeps) {}

  async resolve(request: ResolveOutcome): Promise<ResolveOutcomeReply> {
    try {
      return await this.#resolve(request);
    } catch (error) {
      if (hasErrorCode(error) && REPLY_CODES.has(error.code)) throw error;
      throw new ExecutorError('EXECUTOR_NOT_READY', 'the outcome could not be resolved now; retry', { cause: error });
    }
  }

  async #resolve(request: ResolveOutcome): Promise<ResolveOutcomeReply> {
    const { resolution, signer } = await this.#verify(request.resolution_jws);
    if (resolution.task_id !== request.task_id || resolution.attempt_id !== request.attempt_id) {
      throw new ExecutorError('EXECUTOR_RESOLUTION_MISMATCH', `the signed resolution is for attempt ${resolution.attempt_id} of task ${resolution.task_id}: sign one for the attempt you resolve`, {
        details: { task_id: request.task_id, attempt_id: request.attempt_id, signed_task_id: resolution.task_id, signed_attempt_id: resolution.attempt_id },
      });
    }
    return handleCommand({
      stream: {
        read: async () => versioned(await this.deps.log.read(request.task_id)),
        append: (drafts, expectedSeq) => this.deps.log.append(request.task_id, drafts, expectedSeq),
      },
      maxRounds: this.deps.maxConflicts,
      exhausted: () => new ExecutorError('EXECUTOR_NOT_READY', `task ${request.task_id} kept changing while the outcome was being resolved; retry`),
      decide: ({ events: stream }): CommandDecision<ResolveOutcomeReply> => {
        if (proposerOf(stream, request.attempt_id) === signer) {
          throw new ExecutorError('EXECUTOR_RESOLUTION_NOT_ALLOWED', `${signer} proposed the action and may not resolve its outcome`, {
            details: { principal_id: signer, reason: 'requester' },
          });
        }
        const execution = lastExecution(stream, request.attempt_id);
        if (execution === undefined) {
          throw new ExecutorError('EXECUTOR_EXECUTION_NOT_FOUND', `attempt ${request.attempt_id} of task ${request.task_id} has no execution.completed to resolve`, {
            details: { task_id: request.task_id, attempt_id: request.attempt_id },
          });
        }
        const eventId = resolutionEventId(execution.event.event_id);
        // Resolved already (a duplicate append lands here too): answered with the standing resolution.
        const standing = stream.find((event) => event.event_id === eventId);
        if (standing !== undefined) return decision.done(standingReply(request, standing));
        if (execution.completed.outcome !== 'unknown') {
          throw new ExecutorError('EXECUTOR_OUTCOME_NOT_UNKNOWN', `the execution of attempt ${request.attempt_id} has outcome ${execution.completed.outcome}; only an unknown outcome is resolved by a director`, {
            details: { task_id: request.task_id, attempt_id: request.attempt_id, outcome: execution.completed.outcome },
          });
        }
        const now = this.deps.clock().toISOString();
        const payload = ExecutionOutcomeResolved.parse({
          grant_id: execution.completed.grant_id,
          use_no: execution.completed.use_no,
          execution_event_id: execution.event.event_id,
          outcome: resolution.outcome,
          resolved_by: signer,
          resolved_at: now,
          note: resolution.note.slice(0, 2_000),
          resolution_jws_sha256: sha256Hex(request.resolution_jws),
        });
        const draft: EventDraft = {
          event_id: eventId,
          schema_version: 1,
          event_type: 'execution.outcome_resolved',
          entity_type: 'attempt',
          entity_id: request.attempt_id,
          ...(execution.event.step_id === undefined ? {} : { step_id: execution.event.step_id }),
          attempt_id: request.attempt_id,
          occurred_at: now,
          actor_type: 'service',
          actor_id: this.deps.principalId,
          payload,
          causation_id: execution.event.event_id,
          correlation_id: request.task_id,
          idempotency_key: `${execution.event.event_id}:execution.outcome_resolved`,
        };
        const reply: ResolveOutcomeReply = { task_id: request.task_id, attempt_id: request.attempt_id, status: 'resolved', outcome: payload.outcome, resolved_by: signer, resolved_at: now, event_id: eventId };
        return decision.append([draft], reply);
      },
    });
  }

  /** Who signed, checked against the log: active key, director, not an agent, fresh. */
  async #verify(jws: string) {
    const { payload: resolution, signer } = await verifySignedRequest(
      jws,
      { ...SIGNED_REQUESTS.outcomeResolution, signers: 'director', freshnessSeconds: this.deps.freshnessSeconds },
      { principals: this.deps.principals, clock: this.deps.clock, failure: resolutionFailure },
    );
    return { resolution, signer };
  }
}

/** A payload that is not an OutcomeResolution is as unverifiable as a bad signature: EXECUTOR_RESOLUTION_SIGNATURE_INVALID. */
const resolutionFailure: SignedRequestFailure = (reason, message, details, cause) =>
  new ExecutorError(
    reason === 'signer_not_allowed' ? 'EXECUTOR_RESOLUTION_NOT_ALLOWED' : reason === 'stale' ? 'EXECUTOR_RESOLUTION_STALE' : 'EXECUTOR_RESOLUTION_SIGNATURE_INVALID',
    message,
    { cause, details },
  );

/** The attempt's last `execution.completed` (a later attempt's executions are its own). */
function lastExecution(stream: readonly EventEnvelope[], attemptId: string): { readonly event: EventEnvelope; readonly completed: ExecutionCompleted } | undefined {
  let found: { event: EventEnvelope; completed: ExecutionCompleted } | undefined;
  for (const event of stream) {
    if (event.event_type !== 'execution.completed' || event.attempt_id !== attemptId) continue;
    const parsed = ExecutionCompleted.safeParse(event.payload);
    if (parsed.success) found = { event, completed: parsed.data };
  }
  return found;
}

/** Who proposed the action of `attemptId` (its ActionRequest's `proposed_by`). */
function proposerOf(stream: readonly EventEnvelope[], attemptId: string): string | undefined {
  for (const event of stream) {
    if (event.attempt_id !== attemptId || event.event_type !== 'attempt.awaiting_policy') continue;
    const request = event.payload['action_request'] as { proposed_by?: unknown } | undefined;
    if (typeof request?.proposed_by === 'string') return request.proposed_by;
  }
  return undefined;
}

function standingReply(request: ResolveOutcome, event: EventEnvelope): ResolveOutcomeReply {
  const payload = ExecutionOutcomeResolved.parse(event.payload);
  return {
    task_id: request.task_id,
    attempt_id: request.attempt_id,
    status: 'already_resolved',
    outcome: payload.outcome,
    resolved_by: payload.resolved_by,
    resolved_at: payload.resolved_at,
    event_id: event.event_id,
  };
}
