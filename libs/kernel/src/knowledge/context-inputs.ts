import { DEFAULT_KNOWLEDGE_LIMITS, Decision, DecisionRecorded, ExecutionCompleted, KnowledgeLimits, PolicyEvaluated, type EventEnvelope, type JsonValue } from '@writ/contracts';
import { attemptDecider } from '../attempt/attempt.decider.js';
import { stepDecider } from '../attempt/step.decider.js';
import { fold } from '../shared/decider.js';
import { taskDecider } from '../task/task.decider.js';
import { beliefDecider } from './belief.decider.js';
import type { ContextCompileInput, ContextProfile } from './context-compiler.js';
import { contextPackDecider, type ContextPackState } from './context-pack.decider.js';
import { workingStateDecider } from './working-state.decider.js';

/** The envelope fields the context inputs are read from: a stored task event. */
export type ContextLogEvent = Pick<EventEnvelope, 'event_type' | 'payload' | 'task_seq' | 'task_id' | 'attempt_id' | 'step_id' | 'entity_type' | 'entity_id' | 'occurred_at'>;

/**
 * The budget every pack gets until a policy profile names its own: room for the
 * contracts, a full default working state and a few dozen beliefs. Secrets are left
 * out (Hermit 6.3.3): naming them even by reference is a profile's explicit choice.
 */
export const DEFAULT_CONTEXT_PROFILE: ContextProfile = DEFAULT_KNOWLEDGE_LIMITS.context_pack;

/**
 * The knowledge limits in force for a task as its log records them: those of the
 * latest `policy.evaluated` that carries them (the policy service stamps the
 * profile's `knowledge` section, defaults filled in, on every verdict), else the
 * defaults. Read from the log alone, so the orchestrator deciding now and anyone
 * replaying the same prefix later agree; a profile applied later reaches a task
 * with its next verdict, never what was decided before it.
 */
export function knowledgeLimitsInForce(events: readonly Pick<EventEnvelope, 'event_type' | 'payload'>[]): KnowledgeLimits {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as Pick<EventEnvelope, 'event_type' | 'payload'>;
    if (event.event_type !== 'policy.evaluated') continue;
    // The verdict's author is the store's to check (policy alone); its bounds are checked again here.
    const parsed = KnowledgeLimits.safeParse((event.payload as Record<string, unknown> | undefined)?.['knowledge']);
    if (parsed.success) return parsed.data;
  }
  return DEFAULT_KNOWLEDGE_LIMITS;
}

/** The pack's log prefix: the attempt's first `attempt.awaiting_policy` (its request submitted), and the inputs as of then. */
export interface ContextPackInputs {
  readonly input: ContextCompileInput;
  /** The last task event compiled from: later events (the policy verdict, a belief asserted after) are not in this pack. */
  readonly through_task_seq: number;
}

const attemptIdOf = (event: ContextLogEvent): string | undefined =>
  event.attempt_id ?? (event.entity_type === 'attempt' ? event.entity_id : undefined) ?? stringField(event.payload, 'attempt_id');

function stringField(payload: unknown, key: string): string | undefined {
  const value = typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' ? value : undefined;
}

const domain = (event: ContextLogEvent) => ({ type: event.event_type, data: event.payload });
const ofFamily = (events: readonly ContextLogEvent[], family: string) => events.filter((event) => event.event_type.startsWith(`${family}.`));
const clip = (text: string, max = 1_024) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);
const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as JsonValue;

/** The event that opens an attempt's pack: its first submitted request. */
export function contextPackOpening<E extends ContextLogEvent>(events: readonly E[], attemptId: string): E | undefined {
  return events.find((event) => event.event_type === 'attempt.awaiting_policy' && attemptIdOf(event) === attemptId);
}

/** What the log records of an attempt's pack: nothing yet, compiled (where), or refused (why). */
export function foldContextPack(events: readonly ContextLogEvent[], attemptId: string): ContextPackState {
  return fold(contextPackDecider, ofFamily(events, 'context').filter((event) => stringField(event.payload, 'attempt_id') === attemptId).map(domain));
}

/** Every decision of the prefix (recorded ones and policy's), by id, the first of an id kept. */
function decisionsOf(prefix: readonly ContextLogEvent[]): { decision_id: string; summary: string }[] {
  const decisions = new Map<string, Decision>();
  for (const event of prefix) {
    const schema = event.event_type === 'decision.recorded' ? DecisionRecorded : event.event_type === 'policy.evaluated' ? PolicyEvaluated : undefined;
    const parsed = schema?.safeParse(event.payload);
    if (parsed === undefined || !parsed.success) continue;
    const { decision } = parsed.data;
    if (!decisions.has(decision.decision_id)) decisions.set(decision.decision_id, decision);
  }
  return [...decisions.values()].map((decision) => ({ decision_id: decision.decision_id, summary: clip(`${decision.decision_type}: ${decision.summary}`) }));
}

