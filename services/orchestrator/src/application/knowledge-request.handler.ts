import {
  BeliefRequestReply,
  WorkingStateRevisionReply,
  type BeliefChange as BeliefRequestChange,
  hasErrorCode,
  parseContract,
  type Belief,
  type EventDraft,
  type EventEnvelope,
  type PrincipalType,
  type SubmitKnowledgeRequest,
} from '@writ/contracts';
import {
  beliefDecider,
  findBelief,
  fold,
  knowledgeLimitsInForce,
  workingStateDecider,
  type BeliefCommand,
  type BeliefEvent,
  type BeliefSetState,
  type TaskRecord,
  type WorkingStateEvent,
  type WorkingStateState,
} from '@writ/kernel';
import {
  SIGNED_REQUESTS,
  decision,
  handleCommand,
  verifySignedRequest,
  type SignedRequestFailure,
  type SignedRequestPrincipal,
  type SignedRequestPrincipals,
} from '@writ/runtime';
import { canonicalJson } from '@writ/crypto';
import { redactSecrets, type Logger } from '@writ/telemetry';
import { eventIdFor } from './ids.js';
import { OrchestratorError, type OrchestratorErrorCode } from './orchestrator.errors.js';
import type { Clock, TaskLog } from './ports.js';
import { taskCommandStream } from './task-command-stream.js';
import { TaskView } from './task-view.js';

/** A signer as the registry describes it: its type decides which trust tiers it may assert (TRUST_TIER_ADMISSION). */
export type KnowledgeSigner = SignedRequestPrincipal & { readonly principal_type: PrincipalType };

export interface KnowledgeRequestDeps {
  readonly log: TaskLog;
  readonly principals: SignedRequestPrincipals<KnowledgeSigner>;
  readonly clock: Clock;
  /** The orchestrator's principal: actor of what it appends. */
  readonly actorId: string;
  /** ±seconds around the clock a request's signing time must lie in (the claims' window). */
  readonly freshnessSeconds: number;
  readonly maxConflicts?: number;
  readonly logger?: Logger;
}

/**
 * Codes a requester may see: the orchestrator's own refusals and the
 * kernel's KNOWLEDGE_* (its decider's verdict, e.g. TOO_LARGE, REVISION_CONFLICT,
 * TRUST_TIER_UNSUPPORTED); anything else is ORCHESTRATOR_UNAVAILABLE.
 */
const REPLY_CODES = new Set<string>([
  'ORCHESTRATOR_KNOWLEDGE_SIGNATURE_INVALID',
  'ORCHESTRATOR_KNOWLEDGE_SIGNER_NOT_ALLOWED',
  'ORCHESTRATOR_KNOWLEDGE_STALE',
  'ORCHESTRATOR_KNOWLEDGE_MISMATCH',
  'ORCHESTRATOR_KNOWLEDGE_TASK_UNKNOWN',
  'ORCHESTRATOR_KNOWLEDGE_REQUEST_REUSED',
  'ORCHESTRATOR_UNAVAILABLE',
  'CONTRACT_INVALID',
]);

const FAILURE_CODES: Readonly<Record<'signature_invalid' | 'signer_not_allowed' | 'stale', OrchestratorErrorCode>> = {
  signature_invalid: 'ORCHESTRATOR_KNOWLEDGE_SIGNATURE_INVALID',
  signer_not_allowed: 'ORCHESTRATOR_KNOWLEDGE_SIGNER_NOT_ALLOWED',
  stale: 'ORCHESTRATOR_KNOWLEDGE_STALE',
};

const failure: SignedRequestFailure = (reason, message, details, cause) => {
  if (reason === 'contract_invalid') return cause instanceof Error ? cause : new OrchestratorError('ORCHESTRATOR_KNOWLEDGE_SIGNATURE_INVALID', message, { details });
  return new OrchestratorError(FAILURE_CODES[reason], message, { cause, details });
};

/** A stored event as a kernel event (`{ type, data }`): the deciders fold what the log holds. */
function asKernelEvent(event: Pick<EventEnvelope, 'event_type' | 'payload'>): { type: string; data: unknown } {
  return { type: event.event_type, data: event.payload };
}

/** The task's events of one aggregate (`<prefix>.*` types) as the kernel's deciders take them. */
const kernelEventsOf = (events: readonly Pick<EventEnvelope, 'event_type' | 'payload'>[], prefix: string) =>
  events.filter((event) => event.event_type.startsWith(prefix)).map(asKernelEvent);

/** The task's working state as its events fold (a forged or malformed one is not applied: the kernel's `evolve` is total and strict). */
export function foldWorkingState(events: readonly Pick<EventEnvelope, 'event_type' | 'payload'>[]): WorkingStateState {
  return fold(workingStateDecider, kernelEventsOf(events, 'working_state.'));
}

