import { Id, parseContract, ResolveApproval, RevokeGrant, SubmitAction, SubmitClaim, SubmitIngressMessage, SubmitKnowledgeRequest, WritError } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { z } from 'zod';
import type { Upstream } from './ports.js';
import { ProjectionError } from './projection-errors.js';
import { field, idField, isObject, peekJwsPayload, text, type JsonObject } from './projected-event.js';

export interface ForwardingSubjects {
  /** `<root>.qry.ingress.submit-action`. */
  readonly submitAction: string;
  /** `<root>.qry.approval.resolve`. */
  readonly resolveApproval: string;
  /** `<root>.qry.approval.revoke-grant`. */
  readonly revokeGrant: string;
  /** `<root>.qry.orchestrator.claim-done`, `claim-blocked`, `claim-correction`. */
  readonly claims: Readonly<Record<TaskClaimKind, string>>;
  /** `<root>.qry.orchestrator.revise-working-state` and `change-belief`. */
  readonly knowledge: Readonly<Record<KnowledgeRequestKind, string>>;
  /** `<root>.qry.ingress.submit-message`. */
  readonly submitMessage: string;
}

export type KnowledgeRequestKind = 'working_state' | 'belief';

export type TaskClaimKind = 'done' | 'blocked' | 'correction';

export const TASK_CLAIM_KINDS: readonly TaskClaimKind[] = ['done', 'blocked', 'correction'];

export type ApprovalDecision = 'grant' | 'deny';

/** What ingress answered: `accepted` (a task runs it), `duplicate` (seen before), `rejected` (with its code). */
export interface SubmitOutcome {
  readonly kind: 'accepted' | 'duplicate';
  readonly reply: JsonObject;
}

/**
 * `SubmitAction` with the JWS size left to ingress, as ingress parses it: an
 * oversized request is still recorded there before it is refused
 * (INGRESS_TOO_LARGE, invariant 1), so it is not refused here.
 */
const SubmitActionEnvelope = SubmitAction.extend({ jws: z.string().min(1) });

const MAX_KEY_LENGTH = 256;

/**
 * `POST /v1/actions`, `POST /v1/approvals/<id>/grant|deny`, `POST
 * /v1/grants/<id>/revoke`, `POST /v1/tasks/<id>/claims/<kind>`, `POST
 * /v1/tasks/<id>/working-state` and `POST /v1/tasks/<id>/beliefs`: forwarded
 * as NATS requests to ingress, approval and the orchestrator, which
 * authenticate and decide. The
 * projection shapes the request and passes the answer back; it never
 * verifies a signature nor authorizes anything, and it refuses nothing
 * ingress would record. The JWS payloads are peeked at (unverified) only to
 * derive the default idempotency key, as ingress does, and to catch a URL
 * that contradicts the signed decision.
 */
export class Forwarding {
  constructor(
    private readonly upstream: Upstream,
    private readonly subjects: ForwardingSubjects,
  ) {}

