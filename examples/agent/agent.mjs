#!/usr/bin/env node
// An example agent using Writ from the outside, the way any agent would, through the agent SDK
// (@writ/agent, libs/agent):
//   1. it generates its own Ed25519 key (generateAgentKey; the private half never leaves this process),
//   2. has an operator register it with `writ principal add` (the CLI signs with the operator's key,
//      WRIT_OPERATOR_KEY / WRIT_OPERATOR_ID, and issues the agent's own bus credential),
//   3. submits signed ActionRequests (WritAgent.submit: a compact EdDSA JWS published to
//      <root>.ingress.action.<its id> with Writ-Idempotency-Key = the request's id), and awaits each
//      outcome (WritAgent.awaitOutcome: GET /v1/actions/<id> with a bearer token it signs itself, and
//      the receipt verified against GET /v1/keys and the task's timeline):
//      (a) an allowed command, (b) a destructive one that waits for a director's approval,
//      (c) a network write that the policy denies.
//
//   node examples/agent/agent.mjs        (against the default stack: scripts/writ-up.sh)
//
// Environment: WRIT_URL (http://127.0.0.1:8080), WRIT_NATS_URL (nats://127.0.0.1:4223),
// WRIT_SUBJECT_ROOT (writ), WRIT_EVENTS_STREAM (WRIT_EVENTS, for the CLI), WRIT_AGENT_ID
// (default example-agent-<random>), WRIT_AGENT_TIMEOUT_MS (60000 per outcome), WRIT_AGENT_VIA
// (nats, or http: POST /v1/actions), and for the registration the operator's WRIT_HOME,
// WRIT_NATS_CREDS, WRIT_OPERATOR_ID, WRIT_OPERATOR_KEY (`. var/writ/writ.env`). The agent itself
// connects with the credential issued to it, which can publish its own ingress subject and nothing else.
// Exit status 0 when (a) succeeded, (b) waits for approval and (c) was denied.

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { WritAgent, generateAgentKey, isAgentError } from '@writ/agent';