/** The artifacts executions of the prefix captured (the content stays in the store; the pack names it by hash). */
function artifactsOf(prefix: readonly ContextLogEvent[]): NonNullable<ContextCompileInput['artifacts']> {
  const artifacts = new Map<string, NonNullable<ContextCompileInput['artifacts']>[number]>();
  for (const event of prefix) {
    if (event.event_type !== 'execution.completed') continue;
    const parsed = ExecutionCompleted.safeParse(event.payload);
    if (!parsed.success) continue;
    for (const artifact of parsed.data.artifacts) {
      if (artifacts.has(artifact.artifact_id)) continue;
      const from = artifact.attempt_id ?? attemptIdOf(event);
      artifacts.set(artifact.artifact_id, {
        artifact_id: artifact.artifact_id,
        kind: artifact.kind,
        content_hash: artifact.content_hash,
        sensitivity_class: artifact.sensitivity_class,
        summary: clip(`${artifact.media_type}, ${artifact.byte_size} bytes${from === undefined ? '' : `, from attempt ${from}`}`),
      });
    }
  }
  return [...artifacts.values()];
}

/**
 * The inputs of an attempt's context pack, read from its task's log alone: the task's
 * events through the attempt's first `attempt.awaiting_policy`, and `as_of` that event's
 * `occurred_at`. Never a clock and never anything after that event, so the orchestrator
 * compiling it live, `writ context --verify` and a test folding an exported log all get
 * the same inputs, hence (the compiler being pure) the same bytes. Undefined when the
 * log holds no submitted request of the attempt, or no task.
 *
 * Hermit 15.7's sections from the log: the task contract (title, goal, and the
 * continuation anchor of a follow-up task: the ended outcome it continues), the step
 * contract (the step, and the attempt's request without its params, which may carry
 * content), the policy constraints the task was created under (profile, files_owned,
 * Sacred Scope exceptions), the task's decisions (recorded and policy's), its working
 * state and beliefs as the kernel folds them, and the artifacts executions captured.
 * Memory, ingress deltas, focus and session history are not on a task's stream yet.
 * The budget is the profile's as the prefix records it (`knowledgeLimitsInForce`:
 * the latest verdict before the attempt's request, so the task's first pack has the
 * defaults), unless `profile` is given.
 */
export function contextInputsFromLog(events: readonly ContextLogEvent[], attemptId: string, profile?: ContextProfile): ContextPackInputs | undefined {
  const opening = contextPackOpening(events, attemptId);
  if (opening === undefined) return undefined;
  const prefix = events.filter((event) => event.task_seq <= opening.task_seq);
  const task = fold(taskDecider, ofFamily(prefix, 'task').map(domain));
  const attempt = fold(attemptDecider, ofFamily(prefix, 'attempt').filter((event) => attemptIdOf(event) === attemptId).map(domain));
  if (task.status === 'initial' || attempt.status === 'initial') return undefined;
  const stepId = attempt.step_id;
  const step = fold(stepDecider, ofFamily(prefix, 'step').filter((event) => (event.step_id ?? (event.entity_type === 'step' ? event.entity_id : stringField(event.payload, 'step_id'))) === stepId).map(domain));
  const request = attempt.submitted_request;
  const workingState = fold(workingStateDecider, ofFamily(prefix, 'working_state').map(domain));
  const beliefs = fold(beliefDecider, ofFamily(prefix, 'belief').map(domain));
  const input: ContextCompileInput = {
    task_id: task.task_id,
    attempt_id: attemptId,
    as_of: opening.occurred_at,
    // A follow-up's continuation anchor is its structured carry-forward (Hermit 8.1.1, 15.7): the ended outcome, never its transcript;
    // a fork names its parent, whose working state it does not inherit.
    task_contract: {
      ref: task.task_contract_ref,
      content: json({
        task_id: task.task_id,
        title: task.title,
        goal: task.goal,
        briefed: task.brief !== null,
        ...(task.continuation_anchor === null ? {} : { continues: task.continuation_anchor }),
        ...(task.parent_task_id === null ? {} : { parent_task_id: task.parent_task_id }),
      }),
    },
    step_contract: {
      ref: step.status === 'initial' ? `step:${stepId}` : step.contract_ref,
      content: json({
        step_id: stepId,
        kind: step.status === 'initial' ? undefined : step.kind,
        title: step.status === 'initial' ? undefined : step.title,
        attempt_no: attempt.attempt_no,
        action:
          request === null
            ? undefined
            : {
                action_request_id: request.action_request_id,
                action_class: request.action_class,
                target_resources: request.target_resources,
                expected_effects: request.expected_effects,
                reversibility_hint: request.reversibility_hint,
                reason: request.reason,
              },
      }),
    },
    policy_constraints: [
      {
        ref: `policy:${task.policy_profile_ref.replace(/^(?:policy_profile|policy):/, '')}`,
        content: json({ policy_profile_ref: task.policy_profile_ref, files_owned: task.files_owned, sacred_exceptions: task.sacred_exceptions }),
      },
    ],
    decisions: decisionsOf(prefix),
    working_state: workingState.status === 'open' ? [...workingState.entries] : [],
    beliefs: beliefs.beliefs.filter((belief) => belief.task_id === task.task_id),
    artifacts: artifactsOf(prefix),
    profile: profile ?? knowledgeLimitsInForce(prefix).context_pack,
  };
  return { input, through_task_seq: opening.task_seq };
}