/** The task's beliefs as its events fold. */
export function foldBeliefs(events: readonly Pick<EventEnvelope, 'event_type' | 'payload'>[]): BeliefSetState {
  return fold(beliefDecider, kernelEventsOf(events, 'belief.'));
}

/** Idempotency keys of what one request appended: `<prefix>:<request_id>:<n>`; the prefix keeps a revision's id apart from a belief change's. */
const requestKey = (prefix: 'ws' | 'belief', requestId: string, n: number | string) => `${prefix}:${requestId}:${n}`;
const appendedBy = (events: readonly EventEnvelope[], prefix: 'ws' | 'belief', requestId: string) =>
  events.filter((event) => event.idempotency_key?.startsWith(`${prefix}:${requestId}:`) === true);

/**
 * Whether every field the request gives is the stored one's (the stored side may hold more: what the
 * decider added, such as a belief's status and version, or an entry's defaults).
 */
function givenFieldsMatch(requested: unknown, stored: unknown): boolean {
  if (Array.isArray(requested)) return Array.isArray(stored) && stored.length === requested.length && requested.every((item, index) => givenFieldsMatch(item, stored[index]));
  if (requested !== null && typeof requested === 'object') {
    if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return false;
    return Object.entries(requested).every(([key, value]) => value === undefined || givenFieldsMatch(value, (stored as Record<string, unknown>)[key]));
  }
  return canonicalJson(requested) === canonicalJson(stored);
}

/** A resend of the revision `revised` recorded: same signer, same entries set, same keys removed. */
function sameRevision(revised: Record<string, unknown>, signer: string, request: { set?: unknown; remove?: readonly string[] }): boolean {
  return revised['revised_by'] === signer && givenFieldsMatch(request.set ?? [], revised['set']) && givenFieldsMatch(request.remove ?? [], revised['removed']);
}

/** A resend of the belief change `earlier` recorded: the same assertion (or revocation) by the same signer. */
function sameBeliefChange(earlier: readonly EventEnvelope[], signer: string, taskId: string, change: BeliefRequestChange): boolean {
  if (change.op === 'assert') {
    const asserted = earlier.find((event) => event.event_type === 'belief.asserted')?.payload['belief'];
    // `contradicts` is not kept on the belief: the decider records it as contradiction events.
    const { contradicts: _contradicts, ...belief } = change.belief;
    return asserted !== undefined && givenFieldsMatch({ ...belief, task_id: taskId, asserted_by: signer }, asserted);
  }
  const revoked = earlier.find((event) => event.event_type === 'belief.revoked')?.payload;
  return revoked !== undefined && givenFieldsMatch({ belief_id: change.belief_id, reason: change.reason, revoked_by: signer }, revoked);
}

function requestReused(taskId: string, requestId: string, eventId: string): OrchestratorError {
  return new OrchestratorError(
    'ORCHESTRATOR_KNOWLEDGE_REQUEST_REUSED',
    `request_id ${requestId} was used for another change of task ${taskId} (event ${eventId}): a request_id answers only the request it was first sent with; send this one under a new request_id`,
    { details: { task_id: taskId, request_id: requestId, event_id: eventId } },
  );
}

/**
 * `<root>.qry.orchestrator.revise-working-state` and `.change-belief`
 * (request/reply, issue 17): a working state revision or a belief change,
 * signed by the task's owner (or a director), is verified the way claims are
 * (an active key of the signer, the kind's `typ`, fresh), checked against the
 * task (it exists, the signer may act on it), then decided by the kernel's
 * working state or belief decider against the task's stream and appended to
 * it. A refusal is the decider's KNOWLEDGE_* code, and nothing is appended.
 * Idempotent by the signer's `request_id`: sent again, it answers what it did
 * the first time (`duplicate: true`) and appends nothing; the same id with
 * another change is refused (`ORCHESTRATOR_KNOWLEDGE_REQUEST_REUSED`), never
 * answered as the first one.
 */
export class KnowledgeRequestHandler {
  constructor(private readonly deps: KnowledgeRequestDeps) {}

  async reviseWorkingState(request: SubmitKnowledgeRequest): Promise<WorkingStateRevisionReply> {
    return this.#guard(() => this.#reviseWorkingState(request));
  }

  async changeBelief(request: SubmitKnowledgeRequest): Promise<BeliefRequestReply> {
    return this.#guard(() => this.#changeBelief(request));
  }

