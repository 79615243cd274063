import { createHash, randomUUID } from 'node:crypto';
import { CompactSign } from 'jose';
import type { AgentKey } from './agent-key.js';
import { checkContract } from './contract-check.js';
import { ActionRequest } from './contracts.js';

/**
 * What the agent says about an action; `buildActionRequest` adds who proposes
 * it and when. Exactly one of `task` (a new task) and `task_id` (an existing
 * one of this agent) is given. `action_request_id` defaults to `ar-<uuid>`.
 */
export type ActionRequestFields = Omit<ActionRequest, 'action_request_id' | 'proposed_by' | 'proposed_at'> & { readonly action_request_id?: string };

/** A signed ActionRequest, ready to publish or POST. */
export interface SignedActionRequest {
  /** The compact JWS: `base64url({"alg":"EdDSA","kid":…}).base64url(JSON of the request).signature`. */
  readonly jws: string;
  /** The request exactly as signed. */
  readonly request: ActionRequest;
  /** = `request.proposed_by`: the principal whose key signed it. */
  readonly principalId: string;
  /** = `request.action_request_id`: ingress dedupes a resend by (principal, key, bytes). */
  readonly idempotencyKey: string;
}

/**
 * An ActionRequest proposed by `principalId` now (or at `now`), checked against
 * the contract ingress checks. Throws AGENT_REQUEST_INVALID listing every
 * offending path (`details.issues`), so a request is fixed in one round.
 * Ingress refuses a `proposed_at` more than its freshness window (300 s by
 * default) from the time it receives the request: sign and send promptly.
 */
export function buildActionRequest(fields: ActionRequestFields, by: { readonly principalId: string; readonly now?: Date }): ActionRequest {
  return checkActionRequest({
    ...fields,
    action_request_id: fields.action_request_id ?? `ar-${randomUUID()}`,
    proposed_by: by.principalId,
    proposed_at: (by.now ?? new Date()).toISOString(),
  });
}

/**
 * Signs an ActionRequest with the agent's key, exactly as ingress verifies it:
 * a compact JWS, protected header `{"alg":"EdDSA","kid":<key id>}` (no `typ`),
 * payload the UTF-8 JSON of the request. The request is checked against its
 * contract first (AGENT_REQUEST_INVALID), so nothing invalid is ever signed.
 */
export async function signActionRequest(request: ActionRequest, key: AgentKey): Promise<SignedActionRequest> {
  const checked = checkActionRequest(request);
  const payload = new TextEncoder().encode(JSON.stringify(checked));
  const jws = await new CompactSign(payload).setProtectedHeader({ alg: 'EdDSA', kid: key.kid }).sign(key.privateKey);
  return Object.freeze({ jws, request: checked, principalId: checked.proposed_by, idempotencyKey: checked.action_request_id });
}

/** `<root>.ingress.action.<principal_id>`: the one subject an agent's bus credential may publish. */
export function ingressSubject(principalId: string, subjectRoot = 'writ'): string {
  return `${subjectRoot}.ingress.action.${principalId}`;
}

/**
 * The id of the task a request with `task` creates: `tsk-` + the first 32 hex
 * of SHA-256(`<principal_id>:<idempotency key>`), as ingress derives it
 * (docs/governed-path.md step 1). The key is the action_request_id unless the
 * request was sent with another.
 */
export function newTaskId(principalId: string, idempotencyKey: string): string {
  return `tsk-${createHash('sha256').update(`${principalId}:${idempotencyKey}`).digest('hex').slice(0, 32)}`;
}

function checkActionRequest(input: unknown): ActionRequest {
  return checkContract('ActionRequest', ActionRequest, input);
}
