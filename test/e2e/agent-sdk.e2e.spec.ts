import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WritAgent, buildActionRequest, generateAgentKey, isAgentError, type ActionRequestFields, type AgentKey, type ReceiptCheck } from '@writ/agent';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * The agent SDK (@writ/agent) against the whole of Writ: the seven built services on the real
 * NATS, Postgres and Docker (support/stack.mjs). The agent is registered through the `writ` CLI
 * with a key the SDK generated, and then acts only through the SDK, with the bus credential
 * issued to it: submit over NATS and HTTP, outcomes awaited with their receipts verified,
 * a receipt tampered with on the way refused with its code, a briefed task claimed blocked over
 * NATS and done over HTTP, a stranger's claim refused.
 */

const STEP_MS = 150_000;

let stack: Stack;
let dir: string;
let principalId: string;
let key: AgentKey;
let agent: WritAgent;

beforeAll(async () => {
  // A shared, busy CI machine can take longer than the default 90 s to bring seven processes up.
  stack = await startStack({ prefix: 'e2ea', readyTimeoutMs: 240_000 });
  dir = await mkdtemp(path.join(tmpdir(), 'writ-sdk-e2e-'));
  // given an agent whose key the SDK generated, registered by the operator with writ principal add
  principalId = uniqueName('sdk-agent').replaceAll('_', '-');
  const generated = await generateAgentKey({ kid: `${principalId}-k1` });
  key = generated;
  await writeFile(path.join(dir, 'agent.pub.json'), JSON.stringify(generated.publicJwk));
  const credsFile = path.join(dir, 'agent.creds');
  await stack.cli(['principal', 'add', '--id', principalId, '--type', 'agent', '--role', 'executor', '--jwk', path.join(dir, 'agent.pub.json'), '--creds-out', credsFile, '--json']);
  agent = new WritAgent({ principalId, key, apiUrl: stack.apiUrl, subjectRoot: stack.root, nats: { servers: stack.natsUrl, credsFile }, pollMs: 100 });
}, 420_000);

stopStackAfterAll(() => stack);

