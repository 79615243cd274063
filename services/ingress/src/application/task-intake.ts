import { LIMITS, clipText, type ActionRequest, type ContinuationAnchor, type EventEnvelope, type IngressChannel } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import {
  ATTEMPT_PRE_EXECUTION_STATES,
  attemptDecider,
  fold,
  isTaskTerminal,
  stepDecider,
  taskDecider,
  type Decider,
  type StepState,
  type TaskRecord,
  type TaskState,
} from '@writ/kernel';
import { IngressError } from '../ingress-errors.js';
import { eventKeys, type IngressIds } from './ingress-ids.js';

/** One event ingress appends to the task stream, produced by a kernel decider. */
export interface IntakeEvent {
  readonly eventId: string;
  readonly idempotencyKey: string;
  readonly entityType: 'task' | 'step' | 'attempt';
  readonly entityId: string;
  readonly stepId?: string;
  readonly attemptId?: string;
  readonly type: string;
  readonly data: Record<string, unknown>;
}

export interface IntakeInput {
  readonly ids: IngressIds;
  readonly request: ActionRequest;
  readonly principalId: string;
  readonly channel: IngressChannel;
  /** The task stream as stored now (empty for a new task). */
  readonly history: readonly EventEnvelope[];
  readonly stepMaxAttempts: number;
  /** The command metadata clock reading (RFC 3339). */
  readonly now: string;
}

export interface IntakePlan {
  readonly taskId: string;
  readonly createsTask: boolean;
  /** Events still to append, in order; empty when a previous run stored them all. */
  readonly events: readonly IntakeEvent[];
}

/** Where an existing task stands, for the checks before anything is appended. */
export type TaskStanding = 'unknown' | 'terminal' | { readonly owner: string };

const asDomain = (event: EventEnvelope) => ({ type: event.event_type, data: event.payload });

function of(history: readonly EventEnvelope[], entityType: string, entityId?: string): { type: string; data: unknown }[] {
  return history.filter((e) => e.entity_type === entityType && (entityId === undefined || e.entity_id === entityId)).map(asDomain);
}

/** The task folded from its stream: unknown, terminal, or live with its owner. */
export function taskStanding(history: readonly EventEnvelope[]): TaskStanding {
  const state = fold(taskDecider, of(history, 'task'));
  if (state.status === 'initial') return 'unknown';
  if (isTaskTerminal(state)) return 'terminal';
  return { owner: (state as Exclude<TaskState, { status: 'initial' }>).owner_principal_id };
}

/**
 * Why `request.supersedes` cannot name what it names in this task's stream,
 * if it cannot (Hermit 11.5, 16.7: a newly bound input replaces an earlier
 * request before it runs). The earlier request must be one the task holds,
 * proposed by the same principal, whose attempt is still before any side
 * effect: not ended, not executing, no grant use claimed. The orchestrator
 * then supersedes that attempt and invalidates its pending approval.
 */
export function supersedesRefusal(history: readonly EventEnvelope[], request: ActionRequest, principalId: string): string | undefined {
  const supersedes = request.supersedes;
  if (supersedes === undefined) return undefined;
  if (request.task_id === undefined) return `supersedes names ${supersedes}, but a superseding request must name the task_id of that request`;
  if (supersedes === request.action_request_id) return `request ${supersedes} cannot supersede itself`;
  const submitted = history.find((event) => {
    if (event.event_type !== 'attempt.awaiting_policy') return false;
    const submittedRequest = (event.payload as { action_request?: { action_request_id?: unknown } }).action_request;
    return submittedRequest?.action_request_id === supersedes;
  });
  if (submitted === undefined) return `task ${request.task_id} holds no request ${supersedes}`;
  const proposer = (submitted.payload as { action_request?: { proposed_by?: unknown } }).action_request?.proposed_by;
  if (proposer !== principalId) return `request ${supersedes} was proposed by another principal; only its proposer may supersede it`;
  const attemptId = submitted.attempt_id ?? submitted.entity_id;
  const attempt = fold(attemptDecider, of(history, 'attempt', attemptId));
  if (attempt.status === 'superseded') return `request ${supersedes} was already superseded`;
  const claimed = history.some((event) => event.event_type === 'grant.use_claimed' && (event.payload as { attempt_id?: unknown }).attempt_id === attemptId);
  if (claimed || (attempt.status !== 'initial' && !ATTEMPT_PRE_EXECUTION_STATES.includes(attempt.status))) {
    return `request ${supersedes} (attempt ${attemptId}) has already started executing or has ended (${attempt.status}); it can no longer be superseded`;
  }
  return undefined;
}

/** `brief:sha256:<hex>`: the task contract of a briefed task, the digest of its brief's RFC 8785 form (the brief itself is in task.created). */
export function briefRef(brief: NonNullable<NonNullable<ActionRequest['task']>['brief']>): string {
  return `brief:sha256:${sha256Hex(canonicalJson(brief))}`;
}

function stepTitle(request: ActionRequest): string {
  return clipText(request.step?.title ?? `${request.action_class}: ${request.target_resources.join(', ')}`, LIMITS.title);
}