  async #guard<R>(run: () => Promise<R>): Promise<R> {
    try {
      return await run();
    } catch (error) {
      if (hasErrorCode(error) && (REPLY_CODES.has(error.code) || error.code.startsWith('KNOWLEDGE_'))) throw error;
      throw new OrchestratorError('ORCHESTRATOR_UNAVAILABLE', 'the request could not be recorded now; send it again', { cause: error });
    }
  }

  async #reviseWorkingState(request: SubmitKnowledgeRequest): Promise<WorkingStateRevisionReply> {
    const rules = { ...SIGNED_REQUESTS.workingStateRevision, signers: 'any' as const, freshnessSeconds: this.deps.freshnessSeconds };
    const verified = await verifySignedRequest(request.request_jws, rules, { principals: this.deps.principals, clock: this.deps.clock, failure });
    const { signer, principal } = verified;
    // Secret-looking values in the entries never reach the log (invariant 6); the ids and fields around them are kept as signed.
    const payload = parseContract('WorkingStateRevisionSubmission', SIGNED_REQUESTS.workingStateRevision.schema, { ...verified.payload, set: redactSecrets(verified.payload.set) });
    this.#sameTask(payload.task_id, request.task_id);
    const taskId = request.task_id;
    const outcome = await handleCommand({
      stream: taskCommandStream(this.deps.log, taskId),
      maxRounds: this.deps.maxConflicts,
      exhausted: () => new OrchestratorError('ORCHESTRATOR_UNAVAILABLE', `task ${taskId} kept changing while the revision was recorded; send it again`),
      decide: ({ events }) => {
        const task = this.#checkTask(taskId, events, signer, principal);
        const earlier = appendedBy(events, 'ws', payload.request_id).find((event) => event.event_type === 'working_state.revised');
        if (earlier !== undefined) {
          if (!sameRevision(earlier.payload, signer, payload)) throw requestReused(taskId, payload.request_id, earlier.event_id);
          return decision.done({ revision: Number(earlier.payload['revision']), duplicate: true });
        }
        const now = this.#now();
        let state = foldWorkingState(events);
        const decided: WorkingStateEvent[] = [];
        if (state.status === 'initial') {
          // The first revision opens the working state with the limits the task's log holds in force (its profile's, as the
          // latest policy verdict recorded them; else the defaults), kept in `working_state.opened`: a later profile never refuses retroactively.
          const limits = knowledgeLimitsInForce(events).working_state;
          const opened = workingStateDecider.decide({ type: 'open-working-state', data: { task_id: taskId, limits }, metadata: { now } }, state);
          decided.push(...opened);
          for (const event of opened) state = workingStateDecider.evolve(state, event);
        }
        let expected = payload.expected_revision;
        if (payload.compact !== undefined) {
          // Compacted against the revision the signer read; the revision then applies to what the compaction kept.
          const compacted = workingStateDecider.decide(
            { type: 'compact-working-state', data: { task_id: taskId, compaction_id: payload.request_id, compacted_by: signer, expected_revision: expected, references: payload.compact.references }, metadata: { now } },
            state,
          );
          decided.push(...compacted);
          for (const event of compacted) state = workingStateDecider.evolve(state, event);
          expected = state.status === 'open' ? state.revision : expected;
        }
        const revised = workingStateDecider.decide(
          {
            type: 'revise-working-state',
            data: { task_id: taskId, request_id: payload.request_id, revised_by: signer, expected_revision: expected, set: payload.set, remove: payload.remove },
            metadata: { now },
          },
          state,
        );
        decided.push(...revised);
        const revision = revised.find((event) => event.type === 'working_state.revised')?.data.revision;
        // The decider answers a redelivery of the last request with nothing: that is a duplicate too.
        if (revision === undefined) return decision.done({ revision: state.status === 'open' ? state.revision : 0, duplicate: true });
        const drafts = decided.map((event, n) => this.#draft(task, event, event.type === 'working_state.opened' ? 'ws:opened' : requestKey('ws', payload.request_id, n)));
        return decision.append(drafts, { revision, duplicate: false });
      },
    });
    this.deps.logger?.info({ task_id: taskId, request_id: payload.request_id, revised_by: signer, revision: outcome.revision, duplicate: outcome.duplicate }, 'working state revision answered');
    return parseContract('WorkingStateRevisionReply', WorkingStateRevisionReply, { task_id: taskId, request_id: payload.request_id, status: 'accepted', ...outcome });
  }

  async #changeBelief(request: SubmitKnowledgeRequest): Promise<BeliefRequestReply> {
    const rules = { ...SIGNED_REQUESTS.beliefRequest, signers: 'any' as const, freshnessSeconds: this.deps.freshnessSeconds };
    const verified = await verifySignedRequest(request.request_jws, rules, { principals: this.deps.principals, clock: this.deps.clock, failure });
    const { signer, principal } = verified;
    const payload = parseContract('BeliefRequestSubmission', SIGNED_REQUESTS.beliefRequest.schema, { ...verified.payload, change: redactSecrets(verified.payload.change) });
    this.#sameTask(payload.task_id, request.task_id);
    const taskId = request.task_id;
    const change = payload.change;
    const beliefId = change.op === 'assert' ? change.belief.belief_id : change.belief_id;
    const outcome = await handleCommand({
      stream: taskCommandStream(this.deps.log, taskId),
      maxRounds: this.deps.maxConflicts,
      exhausted: () => new OrchestratorError('ORCHESTRATOR_UNAVAILABLE', `task ${taskId} kept changing while the belief change was recorded; send it again`),
      decide: ({ events }) => {
        const task = this.#checkTask(taskId, events, signer, principal);
        let state = foldBeliefs(events);
        const earlier = appendedBy(events, 'belief', payload.request_id);
        if (earlier.length > 0) {
          if (!sameBeliefChange(earlier, signer, taskId, change)) throw requestReused(taskId, payload.request_id, earlier[0]!.event_id);
          return decision.done({ events: earlier.map((event) => event.event_type), duplicate: true, belief: findBelief(state, beliefId) });
        }
        const now = this.#now();
        // Beliefs past their expiry are marked expired first, so a change never builds on one that no longer holds.
        const decided: BeliefEvent[] = [...beliefDecider.decide({ type: 'expire-beliefs', data: {}, metadata: { now } }, state)];
        for (const event of decided) state = beliefDecider.evolve(state, event);
        const command: BeliefCommand =
          change.op === 'assert'
            ? {
                type: 'assert-belief',
                data: { belief: { ...change.belief, task_id: taskId }, asserted_by: { principal_id: signer, principal_type: principal.principal_type } },
                metadata: { now },
              }
            : { type: 'revoke-belief', data: { belief_id: change.belief_id, revoked_by: signer, reason: change.reason }, metadata: { now } };
        const changed = beliefDecider.decide(command, state);
        for (const event of changed) state = beliefDecider.evolve(state, event);
        decided.push(...changed);
        const drafts = decided.map((event, n) => this.#draft(task, event, requestKey('belief', payload.request_id, n)));
        // The belief as the appended events leave it: what the log holds once the guarded append lands.
        return decision.append(drafts, { events: decided.map((event) => event.type), duplicate: false, belief: findBelief(state, beliefId) });
      },
    });
    const { belief: found, ...answered } = outcome;
    const belief = found as Belief | undefined;
    if (belief === undefined) throw new OrchestratorError('ORCHESTRATOR_UNAVAILABLE', `belief ${beliefId} is not in task ${taskId} as decided; send the request again`);
    this.deps.logger?.info({ task_id: taskId, request_id: payload.request_id, op: change.op, belief_id: beliefId, by: signer, duplicate: outcome.duplicate }, 'belief change answered');
    return parseContract('BeliefRequestReply', BeliefRequestReply, {
      task_id: taskId,
      request_id: payload.request_id,
      status: 'accepted',
      op: change.op,
      belief_id: beliefId,
      belief_status: belief.status,
      version: belief.version,
      ...answered,
    });
  }

  #now(): string {
    return this.deps.clock().toISOString();
  }

  #sameTask(signedTaskId: string, taskId: string): void {
    if (signedTaskId !== taskId) {
      throw new OrchestratorError('ORCHESTRATOR_KNOWLEDGE_MISMATCH', `the signed request is for task ${signedTaskId}, the request for task ${taskId}`, {
        details: { task_id: taskId, signed_task_id: signedTaskId },
      });
    }
  }

  /** The task exists, and the signer is its owner or a director (never another agent). */
  #checkTask(taskId: string, events: readonly EventEnvelope[], signer: string, principal: KnowledgeSigner): TaskRecord {
    const task = TaskView.fold(taskId, events).task;
    if (task.status === 'initial') throw new OrchestratorError('ORCHESTRATOR_KNOWLEDGE_TASK_UNKNOWN', `there is no task ${taskId}`, { details: { task_id: taskId } });
    const director = principal.principal_type !== 'agent' && principal.roles.includes('director');
    if (task.owner_principal_id !== signer && !director) {
      throw new OrchestratorError(
        'ORCHESTRATOR_KNOWLEDGE_SIGNER_NOT_ALLOWED',
        `${signer} neither owns task ${taskId} nor is a director: only its agent (${task.owner_principal_id}) or a director changes its working state and beliefs`,
        { details: { principal_id: signer, reason: 'not_owner' } },
      );
    }
    return task;
  }

  #draft(task: TaskRecord, event: WorkingStateEvent | BeliefEvent, key: string): EventDraft {
    return {
      event_id: eventIdFor(task.task_id, key),
      schema_version: 1,
      event_type: event.type,
      entity_type: 'task',
      entity_id: task.task_id,
      occurred_at: this.#now(),
      actor_type: 'service',
      actor_id: this.deps.actorId,
      payload: event.data as unknown as Record<string, unknown>,
      causation_id: null,
      correlation_id: task.task_id,
      idempotency_key: key,
    };
  }
}
