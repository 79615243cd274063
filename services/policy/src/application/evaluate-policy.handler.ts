import type { ActionClass, EvaluatePolicy, EventDraft, EventEnvelope, PolicyOutcome } from '@writ/contracts';
import { documentSignatures } from '@writ/crypto';
import { attemptDecider, participantDecider, type AttemptState } from '@writ/kernel';
import { derivedId, serviceDraft } from '@writ/runtime';
import type { Logger } from '@writ/telemetry';
import { evaluateCommand, type ParticipantContext } from './policy-evaluation.js';
import type { Clock, ParticipantScopes, ParticipantSnapshot, ProfileLookup, TaskLog } from './ports.js';
import { PolicyServiceError } from './policy-service.errors.js';

export interface EvaluatePolicyHandlerOptions {
  readonly log: TaskLog;
  readonly clock: Clock;
  /** The profiles as the store holds them now (hot-reloaded). */
  readonly profiles: ProfileLookup;
  /** The policy engine's principal. */
  readonly principalId: string;
  /**
   * Participants' manifest scopes, from the log. Absent: every proposer is
   * judged as a principal (tests of the profile alone); the service always passes them.
   */
  readonly participants?: ParticipantScopes;
  readonly logger?: Logger;
}

/** Used for `record-call` only: no signed document is involved, so its cryptography is never called. */
const PARTICIPANTS = participantDecider(documentSignatures);

export type EvaluationOutcome =
  | {
      readonly status: 'evaluated';
      readonly outcome: PolicyOutcome;
      readonly policy_result_id: string;
      readonly event_id: string;
      readonly action_class: ActionClass;
      /** When the attempt entered policy (its entry event) and when it was decided: the decision latency. */
      readonly entered_at: string;
      readonly decided_at: string;
    }
  /** This policy entry of the attempt already has its `policy.evaluated` (a redelivery). */
  | { readonly status: 'duplicate'; readonly event_id: string }
  /** The attempt no longer awaits policy (it moved on): nothing to evaluate. */
  | { readonly status: 'stale'; readonly attempt_status: string };

/** What policy needs to know of the attempt, folded from the task stream. */
export interface AttemptPolicyState {
  readonly state: AttemptState;
  /** The event that opened the current policy entry (attempt.awaiting_policy or attempt.policy_reentered). */
  readonly entry: EventEnvelope | null;
  /** `policy.evaluated` already appended for the current entry, if any. */
  readonly evaluated: EventEnvelope | null;
}

const ENTRY_EVENTS = new Set(['attempt.awaiting_policy', 'attempt.policy_reentered']);

function attemptIdOf(event: EventEnvelope): string | undefined {
  if (event.attempt_id !== undefined) return event.attempt_id;
  return event.entity_type === 'attempt' ? event.entity_id : undefined;
}

/** Folds one attempt, its latest policy entry and whether that entry was already evaluated. */
export function foldAttemptPolicy(events: readonly EventEnvelope[], attemptId: string): AttemptPolicyState {
  let state: AttemptState = attemptDecider.initialState();
  let entry: EventEnvelope | null = null;
  let evaluated: EventEnvelope | null = null;
  for (const event of events) {
    if (event.event_type.startsWith('attempt.') && attemptIdOf(event) === attemptId) {
      const before = state.status === 'initial' ? 0 : state.policy_entries;
      state = attemptDecider.evolve(state, { type: event.event_type, data: event.payload });
      if (ENTRY_EVENTS.has(event.event_type) && state.status !== 'initial' && state.policy_entries > before) {
        entry = event;
        evaluated = null;
      }
    } else if (event.event_type === 'policy.evaluated' && entry !== null) {
      const result = (event.payload as { policy_result?: { attempt_id?: unknown } }).policy_result;
      if (result?.attempt_id === attemptId) evaluated = event;
    }
  }
  return { state, entry, evaluated };
}

/**
 * Handles `<root>.cmd.policy.evaluate`: load (read the task, fold the
 * attempt) → decide (the kernel's pure evaluation) → append
 * `policy.evaluated` with the key `<attempt_id>:policy.evaluated:<n>`, n being
 * the attempt's policy entry (re-entries count), guarded by the length read.
 * A redelivered command finds its entry evaluated and appends nothing; a lost
 * race throws EVENTSTORE_CONFLICT and the retry re-reads.
 *
 * When the proposer is a participant (`writ.evt.participant.<proposed_by>`
 * holds a spawned seed), its manifest scope is checked first, with the calls
 * the log recorded so far; an action it admits and the profile does not deny
 * is counted (`participant.call_recorded`, key `<attempt_id>:<entry>`) on the
 * participant stream, guarded by the sequence the evaluation read, before
 * `policy.evaluated` is appended: a participant that changed meanwhile (paused,
 * retired, another call took the last one) makes the append conflict and the
 * retry judges it again.
 */
