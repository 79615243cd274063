import { LIMITS, TASK_TERMINAL_STATES, clipText, type EventEnvelope, type IngressMessageReply, type IngressMessageSubmission, type SubmitIngressMessage } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import {
  approvalDecider,
  chooseBinding,
  disambiguation,
  conversationTasks,
  fold,
  ingressBindingDecider,
  taskDecider,
  type BindingChoice,
  type BindingTask,
  type FocusLogEntry,
  type IngressBindingEvent,
  type IngressState,
  type TaskRecord,
} from '@writ/kernel';
import { SIGNED_REQUESTS, conversationStreamId, decision, followUpTaskId, handleCommand, messageIngressId, serviceDraft, verifySignedRequest, type PrincipalRecord, type SignedRequestFailureReason, type SignedRequestPrincipals } from '@writ/runtime';
import { redactSecrets } from '@writ/telemetry';
import { IngressError, type IngressErrorCode } from '../ingress-errors.js';
import type { Clock, IngressLog, LoggedEvent } from './ports.js';
import { planStartedTask, type StartedTaskRelation } from './task-intake.js';

/** Where a message's text is kept: the content-addressed artifact bucket (the event holds its SHA-256 only). */
export interface MessageTexts {
  store(bytes: Uint8Array): Promise<void>;
}

export interface SubmitMessageDeps {
  readonly log: IngressLog;
  /** The log's principals (with the trust anchor's operator over them). */
  readonly principals: SignedRequestPrincipals<PrincipalRecord>;
  readonly texts: MessageTexts;
  readonly clock: Clock;
  /** Ingress's principal: `actor_id` and `bound_by` of what it appends. */
  readonly principalId: string;
  /** ±seconds around the clock `sent_at` must lie in. */
  readonly freshnessSeconds: number;
  readonly maxRounds?: number;
}

const REFUSALS: Record<SignedRequestFailureReason, IngressErrorCode> = {
  signature_invalid: 'INGRESS_MESSAGE_SIGNATURE_INVALID',
  signer_not_allowed: 'INGRESS_MESSAGE_SIGNATURE_INVALID',
  stale: 'INGRESS_MESSAGE_STALE',
  contract_invalid: 'INGRESS_MESSAGE_SIGNATURE_INVALID',
};

/** Source channel of a message that came over `<root>.qry.ingress.submit-message`. */
const CHANNEL = 'nats';
/** At most this many of a conversation's earlier tasks are weighed (most recently bound first): a long conversation costs no more. */
const MAX_WEIGHED_TASKS = LIMITS.shortListItems;

/** The conversation stream's events as the kernel's fold and decider read them. */
const asEntries = (streamId: string, events: readonly LoggedEvent[]): FocusLogEntry[] =>
  events.map(({ event }) => ({ entity_type: 'ingress', entity_id: streamId, event: { type: event.event_type, data: event.payload } }));

function ingressState(events: readonly LoggedEvent[], ingressId: string): IngressState {
  const own = events.filter(({ event }) => event.payload['ingress_id'] === ingressId).map(({ event }) => ({ type: event.event_type, data: event.payload }));
  return fold(ingressBindingDecider, own);
}

interface Message {
  readonly payload: IngressMessageSubmission;
  readonly signer: PrincipalRecord;
  readonly streamId: string;
  readonly ingressId: string;
  readonly textSha256: string;
}

/**
 * `<root>.qry.ingress.submit-message` (issue 17, Hermit 8.1.2 / 8.1.3): a
 * free-form message signed by any registered principal, recorded first and
 * then bound.
 *
 * 1. Verify the JWS (the signer's active key, typ `writ-ingress-message+jws`,
 *    fresh) and check what it names without writing anything: an explicit
 *    task must exist and be the signer's own (a director may name any), a
 *    reply must name a message of this conversation. A refusal records
 *    nothing.
 * 2. Store the text, secret-looking values redacted, in the artifact bucket
 *    under its SHA-256, then append `ingress.recorded` (that hash, never the
 *    text) to the principal's conversation stream `cnv-…` (invariant 1).
 * 3. Bind: the kernel's binder weighs the explicit task, the replied
 *    message's task, the focus and the conversation's other tasks, each read
 *    from its own log now (never from a projection), and the kernel's
 *    decider checks the binding; `ingress.bound` follows on the same stream.
 *
 * One stream per principal and conversation serializes its bindings (the
 * append is guarded by the stream's sequence), so two messages cannot both
 * bind against a focus the other one moved. Idempotent by ingress id
 * (principal, conversation, message_id): a resend answers the binding it got
 * (`duplicate`), a delivery after a crash between 2 and 3 binds once, and the
 * same message_id with another text or target is INGRESS_MESSAGE_REUSED.
 */
