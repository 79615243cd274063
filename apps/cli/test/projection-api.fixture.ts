import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseReceipt } from '@writ/contracts';
import { canonicalJson, sha256Hex, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { approvalPacketHash } from '@writ/runtime';

/**
 * A small HTTP server playing the projection's public API with canned JSON
 * (services/projection README, "HTTP API"): the HTTP contract the CLI reads,
 * served for real over a socket. Each test gives the routes it needs; every
 * request is recorded.
 */
export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface CannedReply {
  readonly status?: number;
  /** JSON-serialised unless `raw` is set. */
  readonly json?: unknown;
  readonly raw?: string;
  readonly contentType?: string;
}

export type Routes = Readonly<Record<string, (request: SeenRequest) => CannedReply>>;

export interface FakeApi {
  readonly url: string;
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

/** Starts the server on a free port; a request no route names answers 404 PROJECTION_ROUTE_NOT_FOUND, as the real API does. */
export async function startApi(routes: Routes): Promise<FakeApi> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const request: SeenRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body };
      seen.push(request);
      const route = routes[`${request.method} ${request.path}`];
      const reply: CannedReply = route === undefined ? { status: 404, json: { code: 'PROJECTION_ROUTE_NOT_FOUND', message: 'no such route' } } : route(request);
      res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' });
      res.end(reply.raw ?? JSON.stringify(reply.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A URL where nothing listens: a port that was free a moment ago. */
export async function deadUrl(): Promise<string> {
  const api = await startApi({});
  await api.close();
  return api.url;
}

export const T0 = '2031-05-01T12:00:00.000Z';

export const actionRow = {
  action_request_id: 'ar-1',
  status: 'succeeded',
  principal_id: 'agent-1',
  ingress_id: 'ing-1',
  task_id: 'task-1',
  step_id: 'step-1',
  attempt_id: 'att-1',
  action_class: 'execute_command',
  policy_outcome: 'allow',
  risk_band: 'low',
  policy_result_id: 'pr-1',
  approval_id: null,
  grant_id: 'grant-1',
  receipt_id: 'rcp-1',
  reason_code: null,
  received_at: T0,
  updated_at: '2031-05-01T12:00:09.000Z',
};

function event(seq: number, type: string, entity: { type: string; id: string }, payload: Record<string, unknown> = {}, actor = 'orchestrator') {
  return {
    task_id: 'task-1',
    task_seq: seq,
    stream_seq: 100 + seq,
    event_id: `evt-${seq}`,
    event_type: type,
    entity_type: entity.type,
    entity_id: entity.id,
    step_id: entity.type === 'task' ? null : 'step-1',
    attempt_id: entity.type === 'task' || entity.type === 'step' ? null : 'att-1',
    actor_type: 'service',
    actor_id: actor,
    payload: { ...payload, at: `2031-05-01T12:00:${String(seq).padStart(2, '0')}.000Z` },
    occurred_at: `2031-05-01T12:00:${String(seq).padStart(2, '0')}.000Z`,
  };
}

const task = { type: 'task', id: 'task-1' };
const step = { type: 'step', id: 'step-1' };
const attempt = { type: 'attempt', id: 'att-1' };

/** The governed path of one allowed command, as `GET /v1/tasks/task-1` lists it. */
export const timeline = [
  event(1, 'task.created', task, { title: 'hello', goal: 'write hello.txt' }, 'ingress'),
  event(2, 'task.marked_ready', task, {}, 'ingress'),
  event(3, 'task.started', task, {}, 'ingress'),
  event(4, 'step.planned', step, {}, 'ingress'),
  event(5, 'step.marked_ready', step, {}, 'ingress'),
  event(6, 'step.attempt_opened', step, { attempt_id: 'att-1' }, 'ingress'),
  event(7, 'attempt.created', attempt, {}, 'ingress'),
  event(8, 'attempt.leased', attempt, {}, 'ingress'),
  event(9, 'attempt.awaiting_policy', attempt, { action_request: { action_request_id: 'ar-1' } }, 'ingress'),
  event(10, 'policy.evaluated', { type: 'decision', id: 'dec-1' }, { policy_result: { outcome: 'allow', risk_band: 'low' } }, 'policy'),
  event(11, 'attempt.authorized', attempt),
  event(12, 'grant.issued', { type: 'grant', id: 'grant-1' }, { grant_id: 'grant-1', jws: '[WITHHELD]' }, 'approval'),
  event(13, 'attempt.grant_attached', attempt, { grant_id: 'grant-1' }),
  event(14, 'grant.use_claimed', { type: 'grant', id: 'grant-1' }, { grant_id: 'grant-1', use_no: 1 }, 'executor'),
  event(15, 'attempt.executing', attempt),
  event(16, 'execution.completed', attempt, { outcome: 'completed', exit_code: 0 }, 'executor'),
  event(17, 'attempt.observing', attempt),
  event(18, 'attempt.receipt_pending', attempt),
  event(19, 'receipt.issued', { type: 'receipt', id: 'rcp-1' }, { receipt: { receipt_id: 'rcp-1', result_code: 'succeeded' } }, 'receipt'),
  event(20, 'attempt.succeeded', attempt),
  event(21, 'step.succeeded', step),
  event(22, 'task.completed', task),
];

export const taskRow = {
  task_id: 'task-1',
  title: 'hello',
  goal: 'write hello.txt',
  status: 'completed',
  owner_principal_id: 'agent-1',
  policy_profile: 'local_edit_allowed',
  last_task_seq: 22,
  last_event_type: 'task.completed',
  created_at: T0,
  updated_at: '2031-05-01T12:00:22.000Z',
};

/** `GET /v1/tasks/task-1` paged by `after`, `size` events a page (the real API pages by `limit`). */
export function taskPage(after: number, size: number) {
  const rest = timeline.filter((e) => e.task_seq > after);
  const events = rest.slice(0, size);
  return { ...taskRow, events, next_after: rest.length > size ? (events.at(-1)?.task_seq ?? null) : null };
}

export function approvalRow(id: string, overrides: Record<string, unknown> = {}) {
  return {
    approval_id: id,
    task_id: `task-of-${id}`,
    step_id: 'step-1',
    attempt_id: 'att-1',
    status: 'pending',
    packet: {
      action_request_id: `ar-of-${id}`,
      action_class: 'execute_command',
      action_summary: 'rm -rf build/',
      risk_band: 'high',
      expires_at: '2031-05-01T13:00:00.000Z',
    },
    requested_by: 'agent-1',
    resolved_by: null,
    resolution_note: null,
    requested_at: T0,
    resolved_at: null,
    expires_at: '2031-05-01T13:00:00.000Z',
    updated_at: T0,
    ...overrides,
  };
}

/**
 * `GET /v1/approvals/<id>` of a pending approval: its row, the state witness, and `packet_ref`
 * naming the hash of exactly the packet document shown (what a director's resolution signs).
 */
export function approvalDetail(id: string, overrides: Record<string, unknown> = {}) {
  const row = approvalRow(id, overrides);
  const stateWitness = { ref: `sha256:${'c'.repeat(64)}`, fingerprints: { build: 'dir:abc' }, observed_at: T0 };
  return { ...row, packet_ref: `artifact:${approvalPacketHash(row.packet, stateWitness)}`, state_witness: stateWitness, policy_result_ref: `policy_result:pr-of-${id}`, resolution: null, decisions: [] };
}

/** `<header>..<signature>`. */
export function detached(jws: string): string {
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}

/** A receipt signed as the receipt service signs it (RFC 8785 body, EdDSA JWS with typ writ-receipt+jws), and its API row. */
export async function signedReceiptRow(key: Ed25519SigningKey, receiptId = 'rcp-1') {
  const body = {
    receipt_id: receiptId,
    task_id: 'task-1',
    step_id: 'step-1',
    attempt_id: 'att-1',
    receipt_class: 'command_execution',
    action_request_ref: 'action_request:ar-1',
    input_refs: [],
    environment_ref: 'artifact:env-1',
    policy_result_ref: 'policy_result:pr-1',
    approval_ref: null,
    capability_grant_ref: 'grant:grant-1',
    output_refs: ['artifact:stdout-1'],
    result_code: 'succeeded',
    result_summary: 'exit 0',
    created_at: '2031-05-01T12:00:19.000Z',
    rollback_supported: false,
    replay_class: 'observe_only',
    verifiability: 'signed',
    signer_ref: key.kid,
    prev_receipt_hash: null,
  };
  const canonical = canonicalJson(body);
  const jws = await signJws(canonical, key, { typ: 'writ-receipt+jws' });
  const receipt = parseReceipt({ ...body, receipt_hash: sha256Hex(canonical), signature: detached(jws) });
  return {
    receipt_id: receiptId,
    task_id: 'task-1',
    step_id: 'step-1',
    attempt_id: 'att-1',
    action_request_id: 'ar-1',
    result_code: 'succeeded',
    receipt_class: 'command_execution',
    receipt: receipt as Record<string, unknown>,
    jws,
    receipt_hash: receipt.receipt_hash ?? null,
    created_at: receipt.created_at,
  };
}
