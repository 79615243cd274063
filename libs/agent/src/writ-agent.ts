import type { NatsConnection } from '@nats-io/transport-node';
import { setTimeout as delay } from 'node:timers/promises';
import { buildActionRequest, ingressSubject, newTaskId, signActionRequest, type ActionRequestFields, type SignedActionRequest } from './action-request.js';
import { AgentError } from './agent-errors.js';
import type { AgentKey } from './agent-key.js';
import { ActionView, IngressReplyView, KeysView, ReceiptView, TERMINAL_ACTION_STATUSES, TaskView, type TaskEventView } from './api-views.js';
import { checkContract } from './contract-check.js';
import { ClaimReply, SubmitClaim, type ActionRequest, type Brief, type Receipt } from './contracts.js';
import { connectNats, publishAction, requestService, type NatsOptions, type PublishAck } from './nats-link.js';
import { verifyReceipt, type JsonWebKeySet, type ReceiptCheck, type ReceiptDocument, type TimelineReceipt } from './receipt-verification.js';
import { briefedTaskRequest, type BriefedTaskOptions, type FirstActionFields } from './task-brief.js';
import { claimSubject, signTaskClaim, type TaskClaim } from './task-claims.js';
import { TaskUpdates, type TaskUpdatesOptions } from './task-updates.js';
import { WritApi, type Fetch } from './writ-api.js';

export interface WritAgentOptions {
  /** The agent's principal id, as registered (`writ principal add --id`). */
  readonly principalId: string;
  /** Its signing key (`loadAgentKey`); its kid must be one of the principal's registered keys. */
  readonly key: AgentKey;
  /** Writ's HTTP API; default `http://127.0.0.1:8080`. */
  readonly apiUrl?: string;
  /** The deployment's subject root (`WRIT_SUBJECT_ROOT`); default `writ`. */
  readonly subjectRoot?: string;
  /** Writ's NATS: how to connect (lazily, on the first NATS call; closed by `close()`), or a connection the caller owns. */
  readonly nats?: NatsOptions | NatsConnection;
  /**
   * Claims over NATS: a connection (or how to make one) whose credential may
   * send `<root>.qry.orchestrator.claim-*` (the credential `writ principal
   * add` issues an agent may not). Without it claims go over HTTP, where the
   * signed claim is the credential (README, "Claims").
   */
  readonly claimsNats?: NatsOptions | NatsConnection;
  /** Poll interval of `awaitOutcome` and `awaitClaimVerdict`; default 250 ms. */
  readonly pollMs?: number;
  /** The fetch to use (default the global one). */
  readonly fetch?: Fetch;
}

export type Via = 'nats' | 'http';

/** What a submission got: the request is recorded (NATS: stored in the ingress stream; HTTP: answered by ingress). */
export interface SubmitResult {
  readonly via: Via;
  readonly actionRequestId: string;
  readonly idempotencyKey: string;
  /** The task the request acts in: its `task_id`, or the one a request with `task` creates (derived as ingress derives it). */
  readonly taskId: string;
  readonly jws: string;
  /** NATS: JetStream's ack. Ingress judges the request after it; `awaitOutcome` tells what it decided. */
  readonly stored?: PublishAck;
  /** HTTP: ingress's answer, `accepted` or `duplicate` (a refusal throws AGENT_SUBMIT_REJECTED). */
  readonly ingress?: IngressReplyView;
}

/** A receipt fetched from the API and verified (`verifyReceipt`): every check passed. */
export interface VerifiedReceipt {
  readonly receipt: Receipt;
  readonly jws: string;
  /** The trusted key that signed it. */
  readonly kid: string;
  readonly checks: readonly ReceiptCheck[];
}

export interface Outcome {
  /** The action as `GET /v1/actions/<id>` last reported it. */
  readonly action: ActionView;
  /** Terminal (and receipted, unless ingress rejected it); false when `until` ended the wait first. */
  readonly settled: boolean;
  /** The action's receipt, verified; null while there is none (rejected by ingress, or not settled). */
  readonly receipt: VerifiedReceipt | null;
}