export class SubmitMessageHandler {
  constructor(private readonly deps: SubmitMessageDeps) {}

  async submit(request: SubmitIngressMessage): Promise<IngressMessageReply> {
    const message = await this.#verified(request.message_jws);
    await this.#checkTargets(message);
    const recorded = await this.#record(message);
    return this.#bind(message, recorded);
  }

  async #verified(jws: string): Promise<Message> {
    const rules = { ...SIGNED_REQUESTS.ingressMessage, signers: 'any' as const, freshnessSeconds: this.deps.freshnessSeconds };
    const { payload, principal } = await verifySignedRequest(jws, rules, {
      principals: this.deps.principals,
      clock: () => this.deps.clock.now(),
      failure: (reason, message, details, cause) => new IngressError(REFUSALS[reason], message, { details, cause }),
    });
    // What is kept is the text with secret-looking values masked (invariant 6); its hash is the content address.
    const text = redactSecrets(payload.text);
    return {
      payload: { ...payload, text },
      signer: principal,
      streamId: conversationStreamId(principal.principal_id, payload.conversation_id),
      ingressId: messageIngressId(principal.principal_id, payload.conversation_id, payload.message_id),
      textSha256: sha256Hex(text),
    };
  }

  async #checkTargets({ payload, signer, streamId }: Message): Promise<void> {
    if (payload.explicit_task_ref !== undefined) {
      const task = await this.#task(payload.explicit_task_ref);
      // A director may speak about any task; an agent never counts as one, whatever roles it holds (as for HTTP reads).
      const director = signer.principal_type !== 'agent' && signer.roles.includes('director');
      if (task === undefined || (task.record.owner_principal_id !== signer.principal_id && !director)) {
        // One answer for "no such task" and "not yours": a caller learns nothing about others' tasks.
        throw new IngressError('INGRESS_MESSAGE_TASK_UNKNOWN', `${signer.principal_id} has no task ${payload.explicit_task_ref} to send a message about (a message names a task of its sender's; a director, a user or operator with the director role, may name any)`, {
          details: { task_id: payload.explicit_task_ref },
        });
      }
    }
    if (payload.reply_to_ref !== undefined) {
      const events = await this.#conversation(streamId);
      if (!events.some(({ event }) => event.event_type === 'ingress.recorded' && event.payload['ingress_id'] === payload.reply_to_ref)) {
        throw new IngressError('INGRESS_MESSAGE_REPLY_UNKNOWN', `conversation ${payload.conversation_id} of ${signer.principal_id} holds no message ${payload.reply_to_ref} to reply to`, {
          details: { reply_to_ref: payload.reply_to_ref },
        });
      }
    }
  }

  /** Stores the text, then appends `ingress.recorded` unless the stream holds it already; returns when it was recorded. */
  async #record(message: Message): Promise<string> {
    const { payload, streamId, ingressId, textSha256 } = message;
    // Content-addressed and idempotent: stored before the record that names it, so a record never points at nothing.
    await this.deps.texts.store(new TextEncoder().encode(payload.text));
    return handleCommand({
      stream: this.#stream(streamId),
      maxRounds: this.deps.maxRounds,
      exhausted: () => busy(payload.conversation_id),
      decide: ({ events }) => {
        const state = ingressState(events, ingressId);
        if (state.status !== 'initial') {
          const first = events.find(({ event }) => event.event_type === 'ingress.recorded' && event.payload['ingress_id'] === ingressId)!.event;
          sameMessage(first, message);
          return decision.done(first.payload['at'] as string);
        }
        const now = this.deps.clock.now().toISOString();
        const data = {
          ingress_id: ingressId,
          conversation_id: payload.conversation_id,
          principal_id: message.signer.principal_id,
          source_channel: CHANNEL,
          text_sha256: textSha256,
          ...(payload.explicit_task_ref === undefined ? {} : { explicit_task_ref: payload.explicit_task_ref }),
          ...(payload.reply_to_ref === undefined ? {} : { reply_to_ref: payload.reply_to_ref }),
          ...(payload.fork === true ? { fork: true as const } : {}),
        };
        const [event] = ingressBindingDecider.decide({ type: 'record-ingress', data, metadata: { now } }, state);
        return decision.append([this.#draft(streamId, ingressId, event!, null, now)], now);
      },
    });
  }

  async #bind(message: Message, recordedAt: string): Promise<IngressMessageReply> {
    const { payload, signer, streamId, ingressId } = message;
    return handleCommand({
      stream: this.#stream(streamId),
      maxRounds: this.deps.maxRounds,
      exhausted: () => busy(payload.conversation_id),
      decide: async ({ events }) => {
        const state = ingressState(events, ingressId);
        if (state.status === 'bound') {
          // A crash between this message's binding and the one it disambiguates: the resend finishes the second.
          const bound = boundEvent(events, ingressId);
          const task = bound.task_id === undefined ? undefined : asBindingTask(bound.task_id, await this.#task(bound.task_id));
          const choice = { ...bound, ...(task === undefined ? {} : { continued_task_status: task.status }) };
          const missing = this.#disambiguation(events, message, choice, laterOf(this.deps.clock.now().toISOString(), recordedAt));
          const reply = this.#reply(message, bound, true);
          return missing === undefined ? decision.done(reply) : decision.append([missing], reply);
        }
        // Everything but this message: what the conversation said before it.
        const before = events.filter(({ event }) => event.payload['ingress_id'] !== ingressId);
        const tasks = conversationTasks(asEntries(streamId, before), signer.principal_id, payload.conversation_id);
        const replyTask = payload.reply_to_ref === undefined ? undefined : tasks.boundTo[payload.reply_to_ref];
        const weighed = [...tasks.others].reverse().slice(0, MAX_WEIGHED_TASKS);
        // Each task read once per round: a task named twice (the explicit one is also the focus), or started from, is not read again.
        const known = new Map<string, Promise<TaskFacts | undefined>>();
        const facts = (id: string) => known.get(id) ?? known.set(id, this.#task(id)).get(id)!;
        const [explicit, replied, focus, ...others] = await Promise.all(
          [payload.explicit_task_ref, replyTask ?? undefined, tasks.focus_task_id ?? undefined, ...weighed].map(async (id) => (id === undefined ? undefined : asBindingTask(id, await facts(id)))),
        );
        const newTaskId = followUpTaskId(ingressId);
        const choice = chooseBinding({
          kind: payload.kind,
          explicit,
          replyTo: payload.reply_to_ref === undefined ? undefined : { ingress_id: payload.reply_to_ref, task: replied },
          focus,
          others: others.filter((task): task is BindingTask => task !== undefined),
          newTaskId,
          fork: payload.fork === true,
        });
        if (choice.resolution === 'start_new_root' && choice.continuation_anchor !== undefined) {
          const anchor = choice.continuation_anchor;
          await this.#startTask(message, newTaskId, anchor.anchor_task_id, await facts(anchor.anchor_task_id), { kind: 'follow_up', continuationAnchor: anchor });
        }
        if (choice.resolution === 'fork_child' && choice.parent_task_id !== undefined) {
          await this.#startTask(message, newTaskId, choice.parent_task_id, await facts(choice.parent_task_id), { kind: 'fork' });
        }
        const now = laterOf(this.deps.clock.now().toISOString(), recordedAt);
        const { candidates, ...rest } = choice;
        const [event] = ingressBindingDecider.decide({ type: 'bind-ingress', data: { ...rest, candidates: [...candidates], bound_by: this.deps.principalId }, metadata: { now } }, state);
        const recordEventId = `${ingressId}-recorded`;
        const disambiguated = this.#disambiguation(events, message, choice, now);
        return decision.append([this.#draft(streamId, ingressId, event!, recordEventId, now), ...(disambiguated === undefined ? [] : [disambiguated])], this.#reply(message, event!.data as BoundData, false));
      },
    });
  }

  /**
   * The binding of the message this one replies to, when that one was left
   * `pending_disambiguation` and this one names (explicit ref) a live task
   * among its candidates (the kernel's `disambiguation`); undefined otherwise,
   * or when it is bound already. Drafted under a key of both messages, so a
   * resend drafts the same event and the log keeps it once.
   */
  #disambiguation(events: readonly LoggedEvent[], message: Message, choice: Pick<BindingChoice, 'resolution' | 'task_id' | 'continued_task_status'>, now: string) {
    const pendingId = message.payload.reply_to_ref;
    if (pendingId === undefined) return undefined;
    const state = ingressState(events, pendingId);
    if (state.status !== 'pending_disambiguation') return undefined;
    const pending = boundEvent(events, pendingId);
    const bound = disambiguation({ ingress_id: pendingId, candidates: pending.candidates }, { ingress_id: message.ingressId, explicit: message.payload.explicit_task_ref !== undefined, choice });
    if (bound === undefined) return undefined;
    const { candidates, ...rest } = bound;
    const [event] = ingressBindingDecider.decide({ type: 'bind-ingress', data: { ...rest, candidates: [...candidates], bound_by: this.deps.principalId }, metadata: { now } }, state);
    return serviceDraft({
      key: `ingress.bound:${pendingId}:disambiguated-by:${message.ingressId}`,
      eventId: `${pendingId}-bound-by-${message.ingressId}`,
      eventType: event!.type,
      entityType: 'ingress',
      entityId: message.streamId,
      occurredAt: now,
      actorId: this.deps.principalId,
      payload: event!.data,
      causationId: `${message.ingressId}-bound`,
      correlationId: pendingId,
    });
  }

  #reply(message: Message, bound: BoundData, duplicate: boolean): IngressMessageReply {
    return {
      ingress_id: message.ingressId,
      conversation_id: message.payload.conversation_id,
      principal_id: message.signer.principal_id,
      resolution: bound.resolution,
      ...(bound.task_id === undefined ? {} : { task_id: bound.task_id }),
      candidates: bound.candidates.flatMap((candidate) => (candidate.task_id === undefined ? [] : [candidate.task_id])),
      rationale: bound.rationale,
      ...(bound.confidence === undefined ? {} : { confidence: bound.confidence }),
      text_sha256: message.textSha256,
      duplicate,
    };
  }

  #draft(streamId: string, ingressId: string, event: IngressBindingEvent, causationId: string | null, now: string) {
    const suffix = event.type === 'ingress.recorded' ? 'recorded' : 'bound';
    return serviceDraft({
      // Keyed by the message, not the content: a resend drafts the very same event, and the log dedupes it.
      key: `${event.type}:${ingressId}`,
      eventId: `${ingressId}-${suffix}`,
      eventType: event.type,
      entityType: 'ingress',
      entityId: streamId,
      occurredAt: now,
      actorId: this.deps.principalId,
      payload: event.data,
      causationId,
      correlationId: ingressId,
    });
  }

  #stream(streamId: string) {
    return {
      read: async () => {
        const events = await this.#conversation(streamId);
        return { events, seq: events.at(-1)?.event.task_seq ?? 0 };
      },
      append: (drafts: readonly unknown[], expectedSeq: number) => this.deps.log.appendIngress(streamId, drafts, expectedSeq),
    };
  }

  async #conversation(streamId: string): Promise<LoggedEvent[]> {
    return (await this.deps.log.headOfIngress(streamId)) === 0 ? [] : this.deps.log.readIngress(streamId);
  }

  async #task(taskId: string): Promise<TaskFacts | undefined> {
    if ((await this.deps.log.headOfTask(taskId)) === 0) return undefined;
    const events = await this.deps.log.readTask(taskId);
    const of = (entityType: string, entityId?: string) =>
      events
        .filter(({ event }) => event.entity_type === entityType && (entityId === undefined || event.entity_id === entityId))
        .map(({ event }) => ({ type: event.event_type, data: event.payload }));
    const record = fold(taskDecider, of('task'));
    if (record.status === 'initial') return undefined;
    // Each approval folded on its own entity, as the approval service decides it: pending until granted, denied, expired, cancelled or invalidated.
    const approvalIds = [...new Set(events.flatMap(({ event }) => (event.entity_type === 'approval' ? [event.entity_id] : [])))];
    const pendingApprovals = approvalIds.filter((id) => fold(approvalDecider, of('approval', id)).status === 'pending');
    const receipts = events.flatMap(({ event }) => (event.event_type === 'receipt.issued' && typeof event.payload['receipt_id'] === 'string' ? [`receipt:${event.payload['receipt_id']}`] : []));
    const summary = `task ${taskId} ${record.status}: ${record.title}${record.reason === null ? '' : ` (${record.reason})`}; ${receipts.length} receipt(s)`;
    return { record, pendingApprovals, outcome: { summary: clipText(summary, LIMITS.text), artifact_refs: receipts } };
  }


  /**
   * Starts the task a follow-up (start_new_root) or a fork (fork_child) binds
   * to, before the binding names it, so a binding never points at nothing:
   * its events are derived from the ingress id, so a crash between this and
   * the binding is finished by the next delivery, and the task starts once.
   */
  async #startTask(message: Message, newTaskId: string, fromTaskId: string, from: TaskFacts | undefined, relation: StartedTaskRelation): Promise<void> {
    if (from === undefined) throw new IngressError('INGRESS_LOG_INCONSISTENT', `task ${fromTaskId} the message is about is no longer in the log`);
    const head = await this.deps.log.headOfTask(newTaskId);
    const history = head === 0 ? [] : (await this.deps.log.readTask(newTaskId)).map(({ event }) => event);
    const created = history.find((event) => event.event_type === 'task.created');
    if (created !== undefined && created.payload['task_contract_ref'] !== `ingress:${message.ingressId}`) {
      throw new IngressError('INGRESS_LOG_INCONSISTENT', `task ${newTaskId} exists and was not started by message ${message.ingressId}`, { details: { task_id: newTaskId } });
    }
    const now = this.deps.clock.now().toISOString();
    const events = planStartedTask({
      ingressId: message.ingressId,
      newTaskId,
      from: from.record,
      relation,
      senderId: message.signer.principal_id,
      textSha256: message.textSha256,
      channel: CHANNEL,
      history,
      now,
    });
    if (events.length === 0) return;
    const recordEventId = `${message.ingressId}-recorded`;
    const drafts = events.map((event) =>
      serviceDraft({ key: event.idempotencyKey, eventId: event.eventId, eventType: event.type, entityType: event.entityType, entityId: event.entityId, occurredAt: now, actorId: this.deps.principalId, payload: event.data, causationId: recordEventId, correlationId: newTaskId }),
    );
    await this.deps.log.appendTask(newTaskId, drafts, head);
  }
}

