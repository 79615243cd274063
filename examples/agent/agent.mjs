#!/usr/bin/env node
// An example agent using Writ from the outside, the way any agent would:
//   1. it generates its own Ed25519 key (the private half never leaves this process),
//   2. has an operator register it with `writ principal add` (the CLI signs with the operator's key,
//      WRIT_OPERATOR_KEY / WRIT_OPERATOR_ID, and issues the agent's own bus credential),
//   3. publishes signed ActionRequests (compact EdDSA JWS) to <root>.ingress.action.<its id>
//      with Writ-Idempotency-Key = the request's id, and reads each outcome from GET /v1/actions/<id>
//      with a bearer token it signs itself (typ writ-http+jws; it reads its own actions and tasks only):
//      (a) an allowed command, (b) a destructive one that waits for a director's approval,
//      (c) a network write that the policy denies.
//
//   node examples/agent/agent.mjs        (against the default stack: scripts/writ-up.sh)
//
// Environment: WRIT_URL (http://127.0.0.1:8080), WRIT_NATS_URL (nats://127.0.0.1:4223),
// WRIT_SUBJECT_ROOT (writ), WRIT_EVENTS_STREAM (WRIT_EVENTS, for the CLI), WRIT_AGENT_ID
// (default example-agent-<random>), WRIT_AGENT_TIMEOUT_MS (60000 per outcome), and for the
// registration the operator's WRIT_HOME, WRIT_NATS_CREDS, WRIT_OPERATOR_ID, WRIT_OPERATOR_KEY
// (`. var/writ/writ.env`). The agent itself connects with the credential issued to it, which
// can publish its own ingress subject and nothing else.
// Exit status 0 when (a) succeeded, (b) waits for approval and (c) was denied.

import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { jetstream } from '@nats-io/jetstream';
import { connect, credsAuthenticator, headers } from '@nats-io/transport-node';

const API = (process.env.WRIT_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const NATS_URL = process.env.WRIT_NATS_URL ?? 'nats://127.0.0.1:4223';
const ROOT = process.env.WRIT_SUBJECT_ROOT ?? 'writ';
const TIMEOUT_MS = Number(process.env.WRIT_AGENT_TIMEOUT_MS ?? 60_000);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const WRIT_CLI = path.join(REPO, 'node_modules', '.bin', 'writ');
const TERMINAL = ['rejected', 'succeeded', 'failed', 'denied', 'unknown_outcome', 'cancelled', 'superseded'];

const say = (text) => console.log(`[agent] ${text}`);
const b64url = (data) => Buffer.from(data).toString('base64url');

// ---- 1. the agent's key -------------------------------------------------------------------------

const agentId = process.env.WRIT_AGENT_ID ?? `example-agent-${randomUUID().slice(0, 8)}`;
const kid = `${agentId}-k1`;
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'EdDSA', use: 'sig' };

/** The ActionRequest as a compact JWS: EdDSA, `kid` = the principal's key id. */
function signRequest(request) {
  const signingInput = `${b64url(JSON.stringify({ alg: 'EdDSA', kid }))}.${b64url(JSON.stringify(request))}`;
  return `${signingInput}.${b64url(sign(null, Buffer.from(signingInput), privateKey))}`;
}

/**
 * `Bearer <token>` for the HTTP API (docs/security.md, "HTTP reads"): EdDSA, typ writ-http+jws, kid = its key,
 * sub = iss = the agent, aud = writ-http:<root>, living 5 minutes. A fresh one per request costs one signature.
 */
function bearer() {
  const iat = Math.floor(Date.now() / 1000);
  const claims = { sub: agentId, iss: agentId, aud: `writ-http:${ROOT}`, iat, exp: iat + 300 };
  const signingInput = `${b64url(JSON.stringify({ alg: 'EdDSA', typ: 'writ-http+jws', kid }))}.${b64url(JSON.stringify(claims))}`;
  return `Bearer ${signingInput}.${b64url(sign(null, Buffer.from(signingInput), privateKey))}`;
}

// ---- 2. registration through the CLI --------------------------------------------------------------