const API = (process.env.WRIT_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const NATS_URL = process.env.WRIT_NATS_URL ?? 'nats://127.0.0.1:4223';
const ROOT = process.env.WRIT_SUBJECT_ROOT ?? 'writ';
const TIMEOUT_MS = Number(process.env.WRIT_AGENT_TIMEOUT_MS ?? 60_000);
const VIA = process.env.WRIT_AGENT_VIA === 'http' ? 'http' : 'nats';
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const WRIT_CLI = path.join(REPO, 'node_modules', '.bin', 'writ');

const say = (text) => console.log(`[agent] ${text}`);

// ---- 1. the agent's key -------------------------------------------------------------------------

const agentId = process.env.WRIT_AGENT_ID ?? `example-agent-${randomUUID().slice(0, 8)}`;
const key = await generateAgentKey({ kid: `${agentId}-k1` });

// ---- 2. registration through the CLI --------------------------------------------------------------

/** Registers the agent (signed by the operator, appended by ingress) and answers its bus credential (`.creds` text). */
async function register() {
  const dir = await mkdtemp(path.join(tmpdir(), 'writ-agent-'));
  const jwkFile = path.join(dir, `${agentId}.public.jwk.json`);
  const credsFile = path.join(dir, `${agentId}.creds`);
  try {
    await writeFile(jwkFile, JSON.stringify(key.publicJwk));
    const args = ['principal', 'add', '--id', agentId, '--type', 'agent', '--role', 'executor', '--jwk', jwkFile, '--creds-out', credsFile, '--json'];
    const { stdout } = await promisify(execFile)(process.execPath, [WRIT_CLI, ...args], {
      env: { ...process.env, WRIT_NATS_URL: NATS_URL, WRIT_SUBJECT_ROOT: ROOT },
      timeout: 60_000,
    });
    say(`registered as ${agentId} (key ${key.kid}): ${stdout.trim()}`);
    return await readFile(credsFile, 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// ---- 3. requests and outcomes ---------------------------------------------------------------------

const task = { title: 'example agent', goal: 'show what Writ allows, holds for approval and denies', policy_profile: 'local_edit_allowed', files_owned: ['**'] };

const requests = {
  allowed: {
    task,
    step: { kind: 'edit', title: 'write a greeting' },
    action_class: 'execute_command',
    target_resources: ['hello.txt'],
    params: { argv: ['sh', '-c', 'echo hello from the example agent > hello.txt'] },
    expected_effects: ['hello.txt holds a greeting'],
    reversibility_hint: 'reversible',
    reason: 'example agent',
  },
  destructive: {
    task,
    step: { kind: 'edit', title: 'remove the build output' },
    action_class: 'execute_command',
    target_resources: ['build'],
    params: { argv: ['rm', '-rf', 'build'] },
    expected_effects: ['build/ is gone'],
    reversibility_hint: 'irreversible',
    reason: 'clean the build output',
  },
  denied: {
    task,
    step: { kind: 'publish_result', title: 'post the result' },
    action_class: 'network_write',
    target_resources: ['https://example.com/results'],
    params: { url: 'https://example.com/results', method: 'POST', body: 'hello' },
    expected_effects: ['the result is posted'],
    reversibility_hint: 'irreversible',
    reason: 'example agent',
  },
};

/** The outcome, or undefined (said why) when none came in time; any other failure, a bad receipt above all, is thrown. */
async function outcome(agent, id, options = {}) {
  try {
    return await agent.awaitOutcome(id, { timeoutMs: TIMEOUT_MS, ...options });
  } catch (error) {
    if (!isAgentError(error, 'AGENT_OUTCOME_TIMEOUT')) throw error;
    say(`${id}: ${error.message}`);
    return undefined;
  }
}

/** True once the approval service opened the approval (`approval.requested` in the task's timeline). */
async function approvalOpened(agent, taskId, approvalId) {
  for await (const { event } of agent.subscribeTaskUpdates(taskId, { signal: AbortSignal.timeout(TIMEOUT_MS) })) {
    if (event.event_type === 'approval.requested' && event.payload?.approval_id === approvalId) return true;
  }
  say(`approval ${approvalId} was not opened within ${TIMEOUT_MS} ms`);
  return false;
}

function show(label, result) {
  if (result === undefined) return say(`${label}: no answer from ${API}/v1/actions within ${TIMEOUT_MS} ms`);
  const { action, receipt } = result;
  const parts = [`status ${action.status}`, `task ${action.task_id}`];
  if (action.policy_outcome) parts.push(`policy ${action.policy_outcome} (risk ${action.risk_band})`);
  if (action.approval_id) parts.push(`approval ${action.approval_id}`);
  if (action.grant_id) parts.push(`grant ${action.grant_id}`);
  if (receipt) parts.push(`receipt ${receipt.receipt.receipt_id} verified (${receipt.receipt.result_code}, signed by ${receipt.kid}; GET ${API}/v1/receipts/${receipt.receipt.receipt_id})`);
  if (action.reason_code) parts.push(`reason ${action.reason_code}`);
  say(`${label}: ${parts.join(', ')}`);
}

async function main() {
  say(`Writ API ${API}, NATS ${NATS_URL}, subject root ${ROOT}, submitting over ${VIA}`);
  const creds = await register();

  // The agent's own credential: it may publish <root>.ingress.action.<agentId>, nothing else.
  const agent = new WritAgent({ principalId: agentId, key, apiUrl: API, subjectRoot: ROOT, nats: { servers: NATS_URL, creds } });
  try {
    const ids = {};
    for (const [label, fields] of Object.entries(requests)) {
      const submitted = await agent.submit(agent.newRequest(fields), { via: VIA });
      ids[label] = submitted.actionRequestId;
      const where = submitted.stored ? `${agent.ingressSubject} (stream ${submitted.stored.stream} seq ${submitted.stored.seq})` : `${API}/v1/actions (ingress ${submitted.ingress.status})`;
      say(`${label}: submitted ${submitted.actionRequestId} to ${where}`);
    }

    const allowed = await outcome(agent, ids.allowed);
    show('(a) allowed command', allowed);

    const destructive = await outcome(agent, ids.destructive, { until: (action) => action.status === 'awaiting_approval' });
    show('(b) destructive command', destructive);
    const pending = destructive?.action;
    if (pending?.status === 'awaiting_approval' && (await approvalOpened(agent, pending.task_id, pending.approval_id))) {
      const id = pending.approval_id;
      say(`(b) waits for a director. Pending approvals: curl -s -H "Authorization: $(writ http token)" '${API}/v1/approvals?status=pending'`);
      say(`(b) grant it as a director (see examples/agent/README.md for registering one):`);
      say(`      node examples/agent/approve.mjs grant ${id} --task ${pending.task_id} --director <director-id> --key <director-private-jwk-file>`);
      say(`    or: curl -sX POST ${API}/v1/approvals/${id}/grant -H 'content-type: application/json' \\`);
      say(`          -d '{"task_id":"${pending.task_id}","resolution_jws":"<EdDSA JWS by the director over {approval_id, decision, packet_hash, resolved_by, resolved_at}>"}'`);
    }

    const denied = await outcome(agent, ids.denied);
    show('(c) network write', denied);

    const ok = allowed?.action.status === 'succeeded' && pending?.status === 'awaiting_approval' && denied?.action.status === 'denied';
    say(ok ? 'all three outcomes as expected' : 'an outcome was not the expected one (succeeded, awaiting_approval, denied)');
    return ok ? 0 : 1;
  } finally {
    await agent.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    say(`failed: ${error?.code ? `${error.code}: ` : ''}${error?.stderr ?? error?.message ?? error}`);
    process.exitCode = 1;
  },
);