type BoundData = Extract<IngressBindingEvent, { type: 'ingress.bound' }>['data'];

/** A task as the binder weighs it; an ended one with its outcome (a follow-up's anchor). */
function asBindingTask(taskId: string, task: TaskFacts | undefined): BindingTask | undefined {
  if (task === undefined) return undefined;
  const ended = TASK_TERMINAL_STATES.includes(task.record.status);
  return { task_id: taskId, status: task.record.status, pending_approvals: task.pendingApprovals, ...(ended ? { outcome: task.outcome } : {}) };
}

/** A task as its log says it now: the folded record, its pending approvals, and (for an ended one) its outcome. */
interface TaskFacts {
  readonly record: TaskRecord;
  readonly pendingApprovals: readonly string[];
  readonly outcome: { readonly summary: string; readonly artifact_refs: readonly string[] };
}


function boundEvent(events: readonly LoggedEvent[], ingressId: string): BoundData {
  // The fold said bound: its last accepted binding is the stream's last ingress.bound of this ingress.
  const bound = events.filter(({ event }) => event.event_type === 'ingress.bound' && event.payload['ingress_id'] === ingressId).at(-1);
  if (bound === undefined) throw new IngressError('INGRESS_LOG_INCONSISTENT', `ingress ${ingressId} folds as bound but holds no binding`, { details: { ingress_id: ingressId } });
  return bound.event.payload as BoundData;
}

/** A resend must be the message first recorded under its id: same text, same targets. */
function sameMessage(recorded: EventEnvelope, message: Message): void {
  const was = recorded.payload;
  const same =
    was['text_sha256'] === message.textSha256 &&
    was['explicit_task_ref'] === message.payload.explicit_task_ref &&
    was['reply_to_ref'] === message.payload.reply_to_ref &&
    was['fork'] === message.payload.fork;
  if (!same) {
    throw new IngressError(
      'INGRESS_MESSAGE_REUSED',
      `message_id ${message.payload.message_id} of conversation ${message.payload.conversation_id} was first sent with another text or target (ingress ${message.ingressId}); send this one under a new message_id`,
      { details: { ingress_id: message.ingressId } },
    );
  }
}

function busy(conversationId: string): IngressError {
  return new IngressError('INGRESS_MESSAGE_BUSY', `conversation ${conversationId} kept changing while the message was recorded; send it again (same message_id)`);
}

/** A binding is never dated before its record (the decider's clock check, and a reader's order). */
const laterOf = (a: string, b: string) => (a >= b ? a : b);