/** Registers the agent (signed by the operator, appended by ingress) and answers its bus credential (`.creds` text). */
async function register() {
  const dir = await mkdtemp(path.join(tmpdir(), 'writ-agent-'));
  const jwkFile = path.join(dir, `${agentId}.public.jwk.json`);
  const credsFile = path.join(dir, `${agentId}.creds`);
  try {
    await writeFile(jwkFile, JSON.stringify(publicJwk));
    const args = ['principal', 'add', '--id', agentId, '--type', 'agent', '--role', 'executor', '--jwk', jwkFile, '--creds-out', credsFile, '--json'];
    const { stdout } = await promisify(execFile)(process.execPath, [WRIT_CLI, ...args], {
      env: { ...process.env, WRIT_NATS_URL: NATS_URL, WRIT_SUBJECT_ROOT: ROOT },
      timeout: 60_000,
    });
    say(`registered as ${agentId} (key ${kid}): ${stdout.trim()}`);
    return await readFile(credsFile);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// ---- 3. requests and outcomes ---------------------------------------------------------------------

function actionRequest(overrides) {
  return {
    action_request_id: `ar-${randomUUID()}`,
    task: { title: 'example agent', goal: 'show what Writ allows, holds for approval and denies', policy_profile: 'local_edit_allowed', files_owned: ['**'] },
    expected_effects: [],
    reversibility_hint: 'reversible',
    reason: 'example agent',
    proposed_by: agentId,
    proposed_at: new Date().toISOString(),
    ...overrides,
  };
}

async function getAction(id) {
  const response = await fetch(`${API}/v1/actions/${id}`, { headers: { authorization: bearer() } });
  return response.status === 200 ? response.json() : undefined;
}

/** Polls GET /v1/actions/<id> until `done(row)`; returns the last row seen. */
async function outcome(id, done) {
  let row;
  for (const deadline = Date.now() + TIMEOUT_MS; Date.now() < deadline; await delay(250)) {
    row = await getAction(id);
    if (row !== undefined && done(row)) return row;
  }
  return row;
}

/** True once the approval service opened the approval (`approval.requested` in the task's timeline). */
async function approvalOpened(taskId, approvalId) {
  for (const deadline = Date.now() + TIMEOUT_MS; Date.now() < deadline; await delay(250)) {
    const response = await fetch(`${API}/v1/tasks/${taskId}?limit=1000`, { headers: { authorization: bearer() } });
    const task = response.status === 200 ? await response.json() : { events: [] };
    if (task.events.some((event) => event.event_type === 'approval.requested' && event.payload?.approval_id === approvalId)) return true;
  }
  say(`approval ${approvalId} was not opened within ${TIMEOUT_MS} ms`);
  return false;
}

const settled = (row) => TERMINAL.includes(row.status) && (row.status === 'rejected' || row.receipt_id !== null);

function show(label, row) {
  if (row === undefined) return say(`${label}: no answer from ${API}/v1/actions within ${TIMEOUT_MS} ms`);
  const parts = [`status ${row.status}`, `task ${row.task_id}`];
  if (row.policy_outcome) parts.push(`policy ${row.policy_outcome} (risk ${row.risk_band})`);
  if (row.approval_id) parts.push(`approval ${row.approval_id}`);
  if (row.grant_id) parts.push(`grant ${row.grant_id}`);
  if (row.receipt_id) parts.push(`receipt ${row.receipt_id} (GET ${API}/v1/receipts/${row.receipt_id})`);
  if (row.reason_code) parts.push(`reason ${row.reason_code}`);
  say(`${label}: ${parts.join(', ')}`);
}

const requests = {
  allowed: actionRequest({
    step: { kind: 'edit', title: 'write a greeting' },
    action_class: 'execute_command',
    target_resources: ['hello.txt'],
    params: { argv: ['sh', '-c', 'echo hello from the example agent > hello.txt'] },
    expected_effects: ['hello.txt holds a greeting'],
  }),
  destructive: actionRequest({
    step: { kind: 'edit', title: 'remove the build output' },
    action_class: 'execute_command',
    target_resources: ['build'],
    params: { argv: ['rm', '-rf', 'build'] },
    expected_effects: ['build/ is gone'],
    reversibility_hint: 'irreversible',
    reason: 'clean the build output',
  }),
  denied: actionRequest({
    step: { kind: 'publish_result', title: 'post the result' },
    action_class: 'network_write',
    target_resources: ['https://example.com/results'],
    params: { url: 'https://example.com/results', method: 'POST', body: 'hello' },
    expected_effects: ['the result is posted'],
    reversibility_hint: 'irreversible',
  }),
};

async function main() {
  say(`Writ API ${API}, NATS ${NATS_URL}, subject root ${ROOT}`);
  const creds = await register();

  // The agent's own credential: it may publish <root>.ingress.action.<agentId>, nothing else.
  const nc = await connect({ servers: NATS_URL, name: agentId, authenticator: credsAuthenticator(creds) });
  try {
    const js = jetstream(nc);
    for (const [label, request] of Object.entries(requests)) {
      const subject = `${ROOT}.ingress.action.${agentId}`;
      // The idempotency key goes in Writ-Idempotency-Key, not Nats-Msg-Id: JetStream dedupes msg ids across the
      // whole ingress stream, so another principal publishing the same id first would make it drop this request.
      const h = headers();
      h.set('Writ-Idempotency-Key', request.action_request_id);
      const ack = await js.publish(subject, signRequest(request), { headers: h });
      say(`${label}: published ${request.action_request_id} on ${subject} (stream ${ack.stream} seq ${ack.seq})`);
    }
  } finally {
    await nc.drain();
  }

  const allowed = await outcome(requests.allowed.action_request_id, settled);
  show('(a) allowed command', allowed);

  const destructive = await outcome(requests.destructive.action_request_id, (row) => row.status === 'awaiting_approval' || settled(row));
  show('(b) destructive command', destructive);
  if (destructive?.status === 'awaiting_approval' && (await approvalOpened(destructive.task_id, destructive.approval_id))) {
    const id = destructive.approval_id;
    say(`(b) waits for a director. Pending approvals: curl -s -H "Authorization: $(writ http token)" '${API}/v1/approvals?status=pending'`);
    say(`(b) grant it as a director (see examples/agent/README.md for registering one):`);
    say(`      node examples/agent/approve.mjs grant ${id} --task ${destructive.task_id} --director <director-id> --key <director-private-jwk-file>`);
    say(`    or: curl -sX POST ${API}/v1/approvals/${id}/grant -H 'content-type: application/json' \\`);
    say(`          -d '{"task_id":"${destructive.task_id}","resolution_jws":"<EdDSA JWS by the director over {approval_id, decision, packet_hash, resolved_by, resolved_at}>"}'`);
  }

  const denied = await outcome(requests.denied.action_request_id, settled);
  show('(c) network write', denied);

  const ok = allowed?.status === 'succeeded' && destructive?.status === 'awaiting_approval' && denied?.status === 'denied';
  say(ok ? 'all three outcomes as expected' : 'an outcome was not the expected one (succeeded, awaiting_approval, denied)');
  return ok ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    say(`failed: ${error?.stderr ?? error?.message ?? error}`);
    process.exitCode = 1;
  },
);