  /**
   * The body is the compact JWS as text, or a `SubmitAction` JSON document
   * (`{ jws, idempotency_key?, principal_id? }`). The key is the
   * `Idempotency-Key` header, else the document's, else the claimed
   * action_request_id, else the JWS's digest (the same default as ingress).
   */
  async submitAction(input: { readonly body: unknown; readonly idempotencyKey: string | undefined; readonly principalId?: string | undefined }): Promise<SubmitOutcome> {
    const jws = typeof input.body === 'string' ? input.body.trim() : field(input.body, 'jws');
    if (typeof jws !== 'string' || jws === '') {
      throw new ProjectionError(
        'PROJECTION_REQUEST_INVALID',
        'send the signed ActionRequest as a compact JWS: the raw text (Content-Type application/jose or text/plain) or JSON {"jws": "..."}',
        { details: { parameter: 'body' } },
      );
    }
    const headerKey = input.idempotencyKey === undefined ? undefined : checkedKey(input.idempotencyKey);
    const idempotencyKey =
      headerKey ?? text(input.body, 'idempotency_key') ?? idField(peekJwsPayload(jws), 'action_request_id') ?? `sha256:${sha256Hex(jws)}`;
    const principalId = input.principalId ?? text(input.body, 'principal_id') ?? undefined;
    if (principalId !== undefined && !Id.safeParse(principalId).success) {
      throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'Writ-Principal must be a principal id (1-128 characters of A-Z, a-z, 0-9, "_" or "-")', {
        details: { parameter: 'Writ-Principal' },
      });
    }
    const command = parseContract('SubmitAction', SubmitActionEnvelope, {
      jws,
      idempotency_key: idempotencyKey,
      ...(principalId === undefined ? {} : { principal_id: principalId }),
    });
    const reply = await this.ask(this.subjects.submitAction, command);
    return { kind: text(reply, 'status') === 'duplicate' ? 'duplicate' : 'accepted', reply };
  }

  /** The body is `{ task_id, resolution_jws }`; the approval service checks the signature and the resolver's role. */
  async resolveApproval(input: { readonly approvalId: string; readonly decision: ApprovalDecision; readonly body: unknown }): Promise<JsonObject> {
    if (!Id.safeParse(input.approvalId).success) {
      throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'the approval id must be 1-128 characters of A-Z, a-z, 0-9, "_" or "-"', {
        details: { parameter: 'id' },
      });
    }
    const resolutionJws = field(input.body, 'resolution_jws');
    const taskId = field(input.body, 'task_id');
    if (!isObject(input.body) || typeof resolutionJws !== 'string' || resolutionJws === '' || !Id.safeParse(taskId).success) {
      throw new ProjectionError(
        'PROJECTION_REQUEST_INVALID',
        'send JSON {"task_id": "<the approval\'s task, as GET /v1/approvals lists it>", "resolution_jws": "<compact JWS by the resolver over {approval_id, decision, resolved_by, resolved_at}>"}',
        { details: { parameter: 'body' } },
      );
    }
    const signed = peekJwsPayload(resolutionJws);
    const signedDecision = field(signed, 'decision');
    const signedApproval = field(signed, 'approval_id');
    if ((signedDecision !== undefined && signedDecision !== input.decision) || (signedApproval !== undefined && signedApproval !== input.approvalId)) {
      throw new ProjectionError(
        'PROJECTION_DECISION_MISMATCH',
        `the signed resolution says ${String(signedDecision)} for approval ${String(signedApproval)}; POST it to /v1/approvals/${String(signedApproval)}/${String(signedDecision)}`,
      );
    }
    const command = parseContract('ResolveApproval', ResolveApproval, { approval_id: input.approvalId, task_id: taskId, resolution_jws: resolutionJws });
    return this.ask(this.subjects.resolveApproval, command);
  }

  /**
   * The body is `{ task_id, revocation_jws }`; the approval service checks the
   * signature, that the signer is a director and not the action's proposer.
   */
  async revokeGrant(input: { readonly grantId: string; readonly body: unknown }): Promise<JsonObject> {
    const grantId = checkedPathId(input.grantId, 'grant');
    const revocationJws = field(input.body, 'revocation_jws');
    const taskId = field(input.body, 'task_id');
    if (!isObject(input.body) || typeof revocationJws !== 'string' || revocationJws === '' || !Id.safeParse(taskId).success) {
      throw new ProjectionError(
        'PROJECTION_REQUEST_INVALID',
        'send JSON {"task_id": "<the grant\'s task, as GET /v1/grants/<id> shows it>", "revocation_jws": "<compact JWS by a director over {grant_id, task_id, reason, revoked_by, revoked_at}>"}',
        { details: { parameter: 'body' } },
      );
    }
    mismatchGuard(peekJwsPayload(revocationJws), { grant_id: grantId, task_id: taskId }, `POST it to /v1/grants/<its grant_id>/revoke with its task_id`);
    const command = parseContract('RevokeGrant', RevokeGrant, { grant_id: grantId, task_id: taskId, revocation_jws: revocationJws });
    return this.ask(this.subjects.revokeGrant, command);
  }

  /**
   * The body is `{ claim_jws }`; the orchestrator checks the signature, its
   * `typ` against the kind, and that the signer owns the task.
   */
  async submitClaim(input: { readonly taskId: string; readonly kind: string; readonly body: unknown }): Promise<JsonObject> {
    const taskId = checkedPathId(input.taskId, 'task');
    const kind = TASK_CLAIM_KINDS.find((known) => known === input.kind);
    if (kind === undefined) {
      throw new ProjectionError('PROJECTION_REQUEST_INVALID', `a claim is done, blocked or correction, not ${JSON.stringify(input.kind).slice(0, 64)}: POST /v1/tasks/<id>/claims/done`, {
        details: { parameter: 'kind' },
      });
    }
    const claimJws = field(input.body, 'claim_jws');
    if (!isObject(input.body) || typeof claimJws !== 'string' || claimJws === '') {
      throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'send JSON {"claim_jws": "<compact JWS by the task\'s owner over {task_id, claim | correction, claimed_by, claimed_at}>"}', {
        details: { parameter: 'body' },
      });
    }
    mismatchGuard(peekJwsPayload(claimJws), { task_id: taskId }, `POST it to /v1/tasks/<its task_id>/claims/${kind}`);
    const command = parseContract('SubmitClaim', SubmitClaim, { task_id: taskId, claim_jws: claimJws });
    return this.ask(this.subjects.claims[kind], command);
  }

  /**
   * `POST /v1/tasks/<id>/working-state` and `POST /v1/tasks/<id>/beliefs`: the
   * body is `{ request_jws }`; the orchestrator checks the signature, its `typ`
   * against the route, and that the signer owns the task or is a director.
   */
  async submitKnowledge(input: { readonly taskId: string; readonly kind: KnowledgeRequestKind; readonly body: unknown }): Promise<JsonObject> {
    const taskId = checkedPathId(input.taskId, 'task');
    const requestJws = field(input.body, 'request_jws');
    if (!isObject(input.body) || typeof requestJws !== 'string' || requestJws === '') {
      const what = input.kind === 'working_state' ? '{task_id, request_id, expected_revision, set, remove, revised_by, revised_at}' : '{task_id, request_id, change, requested_by, requested_at}';
      throw new ProjectionError('PROJECTION_REQUEST_INVALID', `send JSON {"request_jws": "<compact JWS by the task's owner or a director over ${what}>"}`, {
        details: { parameter: 'body' },
      });
    }
    const route = input.kind === 'working_state' ? 'working-state' : 'beliefs';
    mismatchGuard(peekJwsPayload(requestJws), { task_id: taskId }, `POST it to /v1/tasks/<its task_id>/${route}`);
    const command = parseContract('SubmitKnowledgeRequest', SubmitKnowledgeRequest, { task_id: taskId, request_jws: requestJws });
    return this.ask(this.subjects.knowledge[input.kind], command);
  }

  /**
   * `POST /v1/messages`: the body is `{ message_jws }`, a free-form message
   * signed by its sender (issue 17); ingress verifies it, records it and binds
   * it. How an agent, whose bus credential publishes only its ingress subject,
   * sends one.
   */
  async submitMessage(body: unknown): Promise<JsonObject> {
    const messageJws = field(body, 'message_jws');
    if (!isObject(body) || typeof messageJws !== 'string' || messageJws === '') {
      throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'send JSON {"message_jws": "<compact JWS by the sender over {message_id, conversation_id, kind, text, explicit_task_ref?, reply_to_ref?, sent_by, sent_at}>"}', {
        details: { parameter: 'body' },
      });
    }
    return this.ask(this.subjects.submitMessage, parseContract('SubmitIngressMessage', SubmitIngressMessage, { message_jws: messageJws }));
  }

  /** The upstream's answer as an object; a rejection written in the body becomes the error it means. */
  private async ask(subject: string, command: unknown): Promise<JsonObject> {
    const reply = await this.upstream.request(subject, command);
    if (!isObject(reply)) {
      throw new ProjectionError('PROJECTION_UPSTREAM_INVALID_REPLY', `${subject} answered with something that is not an object; check that service's logs`);
    }
    const code = text(reply, 'reason_code') ?? text(reply, 'code');
    if (text(reply, 'status') === 'rejected' && code !== null && /^[A-Z][A-Z0-9_]{0,127}$/.test(code)) {
      throw new WritError(code, text(reply, 'message') ?? `the request was rejected (${code})`, { details: { remote: true } });
    }
    return reply;
  }
}