afterAll(async () => {
  await agent?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const command = (argv: string[], target: string): ActionRequestFields => ({
  task: { title: 'sdk e2e', goal: 'act through the agent SDK', policy_profile: 'local_edit_allowed', files_owned: ['**'] },
  step: { kind: 'edit', title: 'write a file' },
  action_class: 'execute_command',
  target_resources: [target],
  params: { argv },
  expected_effects: [`${target} is written`],
  reversibility_hint: 'reversible',
  reason: 'sdk e2e',
});

const passed = (checks: readonly ReceiptCheck[]) => checks.filter((check) => check.result === 'pass').map((check) => check.name);

describe('submit and await an outcome', () => {
  let firstActionId: string;

  it(
    'given the agent, when it submits over NATS with its own credential, then the outcome is succeeded with its receipt verified; the same signed bytes over HTTP are a duplicate',
    async () => {
      // when: a new task's first action over NATS
      const signed = await agent.sign(agent.newRequest(command(['sh', '-c', 'echo one > one.txt'], 'one.txt')));
      const first = await agent.submit(signed, { via: 'nats' });
      firstActionId = first.actionRequestId;
      expect(first.stored?.stream).toBe(stack.streams.ingress);
      const one = await agent.awaitOutcome(first.actionRequestId, { timeoutMs: STEP_MS });

      // then: succeeded, in the task the SDK derived, with a receipt that passed every check
      expect(one.action).toMatchObject({ status: 'succeeded', task_id: first.taskId });
      expect(one.receipt?.receipt).toMatchObject({ task_id: first.taskId, action_request_ref: `action_request:${first.actionRequestId}`, result_code: 'succeeded', prev_receipt_hash: null });
      expect(passed(one.receipt?.checks ?? [])).toEqual(['contract', 'binding', 'hash', 'signature', 'payload', 'signer', 'event', 'chain']);

      // and the same signed request sent again over HTTP is recognised, never run twice
      const again = await agent.submit(signed, { via: 'http' });
      expect(again.ingress).toMatchObject({ status: 'duplicate', task_id: first.taskId });
    },
    STEP_MS,
  );

  it(
    'given a network write the policy denies, when the agent submits it over HTTP, then the outcome is denied with a verified receipt',
    async () => {
      const denied = await agent.submit(
        agent.newRequest({
          ...command(['true'], 'https://example.com/results'),
          step: { kind: 'publish_result', title: 'post the result' },
          action_class: 'network_write',
          params: { url: 'https://example.com/results', method: 'POST', body: 'hello' },
          reversibility_hint: 'irreversible',
        }),
        { via: 'http' },
      );
      const outcome = await agent.awaitOutcome(denied.actionRequestId, { timeoutMs: STEP_MS });
      expect(outcome.action).toMatchObject({ status: 'denied', policy_outcome: 'deny' });
      expect(outcome.receipt?.receipt.action_request_ref).toBe(`action_request:${denied.actionRequestId}`);
      expect(outcome.receipt?.checks.every((check) => check.result === 'pass')).toBe(true);
    },
    STEP_MS,
  );

  it(
    'given a man in the middle of the API, when it changes a receipt or the keys the agent reads, then awaitOutcome refuses the outcome with the code of what broke',
    async () => {
      // given: the first action's outcome, read through a proxy that rewrites what it serves
      let mode: 'receipt' | 'keys' = 'receipt';
      const proxy = await tamperingProxy(stack.apiUrl, (route, body) => {
        if (mode === 'receipt' && route.startsWith('/v1/receipts/')) return { ...body, receipt: { ...(body['receipt'] as Record<string, unknown>), result_summary: 'rewritten by the proxy' } };
        if (mode === 'keys' && route === '/v1/keys') return { keys: [] };
        return body;
      });
      const viaProxy = new WritAgent({ principalId, key, apiUrl: proxy.url, subjectRoot: stack.root, pollMs: 100 });
      try {
        // when / then: the body changed
        const tampered = await viaProxy.awaitOutcome(firstActionId, { timeoutMs: 30_000 }).catch((error: unknown) => error);
        expect(isAgentError(tampered, 'AGENT_RECEIPT_HASH_MISMATCH')).toBe(true);
        expect((tampered as { details: { checks: ReceiptCheck[] } }).details.checks.filter((check) => check.result === 'fail').map((check) => check.code)).toEqual([
          'AGENT_RECEIPT_HASH_MISMATCH',
          'AGENT_RECEIPT_PAYLOAD_MISMATCH',
        ]);
        // when / then: the receipt service's key withheld (a new client: keys are cached per client)
        mode = 'keys';
        const fresh = new WritAgent({ principalId, key, apiUrl: proxy.url, subjectRoot: stack.root, pollMs: 100 });
        await expect(fresh.awaitOutcome(firstActionId, { timeoutMs: 30_000 })).rejects.toMatchObject({ code: 'AGENT_RECEIPT_KEY_UNKNOWN' });
        await fresh.close();
      } finally {
        await viaProxy.close();
        await proxy.close();
      }
    },
    STEP_MS,
  );

  it(
    'given a request proposed ten minutes ago, when it is sent over HTTP, then AGENT_SUBMIT_REJECTED carries INGRESS_STALE; over NATS, the outcome is rejected with that reason',
    async () => {
      const stale = () => buildActionRequest(command(['true'], 'x.txt'), { principalId, now: new Date(Date.now() - 600_000) });
      await expect(agent.submit(stale(), { via: 'http' })).rejects.toMatchObject({ code: 'AGENT_SUBMIT_REJECTED', remoteCode: 'INGRESS_STALE' });
      const published = await agent.submit(stale(), { via: 'nats' });
      const outcome = await agent.awaitOutcome(published.actionRequestId, { timeoutMs: STEP_MS });
      expect(outcome).toMatchObject({ settled: true, receipt: null, action: { status: 'rejected', reason_code: 'INGRESS_STALE' } });
    },
    STEP_MS,
  );
});

describe('a task from a brief, claimed done', () => {
  it(
    'given a brief, when the agent creates the task, acts in it twice, reports a legal block and claims done, then the receipts chain, Writ verifies the claim, completes the task, and the updates show it',
    async () => {
      const brief = {
        id: uniqueName('brief'),
        mission: 'Write the greeting.',
        purpose: 'The app greets its users.',
        context: {},
        whats_done: [],
        current_task: 'src/greeting.txt holds "hello"',
        done_criteria: 'src/greeting.txt holds exactly "hello"',
        verify_command: ['sh', '-c', 'test "$(cat src/greeting.txt)" = hello'],
        key_decisions: [],
        spec: { scope: { files_owned: ['src/**'] } },
        relevant_memories: [],
        ship: false,
        audit_gates: [],
        lifecycle: 'ephemeral' as const,
      };
      // when: the task is created with its first action
      const created = await agent.createTask({
        brief,
        firstAction: {
          step: { kind: 'edit', title: 'write the greeting' },
          action_class: 'execute_command',
          target_resources: ['src/greeting.txt'],
          params: { argv: ['sh', '-c', 'mkdir -p src && echo hello > src/greeting.txt'] },
          expected_effects: ['src/greeting.txt holds hello'],
          reversibility_hint: 'reversible',
          reason: 'the brief asks for the greeting',
        },
      });
      const first = await agent.awaitOutcome(created.actionRequestId, { timeoutMs: STEP_MS });
      expect(first.action).toMatchObject({ status: 'succeeded', task_id: created.taskId });

      // and a second action of the task, over HTTP: its receipt links to the first one's (a briefed task stays open)
      const second = await agent.submit(agent.newRequest({ ...command(['sh', '-c', 'echo hi > src/second.txt'], 'src/second.txt'), task: undefined, task_id: created.taskId }), { via: 'http' });
      expect(second.ingress).toMatchObject({ status: 'accepted', task_id: created.taskId });
      const two = await agent.awaitOutcome(second.actionRequestId, { timeoutMs: STEP_MS });
      expect(two.action.status).toBe('succeeded');
      expect(two.receipt?.receipt.prev_receipt_hash).toBe(first.receipt?.receipt.receipt_hash);
      expect(two.receipt?.checks.find((check) => check.name === 'chain')).toMatchObject({ result: 'pass', message: expect.stringMatching(/links to the previous receipt/) });

      // then: its own bus credential may not send claims (it publishes its ingress subject only)
      const blocked = {
        session: principalId,
        blocked_at: new Date().toISOString(),
        reason: 'semantic_ambiguity' as const,
        question: 'The brief says "greeting" and the mock-up shows "Hello!"; which text is meant?',
        best_guess: 'hello, as the done criteria say',
        fallback_action: 'Writing "hello", the text the done criteria check.',
        fallback_action_request_id: created.actionRequestId,
        can_resume_without_answer: true,
        human_required_for: null,
      };
      await expect(agent.claim(created.taskId, { kind: 'blocked', claim: blocked }, { via: 'nats' })).rejects.toMatchObject({ code: 'AGENT_BUS_FORBIDDEN' });

      // and: a principal that does not own the task is refused by the orchestrator, over HTTP as over NATS
      const strangerId = uniqueName('stranger').replaceAll('_', '-');
      const stranger = new WritAgent({ principalId: strangerId, key: await generateAgentKey({ kid: `${strangerId}-k1` }), apiUrl: stack.apiUrl, subjectRoot: stack.root });
      const refused = await stranger.claim(created.taskId, { kind: 'blocked', claim: { ...blocked, session: strangerId } }).catch((error: unknown) => error);
      expect(isAgentError(refused, 'AGENT_CLAIM_REFUSED')).toBe(true);
      expect((refused as { remoteCode?: string }).remoteCode).toMatch(/^ORCHESTRATOR_CLAIM_(SIGNATURE_INVALID|SIGNER_NOT_ALLOWED)$/);
      await stranger.close();

      // when: the block goes over a credential that may send claims (the operator's, as `writ task done` does), signed by the agent
      const claimant = new WritAgent({
        principalId,
        key,
        apiUrl: stack.apiUrl,
        subjectRoot: stack.root,
        claimsNats: { servers: stack.natsUrl, credsFile: operatorCreds() },
        pollMs: 200,
      });
      try {
        const block = await claimant.claim(created.taskId, { kind: 'blocked', claim: blocked });
        expect(block).toMatchObject({ kind: 'blocked', status: 'accepted' });
        expect(block.question_id).not.toBeNull();
      } finally {
        await claimant.close();
      }

      // and: the agent claims done itself, over HTTP (POST /v1/tasks/<id>/claims/done: the signed claim is the credential)
      const done = {
        agent: principalId,
        status: 'done_clean' as const,
        started_at: new Date(Date.now() - 60_000).toISOString(),
        finished_at: new Date().toISOString(),
        mission: brief.mission,
        evidence: { verify_command: brief.verify_command, verify_exit_code: 0, verify_stdout: '', verify_stderr: '', artefacts: [] },
        regressions: [],
        pending_actions: [],
      };
      const reply = await agent.claim(created.taskId, { kind: 'done', claim: done });
      expect(reply.status).toBe('verifying');
      const verdict = await agent.awaitClaimVerdict(reply, { timeoutMs: STEP_MS });

      // then: accepted, and the task's updates end with its completion
      expect(verdict).toMatchObject({ status: 'accepted', refusals: [] });
      const seen: string[] = [];
      for await (const update of agent.subscribeTaskUpdates(created.taskId, { signal: AbortSignal.timeout(STEP_MS) })) seen.push(update.event.event_type);
      expect(seen).toEqual(expect.arrayContaining(['task.created', 'claim.blocked_accepted', 'claim.done_accepted', 'task.completed']));
      expect(seen.indexOf('claim.done_accepted')).toBeLessThan(seen.indexOf('task.completed'));
    },
    STEP_MS * 3,
  );
});

/** The operator's bus credential, as the harness and the CLI use it (`npm test` sets WRIT_NATS_CREDS). */
function operatorCreds(): string {
  const creds = process.env['WRIT_NATS_CREDS'];
  if (creds === undefined || creds === '') throw new Error('WRIT_NATS_CREDS (the operator credential) is not set; . var/writ/writ.env');
  return creds;
}

/** An HTTP proxy in front of the API that passes everything through, rewriting JSON answers with `tamper`. */
async function tamperingProxy(upstream: string, tamper: (route: string, body: Record<string, unknown>) => Record<string, unknown>): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const route = request.url ?? '/';
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
      const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
      void fetch(`${upstream}${route}`, { method: request.method ?? 'GET', headers, ...(body === undefined ? {} : { body }) })
        .then(async (answer) => {
          const text = await answer.text();
          let out = text;
          try {
            out = JSON.stringify(tamper(route, JSON.parse(text) as Record<string, unknown>));
          } catch {
            // not JSON: passed through as it is
          }
          response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          response.end(out);
        })
        .catch((error: unknown) => {
          response.writeHead(502);
          response.end(String(error));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