/**
 * The task-stream events one accepted ActionRequest produces (docs/governed-path.md
 * step 1), each decided by the kernel against the state folded so far:
 * `task.created` → `task.marked_ready` → `task.started` (new task only),
 * `step.planned` → `step.marked_ready` → `step.attempt_opened`,
 * `attempt.created` → `attempt.leased` → `attempt.awaiting_policy` (carrying the request).
 *
 * The step decider only opens an attempt on a `ready` step and the attempt
 * decider only submits an action from `leased` (or later pre-policy states),
 * hence `step.marked_ready` and `attempt.leased` (lease `workspace:<task_id>`).
 *
 * Resumable: an event whose deterministic id is already in `history` is not
 * decided again (its effect is in the folded state), so a run that crashed
 * half way is finished by the next one without duplicates. Throws the
 * kernel's error when the request cannot become these events (a files_owned
 * pattern the task aggregate refuses, a terminal task), or
 * INGRESS_INTAKE_CONFLICT when a resumed run can no longer be completed.
 */
type RunDecider = <C, E extends { type: string; data: unknown }, S>(
  decider: Decider<C, E, S>,
  state: S,
  command: C,
  type: string,
  entity: Pick<IntakeEvent, 'entityType' | 'entityId' | 'stepId' | 'attemptId'>,
) => S;

/**
 * Decides, one command at a time, the events one ingress still has to append
 * to `taskId`'s stream: an event whose deterministic id `history` holds is not
 * decided again (its effect is in the folded state), so a run that crashed
 * half way is finished by the next one without duplicates.
 */
function resumableIntake(ingressId: string, taskId: string, history: readonly EventEnvelope[]): { readonly run: RunDecider; readonly events: IntakeEvent[] } {
  const present = new Set(history.map((e) => e.event_id));
  const resumed = [...present].some((id) => id.startsWith(`${ingressId}-`));
  const events: IntakeEvent[] = [];
  const run: RunDecider = (decider, state, command, type, entity) => {
    const keys = eventKeys(ingressId, type);
    if (present.has(keys.eventId)) return state;
    let decided;
    try {
      decided = decider.decide(command, state);
    } catch (error) {
      if (!resumed) throw error;
      throw new IngressError('INGRESS_INTAKE_CONFLICT', `ingress ${ingressId} stored part of its events, but ${type} can no longer be decided`, {
        cause: error,
        details: { ingress_id: ingressId, task_id: taskId, event_type: type },
      });
    }
    const [event] = decided;
    if (decided.length !== 1 || event === undefined || event.type !== type) {
      throw new IngressError('INGRESS_INTAKE_CONFLICT', `the kernel answered ${type} with ${decided.map((e) => e.type).join(', ') || 'nothing'}`);
    }
    events.push({ ...keys, ...entity, type, data: event.data as Record<string, unknown> });
    return decider.evolve(state, event);
  };
  return { run, events };
}

export function planIntake(input: IntakeInput): IntakePlan {
  const { ids, request, history, now } = input;
  const taskId = request.task_id ?? ids.newTaskId;
  const createsTask = request.task_id === undefined;
  const metadata = { now };
  const { run, events } = resumableIntake(ids.ingressId, taskId, history);

  if (createsTask) {
    const task = request.task;
    if (task === undefined) throw new IngressError('INGRESS_INTAKE_CONFLICT', 'a request without task_id must carry task');
    const entity = { entityType: 'task', entityId: taskId } as const;
    let state = fold(taskDecider, of(history, 'task'));
    state = run(taskDecider, state, {
      type: 'create-task',
      data: {
        task_id: taskId,
        title: task.title,
        goal: task.goal,
        owner_principal_id: input.principalId,
        policy_profile_ref: task.policy_profile,
        task_contract_ref: task.brief === undefined ? `ingress:${ids.ingressId}` : briefRef(task.brief),
        files_owned: task.files_owned,
        ...(task.sacred_exceptions === undefined ? {} : { sacred_exceptions: task.sacred_exceptions }),
        // A briefed task (seed 003) carries its brief: its files_owned are the brief's (the contract checks they are equal), and it closes only on an accepted done claim.
        ...(task.brief === undefined ? {} : { brief: task.brief }),
        source_channel: input.channel,
      },
      metadata,
    }, 'task.created', entity);
    state = run(taskDecider, state, { type: 'mark-task-ready', data: {}, metadata }, 'task.marked_ready', entity);
    run(taskDecider, state, { type: 'start-task', data: {}, metadata }, 'task.started', entity);
  }

  const stepEntity = { entityType: 'step', entityId: ids.stepId, stepId: ids.stepId } as const;
  let step: StepState = fold(stepDecider, of(history, 'step', ids.stepId));
  step = run(stepDecider, step, {
    type: 'plan-step',
    data: {
      step_id: ids.stepId,
      task_id: taskId,
      kind: request.step?.kind ?? request.action_class,
      title: stepTitle(request),
      contract_ref: `action_request:${request.action_request_id}`,
      max_attempts: input.stepMaxAttempts,
    },
    metadata,
  }, 'step.planned', stepEntity);
  step = run(stepDecider, step, { type: 'mark-step-ready', data: {}, metadata }, 'step.marked_ready', stepEntity);
  step = run(stepDecider, step, { type: 'open-attempt', data: { attempt_id: ids.attemptId }, metadata }, 'step.attempt_opened', stepEntity);
  const attemptNo = step.status === 'initial' ? undefined : step.attempts.find((a) => a.attempt_id === ids.attemptId)?.attempt_no;
  if (attemptNo === undefined) {
    throw new IngressError('INGRESS_INTAKE_CONFLICT', `step ${ids.stepId} has no attempt ${ids.attemptId}`, { details: { step_id: ids.stepId } });
  }

  const attemptEntity = { entityType: 'attempt', entityId: ids.attemptId, stepId: ids.stepId, attemptId: ids.attemptId } as const;
  let attempt = fold(attemptDecider, of(history, 'attempt', ids.attemptId));
  attempt = run(attemptDecider, attempt, {
    type: 'create-attempt',
    data: { attempt_id: ids.attemptId, task_id: taskId, step_id: ids.stepId, attempt_no: attemptNo, idempotency_key: request.action_request_id },
    metadata,
  }, 'attempt.created', attemptEntity);
  attempt = run(attemptDecider, attempt, { type: 'lease-workspace', data: { workspace_lease_ref: `workspace:${taskId}` }, metadata }, 'attempt.leased', attemptEntity);
  run(attemptDecider, attempt, { type: 'submit-action', data: { action_request: request }, metadata }, 'attempt.awaiting_policy', attemptEntity);

  return { taskId, createsTask, events };
}