export interface AwaitOutcomeOptions {
  /** Default 60 s; then AGENT_OUTCOME_TIMEOUT. */
  readonly timeoutMs?: number;
  /** Stop waiting earlier when this holds (e.g. `(a) => a.status === 'awaiting_approval'`). */
  readonly until?: (action: ActionView) => boolean;
  /** Verify the receipt (default true). False returns `receipt: null`: read it with `receipt(id)` yourself. */
  readonly verifyReceipt?: boolean;
}

/** Terminal, and receipted unless ingress rejected it (then no receipt ever comes). */
export function isSettled(action: ActionView): boolean {
  return (TERMINAL_ACTION_STATUSES as readonly string[]).includes(action.status) && (action.status === 'rejected' || (action.receipt_id ?? null) !== null);
}

function isConnection(value: NatsOptions | NatsConnection): value is NatsConnection {
  return typeof (value as Partial<NatsConnection>).request === 'function';
}

/**
 * An agent's client of Writ: it signs every request with the agent's key,
 * submits over NATS (its ingress subject) or HTTP (`POST /v1/actions`), waits
 * for outcomes by polling `GET /v1/actions/<id>` with a bearer token it signs
 * itself, verifies each receipt against `GET /v1/keys` and the task's
 * timeline, creates tasks from briefs, and sends done / blocked claims.
 * Call `close()` when done: it drains the NATS connections it opened.
 */
export class WritAgent {
  readonly principalId: string;
  readonly subjectRoot: string;
  readonly #api: WritApi;
  readonly #key: AgentKey;
  readonly #options: WritAgentOptions;
  readonly #owned: NatsConnection[] = [];
  #nats: Promise<NatsConnection> | undefined;
  #claimsNats: Promise<NatsConnection> | undefined;
  #keys: JsonWebKeySet | undefined;
  #closed = false;

  constructor(options: WritAgentOptions) {
    this.principalId = options.principalId;
    this.subjectRoot = options.subjectRoot ?? 'writ';
    this.#key = options.key;
    this.#options = options;
    this.#api = new WritApi({
      baseUrl: options.apiUrl ?? 'http://127.0.0.1:8080',
      principalId: options.principalId,
      key: options.key,
      subjectRoot: this.subjectRoot,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
  }

  /** `<root>.ingress.action.<principal id>`: where this agent publishes. */
  get ingressSubject(): string {
    return ingressSubject(this.principalId, this.subjectRoot);
  }

  /** An ActionRequest proposed by this agent now (`buildActionRequest`). */
  newRequest(fields: ActionRequestFields): ActionRequest {
    return buildActionRequest(fields, { principalId: this.principalId });
  }

