import {
  IngressAccepted,
  IngressReceived,
  IngressRejected,
  hasErrorCode,
  safeParseActionRequest,
  type ActionRequest,
  type IngressChannel,
  type IngressRejectionCode,
} from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { serviceDraft } from '@writ/runtime';
import { IngressError } from '../ingress-errors.js';
import { peekCompactJws } from './compact-jws.js';
import { actionRequestClaimId, eventKeys, ingressIds, type IngressIds } from './ingress-ids.js';
import type { Clock, IngressLog, LoggedEvent, ParticipantSigners, PrincipalDirectory } from './ports.js';
import { planIntake, supersedesRefusal, taskStanding, type IntakeEvent } from './task-intake.js';
import { verifyActionRequest } from './verify-action-request.js';

/** One inbound signed ActionRequest, as the adapter received it. */
export interface InboundAction {
  readonly channel: IngressChannel;
  /** The body as received: a compact JWS (decoded as UTF-8). */
  readonly raw: string;
  /** Byte length of the body as received. */
  readonly rawBytes: number;
  /** NATS: the last token of `<root>.ingress.action.<principal_id>`; the request must come from this principal. */
  readonly subjectPrincipalId?: string | undefined;
  /** HTTP: the principal the caller names (`SubmitAction.principal_id`); else the JWS's `proposed_by`. */
  readonly claimedPrincipalId?: string | undefined;
  /** `Writ-Idempotency-Key` (or `Nats-Msg-Id`) / `SubmitAction.idempotency_key`; falls back to the claimed action_request_id. */
  readonly idempotencyKey?: string | undefined;
  /**
   * NATS: when the bus stored the request (the server's timestamp, not the sender's). It is the time of
   * receipt when earlier than the handler's clock, so a request that waited in the stream while ingress
   * was down or behind is judged as fresh as it was when it arrived. HTTP: absent (received now).
   */
  readonly storedAt?: Date | undefined;
}

/** The request/reply answer (and what a listener logs). */
export interface IngressReply {
  readonly ingress_id: string;
  readonly status: 'accepted' | 'rejected' | 'duplicate';
  readonly reason_code?: IngressRejectionCode;
  readonly message?: string;
  readonly action_request_id?: string;
  readonly task_id?: string;
}

export interface ReceiveActionSettings {
  /** `actor_id` of every event ingress appends. */
  readonly principalId: string;
  readonly freshnessSeconds: number;
  readonly maxIngressBytes: number;
  readonly stepMaxAttempts: number;
}

/**
 * Refusal code for an action_request_id this principal already submitted under
 * another idempotency key. The contract has no dedicated code yet (proposed:
 * INGRESS_DUPLICATE_REQUEST); until then it is an invalid request.
 */
export const DUPLICATE_ACTION_REQUEST_CODE: IngressRejectionCode = 'INGRESS_REQUEST_INVALID';

/** Event type of the claim on `writ.evt.ingress.iar-…` (proposed for @writ/contracts as IngressRequestClaimed). */
export const REQUEST_CLAIMED = 'ingress.request_claimed';

/**
 * Event type of the claim on `writ.evt.ingress.idk-…`: the first authenticated
 * request carrying a principal's idempotency key holds it (`{ principal_id,
 * idempotency_key, raw_sha256, ingress_id, at }`; proposed for @writ/contracts
 * as IngressKeyClaimed).
 */
export const KEY_CLAIMED = 'ingress.key_claimed';

const MAX_KEY = 256;
const MAX_CLAIMED_PRINCIPAL = 256;
const MAX_MESSAGE = 4_096;