function checkedKey(header: string): string {
  const key = header.trim();
  if (key === '' || key.length > MAX_KEY_LENGTH || /[\p{Cc}]/u.test(key)) {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', `Idempotency-Key must be 1-${MAX_KEY_LENGTH} printable characters`, {
      details: { parameter: 'Idempotency-Key' },
    });
  }
  return key;
}

function checkedPathId(value: string, what: string): string {
  if (!Id.safeParse(value).success) {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', `the ${what} id must be 1-128 characters of A-Z, a-z, 0-9, "_" or "-"`, { details: { parameter: 'id' } });
  }
  return value;
}

/**
 * A signed payload (peeked at, unverified) that names another grant or task
 * than the URL and body do is refused before it is forwarded: the service
 * would refuse it too, but a clear 400 here tells the caller which URL it meant.
 */
function mismatchGuard(signed: unknown, expected: Readonly<Record<string, unknown>>, hint: string): void {
  for (const [name, value] of Object.entries(expected)) {
    const said = field(signed, name);
    if (said !== undefined && said !== value) {
      throw new ProjectionError('PROJECTION_REQUEST_MISMATCH', `the signed payload says ${name} ${JSON.stringify(said).slice(0, 140)}, the request ${JSON.stringify(value).slice(0, 140)}: ${hint}`, {
        details: { parameter: name },
      });
    }
  }
}