  /** The request signed with this agent's key (`signActionRequest`). */
  sign(request: ActionRequest): Promise<SignedActionRequest> {
    this.#own(request);
    return signActionRequest(request, this.#key);
  }

  /**
   * Submits a request (signed here unless it already is). `via: 'nats'`
   * (default when NATS is configured) publishes to the agent's ingress subject
   * with `Writ-Idempotency-Key` and waits for JetStream's ack; `via: 'http'`
   * POSTs the JWS to `/v1/actions` and returns ingress's answer. Sending the
   * same signed request again is answered as a duplicate, never run twice.
   */
  async submit(request: ActionRequest | SignedActionRequest, options: { readonly via?: Via } = {}): Promise<SubmitResult> {
    this.#open();
    const signed = 'jws' in request ? request : await this.sign(request);
    this.#own(signed.request);
    const taskId = signed.request.task_id ?? newTaskId(this.principalId, signed.idempotencyKey);
    const base = { actionRequestId: signed.request.action_request_id, idempotencyKey: signed.idempotencyKey, taskId, jws: signed.jws };
    const via = options.via ?? (this.#options.nats === undefined ? 'http' : 'nats');
    if (via === 'nats') {
      const stored = await publishAction(await this.#bus(), this.ingressSubject, signed.jws, signed.idempotencyKey);
      return { via, ...base, stored };
    }
    const { reply } = await this.#api.postAction(signed.jws, signed.idempotencyKey, this.principalId, IngressReplyView);
    return { via, ...base, taskId: reply.task_id ?? taskId, ingress: reply };
  }

  /** The action as `GET /v1/actions/<id>` reports it now; undefined until it is projected (or when it is not this agent's). */
  async action(actionRequestId: string): Promise<ActionView | undefined> {
    this.#open();
    return this.#api.find(`/v1/actions/${encodeURIComponent(actionRequestId)}`, ActionView, `action ${actionRequestId}`);
  }

  /**
   * Waits until the action is settled (terminal, with its receipt unless
   * ingress rejected it) or `until` holds, polling `GET /v1/actions/<id>`
   * (an agent's bus credential may not subscribe to `<root>.proj.actions.<id>`).
   * A receipt is fetched and verified (`receipt()`): a receipt that does not
   * verify throws its AGENT_RECEIPT_* code, whatever the status says.
   * AGENT_OUTCOME_TIMEOUT after `timeoutMs` (details.last: the last status seen).
   * An unreachable API is not waited out (AGENT_API_UNAVAILABLE at once): call
   * again with the same id, nothing is lost.
   */
  async awaitOutcome(actionRequestId: string, options: AwaitOutcomeOptions = {}): Promise<Outcome> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    let last: ActionView | undefined;
    for (;;) {
      last = (await this.action(actionRequestId)) ?? last;
      if (last !== undefined) {
        const settled = isSettled(last);
        if (settled || options.until?.(last) === true) {
          const receiptId = last.receipt_id ?? null;
          const receipt = receiptId === null || options.verifyReceipt === false ? null : await this.receipt(receiptId, { actionRequestId, ...(last.task_id == null ? {} : { taskId: last.task_id }) });
          return { action: last, settled, receipt };
        }
      }
      if (Date.now() >= deadline) {
        throw new AgentError('AGENT_OUTCOME_TIMEOUT', `action ${actionRequestId} did not settle within ${timeoutMs} ms (last status: ${last?.status ?? 'not yet projected'})`, {
          details: { action_request_id: actionRequestId, last: last ?? null },
        });
      }
      await delay(this.#options.pollMs ?? 250);
    }
  }

  /**
   * Fetches `GET /v1/receipts/<id>` and verifies it (`verifyReceipt`) against
   * the service keys of `GET /v1/keys` and the receipts of its task's timeline:
   * hash, signature, signer, the log's copy, the hash-chain link. Throws the
   * first failed check's AGENT_RECEIPT_* code (details.checks: all of them).
   */
  async receipt(receiptId: string, expect: { readonly actionRequestId?: string; readonly taskId?: string } = {}): Promise<VerifiedReceipt> {
    this.#open();
    const document = await this.#receiptDocument(receiptId);
    const taskId = typeof document.receipt['task_id'] === 'string' ? document.receipt['task_id'] : undefined;
    const taskReceipts = taskId === undefined ? [] : await this.#taskReceipts(taskId);
    // The receipt before this one, read in full: the timeline only lists ids and hashes (it is a redacted view).
    const index = taskReceipts.findIndex((entry) => entry.receiptId === receiptId);
    const previousId = index > 0 ? taskReceipts[index - 1]?.receiptId : undefined;
    const previousReceipt = previousId === undefined ? undefined : await this.#receiptDocument(previousId);
    const options = { expect: { receiptId, ...expect }, taskReceipts, ...(previousReceipt === undefined ? {} : { previousReceipt }) };
    let verification = await verifyReceipt(document, { ...options, keys: await this.#serviceKeys(false) });
    // A key rotated in since the keys were read: read them once more before calling the receipt unknown.
    if (verification.failure?.code === 'AGENT_RECEIPT_KEY_UNKNOWN') verification = await verifyReceipt(document, { ...options, keys: await this.#serviceKeys(true) });
    const { failure, receipt, kid } = verification;
    if (failure !== undefined || receipt === null || kid === null) {
      throw new AgentError(failure?.code ?? 'AGENT_RECEIPT_INVALID', `receipt ${receiptId} does not verify: ${failure?.message ?? 'no verified signature'}`, {
        details: { receipt_id: receiptId, checks: verification.checks },
      });
    }
    return { receipt, jws: document.jws, kid, checks: verification.checks };
  }

  /**
   * Creates a task from a brief (`briefedTaskRequest`: as `writ task create`
   * does) with its first action, signed and submitted. `taskId` in the result
   * is the task ingress creates; the task closes only on an accepted done claim.
   */
  async createTask(input: { readonly brief: Brief; readonly firstAction: FirstActionFields } & BriefedTaskOptions, options: { readonly via?: Via } = {}): Promise<SubmitResult> {
    const fields = briefedTaskRequest(input.brief, input.firstAction, input);
    return this.submit(this.newRequest(fields), options);
  }

  /**
   * Sends a done / blocked claim (or a correction) about one of this agent's
   * tasks to the orchestrator and returns its answer: over HTTP (`POST
   * /v1/tasks/<id>/claims/<kind>`, the default) or, with `via: 'nats'`, as a
   * request on `<root>.qry.orchestrator.claim-*` over `claimsNats` (else the
   * agent's own connection, whose credential may not send it). A claim the
   * rules refuse is an answer, not an error: `status: 'refused'` with every
   * refusal's code. A done claim Writ verifies by running the brief's verify
   * command answers `verifying`: `awaitClaimVerdict` waits for the verdict.
   * AGENT_CLAIM_REFUSED when the request itself is refused
   * (ORCHESTRATOR_CLAIM_* as `remoteCode`); AGENT_BUS_FORBIDDEN when the bus
   * credential may not send claims.
   */
  async claim(taskId: string, claim: TaskClaim, options: { readonly timeoutMs?: number; readonly via?: Via } = {}): Promise<ClaimReply> {
    this.#open();
    const claimJws = await signTaskClaim(taskId, claim, { principalId: this.principalId, key: this.#key });
    const body = checkContract('SubmitClaim', SubmitClaim, { task_id: taskId, claim_jws: claimJws });
    const via = options.via ?? (this.#options.claimsNats === undefined ? 'http' : 'nats');
    if (via === 'http') {
      return this.#api.postClaim(`/v1/tasks/${encodeURIComponent(taskId)}/claims/${claim.kind}`, { claim_jws: claimJws }, ClaimReply);
    }
    const reply = await requestService(await this.#claimsBus(), claimSubject(claim.kind, this.subjectRoot), body, 'AGENT_CLAIM_REFUSED', options.timeoutMs);
    const parsed = ClaimReply.safeParse(reply);
    if (!parsed.success) throw new AgentError('AGENT_SERVICE_UNAVAILABLE', "the orchestrator's answer is not a ClaimReply; is the server of this SDK's release?", { details: { reply } });
    return parsed.data;
  }

  /**
   * Follows a `verifying` done claim in the task's timeline until its verdict
   * (`claim.done_accepted` / `claim.done_refused`), and returns the reply as the
   * log then says; any other reply is returned as it is. AGENT_OUTCOME_TIMEOUT
   * after `timeoutMs` (default 120 s).
   */
  async awaitClaimVerdict(reply: ClaimReply, options: { readonly timeoutMs?: number } = {}): Promise<ClaimReply> {
    if (reply.status !== 'verifying') return reply;
    const timeoutMs = options.timeoutMs ?? 120_000;
    for await (const { event } of this.subscribeTaskUpdates(reply.task_id, { signal: AbortSignal.timeout(timeoutMs), pollMs: this.#options.pollMs ?? 250 })) {
      if ((event.event_type === 'claim.done_accepted' || event.event_type === 'claim.done_refused') && event.payload['claim_id'] === reply.claim_id) {
        const refusals = event.event_type === 'claim.done_refused' ? event.payload['refusals'] : [];
        return checkContract('ClaimReply', ClaimReply, { ...reply, status: event.event_type === 'claim.done_accepted' ? 'accepted' : 'refused', refusals });
      }
    }
    // The updates end when the time is up, or when the task ended without a verdict on this claim.
    throw new AgentError('AGENT_OUTCOME_TIMEOUT', `no verdict on claim ${reply.claim_id} of task ${reply.task_id} within ${timeoutMs} ms, or before the task ended (Writ runs the brief's verify command first)`, {
      details: { claim_id: reply.claim_id, task_id: reply.task_id },
    });
  }

  /** The task and one page of its timeline (`GET /v1/tasks/<id>`); undefined until projected, or when it is not this agent's. */
  async task(taskId: string, page: { readonly after?: number; readonly limit?: number } = {}): Promise<TaskView | undefined> {
    this.#open();
    return this.#api.find(`/v1/tasks/${encodeURIComponent(taskId)}?after=${page.after ?? 0}&limit=${page.limit ?? 200}`, TaskView, `task ${taskId}`);
  }

  /**
   * The task's new events as they come, in order (`for await (const { event } of
   * agent.subscribeTaskUpdates(id))`). Polls the agent's own HTTP view of the
   * task: an agent's bus credential may not subscribe to `<root>.proj.>`.
   */
  subscribeTaskUpdates(taskId: string, options: TaskUpdatesOptions = {}): TaskUpdates {
    this.#open();
    return new TaskUpdates(this.#api, taskId, { pollMs: this.#options.pollMs ?? 500, ...options });
  }

  /** Drains the NATS connections this client opened (not one the caller passed in). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([this.#nats, this.#claimsNats].map((pending) => pending?.catch(() => undefined)));
    await Promise.all(this.#owned.map((nc) => nc.drain().catch(() => undefined)));
  }

  #open(): void {
    if (this.#closed) throw new AgentError('AGENT_CLOSED', 'this WritAgent was closed; make a new one');
  }

  /** A request of another proposer would be refused by ingress (INGRESS_PRINCIPAL_MISMATCH): refused here first. */
  #own(request: ActionRequest): void {
    if (request.proposed_by !== this.principalId) {
      throw new AgentError('AGENT_REQUEST_INVALID', `the request is proposed_by ${request.proposed_by}, not this agent (${this.principalId}); ingress would refuse it`);
    }
  }

  #bus(): Promise<NatsConnection> {
    this.#nats ??= this.#connect(this.#options.nats, 'nats');
    return this.#nats;
  }

  #claimsBus(): Promise<NatsConnection> {
    if (this.#options.claimsNats === undefined) return this.#bus();
    this.#claimsNats ??= this.#connect(this.#options.claimsNats, 'claimsNats');
    return this.#claimsNats;
  }

  async #connect(target: NatsOptions | NatsConnection | undefined, option: string): Promise<NatsConnection> {
    if (target === undefined) throw new AgentError('AGENT_NATS_NOT_CONFIGURED', `this agent has no NATS configured: pass ${option} (servers and the agent's .creds) to new WritAgent, or submit with { via: 'http' }`);
    if (isConnection(target)) return target;
    const nc = await connectNats(target, this.principalId);
    this.#owned.push(nc);
    return nc;
  }

  async #serviceKeys(refresh: boolean): Promise<JsonWebKeySet> {
    if (this.#keys === undefined || refresh) this.#keys = await this.#api.getPublic('/v1/keys', KeysView, 'the service keys');
    return this.#keys;
  }

  async #receiptDocument(receiptId: string): Promise<ReceiptDocument> {
    const row = await this.#api.get(`/v1/receipts/${encodeURIComponent(receiptId)}`, ReceiptView, `receipt ${receiptId}`);
    return { receipt: row.receipt, jws: row.jws };
  }

  /** Every `receipt.issued` of the task, in task order, as its timeline lists them (distinct receipts, first occurrence). */
  async #taskReceipts(taskId: string): Promise<TimelineReceipt[]> {
    const receipts: TimelineReceipt[] = [];
    for (let after: number | null = 0; after !== null; ) {
      const page: TaskView = await this.#api.get(`/v1/tasks/${encodeURIComponent(taskId)}?after=${after}&limit=1000`, TaskView, `task ${taskId}`);
      for (const event of page.events) {
        const listed = event.event_type === 'receipt.issued' ? timelineReceipt(event) : undefined;
        if (listed !== undefined && !receipts.some((seen) => seen.receiptId === listed.receiptId)) receipts.push(listed);
      }
      after = page.next_after;
    }
    return receipts;
  }
}

function timelineReceipt(event: TaskEventView): TimelineReceipt | undefined {
  const receipt = event.payload['receipt'] as Record<string, unknown> | null | undefined;
  const receiptId = receipt?.['receipt_id'];
  const receiptHash = receipt?.['receipt_hash'];
  return typeof receiptId === 'string' ? { receiptId, receiptHash: typeof receiptHash === 'string' ? receiptHash : null } : undefined;
}