/** A rejection message fits the contract's Text (1..4096). */
function bounded(message: string): string {
  const text = message === '' ? 'refused' : message;
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 1)}…` : text;
}

type Recorded =
  | { readonly kind: 'finished'; readonly events: readonly LoggedEvent[] }
  | {
      readonly kind: 'open';
      readonly received: IngressReceived;
      readonly receivedEventId: string;
      readonly seq: number;
      /** The record was found in the log (a redelivery after a crash), not appended by this run. */
      readonly resumed: boolean;
    };

/**
 * Step 1 of the governed path: load → decide (kernel) → append.
 *
 * 1. Derive `ingress_id` from the principal, the idempotency key AND the
 *    request's bytes (`ingressIds`). If its stream already ends in
 *    `ingress.accepted` / `ingress.rejected`, the message is a duplicate of
 *    those very bytes: nothing is appended, the recorded outcome is answered.
 * 2. Append `ingress.received` (raw JWS, channel, claimed principal) before
 *    anything else (invariant 1); a redelivery after a crash finds it and
 *    resumes from it (same raw, same time of receipt).
 * 3. Verify; a refusal before the signature verified appends `ingress.rejected`
 *    and nothing else: it reserves no key.
 * 4. Once the signature verified, claim the principal's idempotency key
 *    (`ingress.key_claimed`, first authenticated request wins): held by other
 *    bytes → `ingress.rejected` INGRESS_IDEMPOTENCY_CONFLICT. A refusal after
 *    authentication (stale, invalid…) keeps the key it claimed.
 * 5. Claim the principal's action_request_id (first ingress wins), append the
 *    task-stream events the kernel decides, then `ingress.accepted`.
 *
 * Idempotent by deterministic event ids and keys; a lost race throws
 * EVENTSTORE_CONFLICT for the caller to re-run (the bus retries soon).
 */
export class ReceiveActionHandler {
  constructor(
    private readonly log: IngressLog,
    private readonly principals: PrincipalDirectory,
    private readonly clock: Clock,
    private readonly settings: ReceiveActionSettings,
    /** Participants, who act under their seed_id with their child key while active (docs/spawn-retire.md); absent: principals only. */
    private readonly participants?: ParticipantSigners,
  ) {}

  async receive(input: InboundAction): Promise<IngressReply> {
    const peek = peekCompactJws(input.raw);
    const principalId = input.subjectPrincipalId ?? input.claimedPrincipalId ?? peek.proposedBy ?? '';
    const rawSha256 = sha256Hex(input.raw);
    const idempotencyKey = input.idempotencyKey ?? peek.actionRequestId ?? `sha256:${rawSha256}`;
    const ids = ingressIds(principalId, idempotencyKey, rawSha256);

    const recorded = await this.record(input, ids, principalId, idempotencyKey, rawSha256);
    if (recorded.kind === 'finished') return duplicateReply(ids.ingressId, recorded.events);
    const { received } = recorded;

    // A resumed ingress whose claim is already ours was accepted before the crash: finish it, do not judge again.
    let request = recorded.resumed ? await this.acceptedBefore(ids, recorded, principalId) : undefined;
    let history: LoggedEvent[];
    if (request === undefined) {
      const verdict = await verifyActionRequest(
        {
          raw: received.raw,
          rawBytes: rawLength(received, input),
          principalId,
          receivedAt: new Date(received.received_at),
          freshnessSeconds: this.settings.freshnessSeconds,
          maxBytes: this.settings.maxIngressBytes,
        },
        this.principals,
        this.participants,
      );
      // Only an authenticated request may hold the key; whatever the verdict after that, it holds it from now on.
      if (verdict.ok || verdict.authenticated) {
        const holder = await this.claimKey(ids, principalId, idempotencyKey, received.raw_sha256, recorded.receivedEventId);
        if (holder !== 'ours') {
          return this.reject(
            ids,
            recorded,
            'INGRESS_IDEMPOTENCY_CONFLICT',
            `idempotency key ${JSON.stringify(idempotencyKey.slice(0, 128))} of ${principalId} is held by another request (ingress ${holder.ingressId}); a new request needs a new key`,
            verdict.ok ? verdict.request.action_request_id : verdict.actionRequestId,
          );
        }
      }
      if (!verdict.ok) return this.reject(ids, recorded, verdict.code, verdict.message, verdict.actionRequestId);
      request = verdict.request;
      history = await this.readTask(request.task_id ?? ids.newTaskId);
      // An existing task must be live and the requester's own.
      if (request.task_id !== undefined) {
        const refusal = existingTaskRefusal(request.task_id, history, principalId);
        if (refusal !== undefined) return this.reject(ids, recorded, refusal.code, refusal.message, request.action_request_id);
      }
      // A request that supersedes another must name a live, not yet executing, request of the same task and principal.
      const supersedes = supersedesRefusal(
        history.map((e) => e.event),
        request,
        principalId,
      );
      if (supersedes !== undefined) return this.reject(ids, recorded, 'INGRESS_SUPERSEDES_INVALID', supersedes, request.action_request_id);
    } else {
      history = await this.readTask(request.task_id ?? ids.newTaskId);
    }

    const now = this.clock.now().toISOString();
    let plan;
    try {
      plan = planIntake({
        ids,
        request,
        principalId,
        channel: input.channel,
        history: history.map((e) => e.event),
        stepMaxAttempts: this.settings.stepMaxAttempts,
        now,
      });
    } catch (error) {
      if (hasErrorCode(error, 'INGRESS_INTAKE_CONFLICT')) throw error;
      // The kernel refused the request's content (e.g. a files_owned pattern): nothing was appended yet.
      const code = hasErrorCode(error, 'TASK_TERMINAL') ? 'INGRESS_TASK_TERMINAL' : 'INGRESS_REQUEST_INVALID';
      const message = error instanceof Error ? error.message : 'the request cannot open a task';
      return this.reject(ids, recorded, code, message, request.action_request_id);
    }

    const claim = await this.claim(principalId, request.action_request_id, ids.ingressId, recorded.receivedEventId, now);
    if (claim !== 'ours') {
      return this.reject(
        ids,
        recorded,
        DUPLICATE_ACTION_REQUEST_CODE,
        `action_request_id ${request.action_request_id} was already submitted by ${principalId} (ingress ${claim.ingressId}); a new action needs a new id`,
        request.action_request_id,
      );
    }

    if (plan.events.length > 0) {
      const lastSeq = history.at(-1)?.event.task_seq ?? 0;
      const drafts = plan.events.map((event) => this.taskDraft(event, plan.taskId, recorded.receivedEventId, now));
      await this.log.appendTask(plan.taskId, drafts, lastSeq);
    }
    return this.accept(ids, recorded, request, plan.taskId, plan.createsTask, principalId, now);
  }

  /** Finds the ingress record, or appends `ingress.received` as the stream's first event. */
  private async record(input: InboundAction, ids: IngressIds, principalId: string, key: string, rawSha256: string): Promise<Recorded> {
    if ((await this.log.headOfIngress(ids.ingressId)) > 0) {
      const events = await this.log.readIngress(ids.ingressId);
      if (events.some((e) => e.event.event_type === 'ingress.accepted' || e.event.event_type === 'ingress.rejected')) return { kind: 'finished', events };
      const first = events[0]?.event;
      const received = first?.event_type === 'ingress.received' ? IngressReceived.safeParse(first.payload) : undefined;
      if (first === undefined || received === undefined || !received.success) {
        throw new IngressError('INGRESS_LOG_INCONSISTENT', `the stream of ingress ${ids.ingressId} does not start with ingress.received`, {
          details: { ingress_id: ids.ingressId },
        });
      }
      return { kind: 'open', received: received.data, receivedEventId: first.event_id, seq: events.at(-1)?.event.task_seq ?? 1, resumed: true };
    }
    const now = this.clock.now().toISOString();
    const receivedAt = input.storedAt !== undefined && input.storedAt.toISOString() < now ? input.storedAt.toISOString() : now;
    const fits = input.rawBytes <= this.settings.maxIngressBytes;
    const received: IngressReceived = {
      ingress_id: ids.ingressId,
      source_channel: input.channel,
      claimed_principal_id: principalId.slice(0, MAX_CLAIMED_PRINCIPAL),
      idempotency_key: key.slice(0, MAX_KEY),
      // Too large to keep: the digest still identifies what arrived.
      raw: fits ? input.raw : '',
      raw_sha256: rawSha256,
      received_at: receivedAt,
    };
    const keys = eventKeys(ids.ingressId, 'ingress.received');
    const stored = await this.log.appendIngress(ids.ingressId, [this.ingressDraft(ids.ingressId, 'ingress.received', received, null, ids.ingressId, now)], 0);
    // Another instance recorded the same message a moment earlier: its record (time of receipt included) is the one.
    if (stored.duplicate) return this.record(input, ids, principalId, key, rawSha256);
    return { kind: 'open', received, receivedEventId: keys.eventId, seq: 1, resumed: false };
  }

  private async readTask(taskId: string): Promise<LoggedEvent[]> {
    return (await this.log.headOfTask(taskId)) === 0 ? [] : this.log.readTask(taskId);
  }

  /**
   * For a resumed record: the request, if this ingress already claimed its
   * action_request_id (it was verified and accepted before the crash).
   */
  private async acceptedBefore(ids: IngressIds, recorded: Extract<Recorded, { kind: 'open' }>, principalId: string): Promise<ActionRequest | undefined> {
    const peek = peekCompactJws(recorded.received.raw);
    if (peek.actionRequestId === undefined || !/^[A-Za-z0-9_-]{1,128}$/.test(peek.actionRequestId)) return undefined;
    const claimId = actionRequestClaimId(principalId, peek.actionRequestId);
    if ((await this.log.headOfIngress(claimId)) === 0) return undefined;
    const holder = (await this.log.readIngress(claimId))[0]?.event.payload['ingress_id'];
    if (holder !== ids.ingressId) return undefined;
    const parsed = safeParseActionRequest(peek.payload);
    if (!parsed.ok) {
      throw new IngressError('INGRESS_LOG_INCONSISTENT', `ingress ${ids.ingressId} holds its claim but its recorded request does not parse`, {
        cause: parsed.error,
        details: { ingress_id: ids.ingressId },
      });
    }
    return parsed.value;
  }

  private async reject(
    ids: IngressIds,
    recorded: Extract<Recorded, { kind: 'open' }>,
    code: IngressRejectionCode,
    message: string,
    actionRequestId: string | undefined,
  ): Promise<IngressReply> {
    const now = this.clock.now().toISOString();
    const payload: IngressRejected = IngressRejected.parse({
      ingress_id: ids.ingressId,
      reason_code: code,
      message: bounded(message),
      ...(actionRequestId === undefined ? {} : { action_request_id: actionRequestId }),
      at: now,
    });
    await this.log.appendIngress(
      ids.ingressId,
      [this.ingressDraft(ids.ingressId, 'ingress.rejected', payload, recorded.receivedEventId, ids.ingressId, now)],
      recorded.seq,
    );
    return {
      ingress_id: ids.ingressId,
      status: 'rejected',
      reason_code: code,
      message: payload.message,
      ...(actionRequestId === undefined ? {} : { action_request_id: actionRequestId }),
    };
  }

  private async accept(
    ids: IngressIds,
    recorded: Extract<Recorded, { kind: 'open' }>,
    request: ActionRequest,
    taskId: string,
    createdTask: boolean,
    principalId: string,
    now: string,
  ): Promise<IngressReply> {
    const payload: IngressAccepted = {
      ingress_id: ids.ingressId,
      action_request_id: request.action_request_id,
      principal_id: principalId,
      task_id: taskId,
      step_id: ids.stepId,
      attempt_id: ids.attemptId,
      created_task: createdTask,
      at: now,
    };
    await this.log.appendIngress(
      ids.ingressId,
      [this.ingressDraft(ids.ingressId, 'ingress.accepted', payload, recorded.receivedEventId, taskId, now)],
      recorded.seq,
    );
    return { ingress_id: ids.ingressId, status: 'accepted', action_request_id: request.action_request_id, task_id: taskId };
  }

  /**
   * First authenticated request to claim (principal, idempotency key) wins;
   * the claim names its bytes (`raw_sha256`) and its record. Returns 'ours'
   * when this record holds it (also after a crash and redelivery).
   */
  private async claimKey(ids: IngressIds, principalId: string, key: string, rawSha256: string, causationId: string): Promise<'ours' | { ingressId: string }> {
    const now = this.clock.now().toISOString();
    const payload = { principal_id: principalId, idempotency_key: key.slice(0, MAX_KEY), raw_sha256: rawSha256, ingress_id: ids.ingressId, at: now };
    return this.firstClaim(ids.keyClaimId, KEY_CLAIMED, payload, ids.ingressId, causationId, now);
  }

  /**
   * First ingress to claim (principal, action_request_id) wins. Returns 'ours'
   * when this ingress holds the claim (also after a crash and redelivery).
   */
  private async claim(principalId: string, actionRequestId: string, ingressId: string, causationId: string, now: string): Promise<'ours' | { ingressId: string }> {
    const claimId = actionRequestClaimId(principalId, actionRequestId);
    return this.firstClaim(claimId, REQUEST_CLAIMED, { action_request_id: actionRequestId, principal_id: principalId, ingress_id: ingressId, at: now }, ingressId, causationId, now);
  }

  /** Appends the claim as the first event of `claimId`'s stream, or reads who holds it. */
  private async firstClaim(claimId: string, type: string, payload: Readonly<Record<string, unknown>> & { readonly ingress_id: string }, ingressId: string, causationId: string, now: string): Promise<'ours' | { ingressId: string }> {
    const draft = {
      ...this.ingressDraft(claimId, type, payload, causationId, ingressId, now),
      // Keyed by the claimant, so a rival's claim is a conflict, never mistaken for a dedupe of ours.
      event_id: `${claimId}-${ingressId}`,
      idempotency_key: `${claimId}:${ingressId}`,
    };
    try {
      await this.log.appendIngress(claimId, [draft], 0);
      return 'ours';
    } catch (error) {
      if (!hasErrorCode(error, 'EVENTSTORE_CONFLICT')) throw error;
    }
    const first = (await this.log.readIngress(claimId))[0]?.event;
    const holder = (first?.payload as { ingress_id?: unknown } | undefined)?.ingress_id;
    if (typeof holder !== 'string') {
      throw new IngressError('INGRESS_LOG_INCONSISTENT', `the claim ${claimId} cannot be read`, { details: { claim_id: claimId } });
    }
    return holder === ingressId ? 'ours' : { ingressId: holder };
  }

  private ingressDraft(entityId: string, type: string, payload: object, causationId: string | null, correlationId: string, now: string) {
    const keys = eventKeys(entityId, type);
    return serviceDraft({
      key: keys.idempotencyKey,
      eventId: keys.eventId,
      eventType: type,
      entityType: 'ingress',
      entityId,
      occurredAt: now,
      actorId: this.settings.principalId,
      payload,
      causationId,
      correlationId,
    });
  }

  private taskDraft(event: IntakeEvent, taskId: string, causationId: string, now: string) {
    return serviceDraft({
      key: event.idempotencyKey,
      eventId: event.eventId,
      eventType: event.type,
      entityType: event.entityType,
      entityId: event.entityId,
      stepId: event.stepId,
      attemptId: event.attemptId,
      occurredAt: now,
      actorId: this.settings.principalId,
      payload: event.data,
      causationId,
      correlationId: taskId,
    });
  }
}

/** The recorded byte size: the live message's, or for a resumed record whose raw was elided, "too large". */
function rawLength(received: IngressReceived, input: InboundAction): number {
  if (received.raw_sha256 === sha256Hex(input.raw)) return input.rawBytes;
  if (received.raw === '' && received.raw_sha256 !== sha256Hex('')) return Number.MAX_SAFE_INTEGER;
  return Buffer.byteLength(received.raw, 'utf8');
}

function duplicateReply(ingressId: string, events: readonly LoggedEvent[]): IngressReply {
  for (const { event } of events) {
    if (event.event_type === 'ingress.accepted') {
      const accepted = IngressAccepted.safeParse(event.payload);
      if (accepted.success) return { ingress_id: ingressId, status: 'duplicate', action_request_id: accepted.data.action_request_id, task_id: accepted.data.task_id };
    }
    if (event.event_type === 'ingress.rejected') {
      const rejected = IngressRejected.safeParse(event.payload);
      if (rejected.success) {
        return {
          ingress_id: ingressId,
          status: 'duplicate',
          reason_code: rejected.data.reason_code,
          message: rejected.data.message,
          ...(rejected.data.action_request_id === undefined ? {} : { action_request_id: rejected.data.action_request_id }),
        };
      }
    }
  }
  return { ingress_id: ingressId, status: 'duplicate' };
}

/** Why a request naming `task_id` cannot act in that task, if it cannot. */
function existingTaskRefusal(
  taskId: string,
  history: readonly LoggedEvent[],
  principalId: string,
): { readonly code: IngressRejectionCode; readonly message: string } | undefined {
  const standing = taskStanding(history.map((e) => e.event));
  if (standing === 'unknown') return { code: 'INGRESS_TASK_UNKNOWN', message: `task ${taskId} does not exist` };
  if (standing === 'terminal') return { code: 'INGRESS_TASK_TERMINAL', message: `task ${taskId} has ended` };
  if (standing.owner !== principalId) return { code: 'INGRESS_PRINCIPAL_MISMATCH', message: `task ${taskId} belongs to another principal` };
  return undefined;
}