/** How a task a message starts relates to the task the message was about. */
export type StartedTaskRelation =
  /** start_new_root: a follow-up on an ended outcome (Hermit 8.1.1). */
  | { readonly kind: 'follow_up'; readonly continuationAnchor: ContinuationAnchor }
  /** fork_child: a child of a live task (Hermit 8.1.3), inheriting none of its working state. */
  | { readonly kind: 'fork' };

/** What a message that starts a task starts it from: the message, and the task it was about as its log says it. */
export interface StartedTaskInput {
  readonly ingressId: string;
  readonly newTaskId: string;
  /** The task the message was about (the ended one, or the parent), folded from its log. */
  readonly from: TaskRecord;
  readonly relation: StartedTaskRelation;
  /** Who sent the message, and the SHA-256 of its (redacted) text in the artifact bucket. */
  readonly senderId: string;
  readonly textSha256: string;
  readonly channel: string;
  /** The new task's stream as stored now (empty unless a crashed run started it). */
  readonly history: readonly EventEnvelope[];
  readonly now: string;
}

/**
 * The task a free-form message starts: a follow-up on an ended outcome
 * (start_new_root, `task.created` carrying the continuation anchor) or a
 * fork of a live task (fork_child, `task.created` naming its parent), then
 * `task.marked_ready` → `task.started`, resumable like an ActionRequest's
 * intake. It belongs to the owner of the task the message was about (the one
 * doing that work), under its policy profile and write scope; its goal names
 * the message by hash (the log never holds a message's text). It has no step:
 * its owner proposes its actions.
 */
export function planStartedTask(input: StartedTaskInput): readonly IntakeEvent[] {
  const { from, newTaskId, now, relation } = input;
  const metadata = { now };
  const entity = { entityType: 'task', entityId: newTaskId } as const;
  const { run, events } = resumableIntake(input.ingressId, newTaskId, input.history);
  const message = `message ${input.ingressId} from ${input.senderId} (text sha256 ${input.textSha256})`;
  const goal =
    relation.kind === 'follow_up'
      ? `Follow-up ${message} on the ${from.status} outcome of task ${from.task_id}, whose goal was: ${from.goal}`
      : `Child of task ${from.task_id} asked for by ${message}; the parent's goal: ${from.goal}`;
  let state = fold(taskDecider, of(input.history, 'task'));
  state = run(taskDecider, state, {
    type: 'create-task',
    data: {
      task_id: newTaskId,
      title: clipText(`${relation.kind === 'follow_up' ? 'Follow-up' : 'Fork'}: ${from.title}`, LIMITS.title),
      goal: clipText(goal, LIMITS.longText),
      owner_principal_id: from.owner_principal_id,
      policy_profile_ref: from.policy_profile_ref,
      task_contract_ref: `ingress:${input.ingressId}`,
      files_owned: from.files_owned,
      ...(from.sacred_exceptions.length === 0 ? {} : { sacred_exceptions: from.sacred_exceptions }),
      source_channel: input.channel,
      ...(relation.kind === 'follow_up' ? { continuation_anchor: relation.continuationAnchor } : { parent_task_id: from.task_id }),
    },
    metadata,
  }, 'task.created', entity);
  state = run(taskDecider, state, { type: 'mark-task-ready', data: {}, metadata }, 'task.marked_ready', entity);
  run(taskDecider, state, { type: 'start-task', data: {}, metadata }, 'task.started', entity);
  return events;
}