export class EvaluatePolicyHandler {
  constructor(private readonly options: EvaluatePolicyHandlerOptions) {}

  async handle(command: EvaluatePolicy): Promise<EvaluationOutcome> {
    const { log, clock, principalId } = this.options;
    const history = await log.read(command.task_id);
    const { state, entry, evaluated } = foldAttemptPolicy(history.events, command.attempt_id);
    if (state.status === 'initial') {
      throw new PolicyServiceError('POLICY_ATTEMPT_UNKNOWN', `task ${command.task_id} has no attempt ${command.attempt_id}`, {
        details: { task_id: command.task_id, attempt_id: command.attempt_id },
      });
    }
    if (evaluated !== null) return { status: 'duplicate', event_id: evaluated.event_id };
    if (state.status !== 'awaiting_policy' || entry === null || state.action_request === null) return { status: 'stale', attempt_status: state.status };
    // The log is the authority on what awaits policy; the command only points at it.
    const request = state.action_request;
    if (request.action_request_id !== command.action_request.action_request_id) {
      throw new PolicyServiceError('POLICY_REQUEST_MISMATCH', `attempt ${command.attempt_id} awaits policy for ${request.action_request_id}, not ${command.action_request.action_request_id}`, {
        details: { expected: request.action_request_id, actual: command.action_request.action_request_id },
      });
    }

    const n = state.policy_entries;
    const key = `${command.attempt_id}:policy.evaluated:${n}`;
    const snapshot = await this.options.participants?.current(request.proposed_by);
    const callKey = `${command.attempt_id}:${n}`;
    const counted = snapshot?.callKeys.has(callKey) === true;
    // A call recorded for this very entry (before a crash) is not one "so far".
    const participant: ParticipantContext | undefined = snapshot === undefined ? undefined : { snapshot, calls: counted ? snapshot.state.calls - 1 : snapshot.state.calls };
    const now = clock().toISOString();
    const evaluation = evaluateCommand(
      command,
      request,
      {
        policy_result_id: derivedId('pr', command.task_id, command.attempt_id, n),
        decision_id: derivedId('dec', command.task_id, command.attempt_id, n),
        now,
        evaluated_by: principalId,
      },
      this.options.profiles,
      participant,
    );
    if (snapshot !== undefined && !counted && evaluation.policy_result.outcome !== 'deny') {
      await this.recordCall(snapshot, command, n, entry.event_id, now);
    }
    const draft = serviceDraft({
      key,
      eventId: derivedId('pol', command.task_id, key),
      eventType: 'policy.evaluated',
      entityType: 'decision',
      entityId: evaluation.decision.decision_id,
      stepId: command.step_id,
      attemptId: command.attempt_id,
      occurredAt: now,
      actorId: principalId,
      payload: evaluation,
      causationId: entry.event_id,
      correlationId: command.task_id,
    });
    await log.append(command.task_id, [draft], history.seq);
    const result = evaluation.policy_result;
    this.options.logger?.debug(
      { task_id: command.task_id, attempt_id: command.attempt_id, entry: n, outcome: result.outcome, matched_rules: result.matched_rules, policy_profile_ref: result.policy_profile_ref },
      'policy evaluated',
    );
    return {
      status: 'evaluated',
      outcome: result.outcome,
      policy_result_id: result.policy_result_id,
      event_id: draft.event_id,
      action_class: request.action_class,
      entered_at: entry.occurred_at,
      decided_at: now,
    };
  }

  /** Counts the admitted action on the participant stream, guarded by the sequence the evaluation folded. */
  private async recordCall(snapshot: ParticipantSnapshot, command: EvaluatePolicy, entry: number, causationId: string, now: string): Promise<void> {
    const seedId = snapshot.state.seed_id;
    const events = PARTICIPANTS.decide(
      {
        type: 'record-call',
        data: { seed_id: seedId, task_id: command.task_id, attempt_id: command.attempt_id, policy_entry: entry, action_request_id: command.action_request.action_request_id },
        metadata: { now },
      },
      snapshot.state,
    );
    const drafts: EventDraft[] = events.map((event) => {
      const key = `participant:${seedId}:${event.type}:${command.attempt_id}:${entry}`;
      return serviceDraft({
        key,
        eventId: derivedId('pcall', key),
        eventType: event.type,
        entityType: 'participant',
        entityId: seedId,
        occurredAt: now,
        actorId: this.options.principalId,
        payload: event.data,
        causationId,
        correlationId: command.task_id,
      });
    });
    await this.options.participants?.append(seedId, drafts, snapshot.seq);
  }
}
