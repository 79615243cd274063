import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Subscription } from '@nats-io/transport-node';
import { ExecutionCompleted, type EventDraft, type EventEnvelope, type RunAction } from '@writ/contracts';
import { KeySet, generateEd25519Key, sha256Hex, verifyJws } from '@writ/crypto';
import { eventSealer, sealEvent } from '@writ/eventstore';
import { uniqueName, waitFor } from '@writ/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, jwsPayload, startStack, type Principal, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * Writ end to end: the seven built services as child processes (support/stack.mjs) on the real
 * NATS, Postgres and Docker, under a subject root, streams, schema, ports, keys and cells of
 * this run only. The tests act as agents and a director from the outside — signed requests
 * on `<root>.ingress.action.<principal>`, the public HTTP API, `<root>.proj.*` — and read the
 * log to check what happened. They wait on events, rows and consumers, never on sleeps.
 */

/** Grants expire quickly here so that one from the log can be presented expired (the executor's clock tolerance is on the signature only). */
const GRANT_TTL_SECONDS = 20;
const STEP_MS = 90_000;
const decoder = new TextDecoder();

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ serviceEnv: { approval: { WRIT_GRANT_TTL_SECONDS: String(GRANT_TTL_SECONDS) } } });
}, 180_000);

stopStackAfterAll(() => stack);

// ---- helpers ------------------------------------------------------------------------------------

const ofType = (type: string) => (event: EventEnvelope) => event.event_type === type;

/** The ids ingress derives (docs/governed-path.md step 1): the record of these bytes under `<principal>:<key>`, and the task of the key. */
function ingressIds(principalId: string, key: string, body: string): { ingressId: string; taskId: string } {
  const scoped = `${principalId}:${key}`;
  return { ingressId: `ing-${sha256Hex(`${sha256Hex(body)}:${scoped}`).slice(0, 32)}`, taskId: `tsk-${sha256Hex(scoped).slice(0, 32)}` };
}

/** Collects the JSON documents published on a core NATS subject. */
async function collect(subject: string): Promise<{ messages: Array<Record<string, unknown>>; sub: Subscription }> {
  const messages: Array<Record<string, unknown>> = [];
  const sub = stack.nc.subscribe(subject, {
    callback: (_error, msg) => {
      messages.push(JSON.parse(decoder.decode(msg.data)) as Record<string, unknown>);
    },
  });
  await stack.nc.flush();
  return { messages, sub };
}

/** Submits a request and waits until its action row is terminal. */
async function run(agent: Principal, overrides: Record<string, unknown> = {}) {
  const request = stack.actionRequest(agent, overrides);
  await stack.submit(agent, request);
  const action = await stack.waitForAction(request.action_request_id);
  return { request, action };
}

/** The compact JWS of a receipt, verified against `GET /v1/keys`: the signed body. */
async function verifiedReceipt(receiptId: string): Promise<{ body: Record<string, unknown>; kid: string }> {
  const keys = await stack.http('/v1/keys');
  expect(keys.status).toBe(200);
  const keySet = await KeySet.fromJwks(keys.body);
  const receipt = await stack.http(`/v1/receipts/${receiptId}`);
  expect(receipt.status).toBe(200);
  const jws = String(receipt.body.jws);
  expect(jws.split('.')).toHaveLength(3);
  const verified = await verifyJws(jws, keySet);
  expect(verified.protectedHeader.alg).toBe('EdDSA');
  return { body: JSON.parse(decoder.decode(verified.payload)) as Record<string, unknown>, kid: verified.kid };
}

/** A director's signed resolution over the approval's packet, posted to `POST /v1/approvals/<id>/<grant|deny>`. */
async function resolve(director: Principal, approvalId: string, taskId: string, decision: 'grant' | 'deny') {
  return stack.resolveApproval(director, taskId, approvalId, decision);
}

/** The RunAction the orchestrator published for a task, as stored on `<root>.cmd.executor.run`. */
async function runActionOf(taskId: string): Promise<RunAction> {
  const messages = await stack.streamMessages(stack.streams.commands, stack.subject('cmd.executor.run'));
  const command = messages.map((message) => message.json<RunAction>()).find((candidate) => candidate.task_id === taskId);
  if (command === undefined) throw new Error(`no RunAction for ${taskId} on ${stack.subject('cmd.executor.run')}`);
  return command;
}

/** Publishes a RunAction and waits until the executor's durable has handled it. */
async function publishRun(command: RunAction): Promise<void> {
  const ack = await stack.publishCommand('cmd.executor.run', command, uniqueName('replay'));
  await stack.waitConsumerSettled(stack.streams.commands, 'executor', ack.seq);
}

// ---- a grant from the log, used once ------------------------------------------------------------------

interface SpentGrant {
  readonly taskId: string;
  /** The RunAction the orchestrator published, with the grant from `grant.issued`. */
  readonly command: RunAction;
  /** The grant's `exp` (seconds). */
  readonly exp: number;
}

let spent: Promise<SpentGrant> | undefined;

/** A task that ran `echo ran >> count.txt` once under its grant (made once per run). */
function spentGrant(): Promise<SpentGrant> {
  spent ??= (async () => {
    const owner = await stack.registerPrincipal();
    const { action } = await run(owner, { target_resources: ['count.txt'], params: { argv: ['sh', '-c', 'echo ran >> count.txt'] } });
    expect(action.status).toBe('succeeded');
    const issued = await stack.waitForTaskEvent(action.task_id, ofType('grant.issued'));
    const command = await runActionOf(action.task_id);
    expect(command.grant_jws).toBe(issued.payload['jws']);
    return { taskId: action.task_id, command, exp: jwsPayload<{ exp: number }>(command.grant_jws).exp };
  })();
  return spent;
}

/** Nothing more ran in the grant's task: one claim, one execution, one line. */
async function expectRanOnce(grant: SpentGrant): Promise<EventEnvelope[]> {
  const log = await stack.taskEvents(grant.taskId);
  expect(log.filter(ofType('grant.use_claimed'))).toHaveLength(1);
  expect(log.filter(ofType('execution.completed'))).toHaveLength(1);
  expect(await readFile(stack.workspaceFile(grant.taskId, 'count.txt'), 'utf8')).toBe('ran\n');
  return log;
}

// ---- scenarios ------------------------------------------------------------------------------------

describe('an allowed execute_command', () => {
  it(
    'ends succeeded with a receipt whose EdDSA JWS verifies against /v1/keys, out.txt recorded as changed, and the row published on <root>.proj.actions.<id>',
    async () => {
      // given a registered agent, and a dashboard subscribed to the action's topic before it is submitted
      const agent = await stack.registerPrincipal();
      const request = stack.actionRequest(agent, {
        target_resources: ['out.txt'],
        params: { argv: ['sh', '-c', 'echo hello > out.txt'] },
      });
      const topic = await collect(stack.subject(`proj.actions.${request.action_request_id}`));

      // when the agent publishes the signed request
      const ack = await stack.submit(agent, request);
      expect(ack.duplicate).toBe(false);
      const action = await stack.waitForAction(request.action_request_id);

      // then it succeeded, with the ids of what decided, authorized, ran and receipted it
      expect(action).toMatchObject({ action_request_id: request.action_request_id, status: 'succeeded', principal_id: agent.id, policy_outcome: 'allow', approval_id: null, reason_code: null });
      expect(action.grant_id).toMatch(/^gnt-/);
      expect(action.receipt_id).toMatch(/^rct-/);

      // and its receipt is a compact EdDSA JWS by the receipt service's key, over a body naming the action
      const receipt = await verifiedReceipt(action.receipt_id);
      expect(receipt.body).toMatchObject({
        receipt_id: action.receipt_id,
        task_id: action.task_id,
        attempt_id: action.attempt_id,
        receipt_class: 'command_execution',
        action_request_ref: `action_request:${request.action_request_id}`,
        capability_grant_ref: `grant:${action.grant_id}`,
        result_code: 'succeeded',
      });
      const principal = await stack.cli(['principal', 'show', 'writ-receipt', '--json']);
      expect(principal).toContain(receipt.kid);

      // and the timeline's execution.completed reports out.txt added with the hash of "hello\n"
      const task = await stack.http(`/v1/tasks/${action.task_id}`);
      expect(task.status).toBe(200);
      expect(task.body).toMatchObject({ task_id: action.task_id, status: 'completed' });
      const timeline = task.body.events as Array<{ event_type: string; payload: Record<string, unknown> }>;
      const completed = timeline.find((event) => event.event_type === 'execution.completed');
      expect(completed?.payload).toMatchObject({ outcome: 'completed', exit_code: 0 });
      expect(completed?.payload['changed_files']).toEqual([{ path: 'out.txt', change: 'added', before_sha256: null, after_sha256: sha256Hex('hello\n') }]);
      // as the log itself says, and the cell's workspace holds
      const logged = ExecutionCompleted.parse((await stack.waitForTaskEvent(action.task_id, ofType('execution.completed'))).payload);
      expect(logged.changed_files).toEqual(completed?.payload['changed_files']);
      expect(await readFile(stack.workspaceFile(action.task_id, 'out.txt'), 'utf8')).toBe('hello\n');

      // and every change of the row went out on its topic, the last one succeeded
      await waitFor(() => (topic.messages.at(-1)?.['status'] === 'succeeded' ? true : undefined), { what: 'succeeded on the action topic', timeoutMs: 10_000 });
      topic.sub.unsubscribe();
      expect(topic.messages.map((message) => message['status'])).toEqual(expect.arrayContaining(['awaiting_policy', 'authorized', 'executing', 'receipt_pending', 'succeeded']));
      expect(topic.messages.at(-1)).toMatchObject({ action_request_id: request.action_request_id, receipt_id: action.receipt_id });
    },
    STEP_MS,
  );

  it(
    "is read over HTTP with a bearer token, only by its agent or a wide reader: another agent's token answers 404, no token 401, the JWKS stays public",
    async () => {
      // given agent A's succeeded action, agent B, and a dashboard (an observer with its own key)
      const agentA = await stack.registerPrincipal();
      const agentB = await stack.registerPrincipal();
      const dashboard = await stack.registerPrincipal({ id: uniqueName('dashboard').replaceAll('_', '-'), type: 'system', roles: ['observer'] });
      const { request, action } = await run(agentA);
      expect(action.status).toBe('succeeded');
      const route = `/v1/actions/${request.action_request_id}`;

      // when A, B, the dashboard and nobody read it
      const byA = await stack.http(route, { as: agentA });
      const byB = await stack.http(route, { as: agentB });
      const byDashboard = await stack.http(route, { as: dashboard });
      const byNobody = await stack.http(route, { headers: { authorization: '' } });

      // then A and the dashboard see it, B sees no such action, nobody is refused
      expect(byA).toMatchObject({ status: 200, body: { action_request_id: request.action_request_id } });
      expect((await stack.http(`/v1/receipts/${action.receipt_id}`, { as: agentA })).status).toBe(200);
      expect(byDashboard.status).toBe(200);
      expect(byB).toMatchObject({ status: 404, body: { code: 'PROJECTION_NOT_FOUND' } });
      expect(byNobody).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_MISSING' } });
      // and the keys to verify receipts need no credential
      expect((await stack.http('/v1/keys', { headers: { authorization: '' } })).status).toBe(200);
    },
    STEP_MS,
  );
});

describe('the executor refuses grants it must not honour', () => {
  let agent: Principal;
  let first: SpentGrant;

  beforeAll(async () => {
    agent = await stack.registerPrincipal();
    first = await spentGrant();
  }, STEP_MS);

  it(
    'a replayed grant: the same RunAction again is the same use (nothing appended), a re-worded one is grant.refused GRANT_EXHAUSTED; nothing re-ran',
    async () => {
      // when the very RunAction that ran is published again under a new msg id
      await publishRun(first.command);
      // then it is recognised as the use already completed
      const settled = await expectRanOnce(first);
      expect(settled.filter(ofType('grant.refused'))).toHaveLength(0);

      // when the grant is presented again for another use (same params, a new request around them)
      const replay: RunAction = { ...first.command, action_request: { ...first.command.action_request, reason: 'replayed grant' } };
      await publishRun(replay);
      // then the use is refused: the grant allowed one use and it is spent
      const refused = await stack.waitForTaskEvent(first.taskId, ofType('grant.refused'), { what: 'grant.refused' });
      expect(refused).toMatchObject({ entity_type: 'grant', entity_id: first.command.grant_id, actor_id: 'writ-executor' });
      expect(refused.payload).toMatchObject({ code: 'GRANT_EXHAUSTED' });
      await expectRanOnce(first);
    },
    STEP_MS,
  );

  it(
    'a grant for another task: grant.refused GRANT_WRONG_TASK in that task, and nothing ran in its cell',
    async () => {
      // given another finished task of the same agent
      const { action: other } = await run(agent);
      expect(other.status).toBe('succeeded');
      // when the first task's grant is presented for a RunAction in the other task
      await publishRun({ ...first.command, task_id: other.task_id });
      // then the other task records the refusal and its workspace is untouched
      const refused = await stack.waitForTaskEvent(other.task_id, ofType('grant.refused'), { what: 'grant.refused' });
      expect(refused.payload).toMatchObject({ code: 'GRANT_WRONG_TASK' });
      const log = await stack.taskEvents(other.task_id);
      expect(log.filter(ofType('execution.completed'))).toHaveLength(1);
      expect(existsSync(stack.workspaceFile(other.task_id, 'count.txt'))).toBe(false);
      await expectRanOnce(first);
    },
    STEP_MS,
  );
});

describe('a destructive command', () => {
  let agent: Principal;
  let director: Principal;

  beforeAll(async () => {
    agent = await stack.registerPrincipal();
    director = await stack.registerPrincipal({ id: uniqueName('director').replaceAll('_', '-'), type: 'user', roles: ['director'] });
  }, 60_000);

  /** Submits a request of `agent` and waits until it awaits approval. */
  async function awaitingApproval(overrides: Record<string, unknown>) {
    const request = stack.actionRequest(agent, {
      step: { kind: 'edit', title: 'remove a directory' },
      expected_effects: ['the directory is gone'],
      reversibility_hint: 'irreversible',
      reason: 'clean up',
      ...overrides,
    });
    await stack.submit(agent, request);
    const waiting = await stack.waitForAction(request.action_request_id, { statuses: ['awaiting_approval'] });
    // the approval service has opened it once it is in the inbox
    const pending = await waitFor(
      async () => {
        const inbox = await stack.http('/v1/approvals?status=pending');
        expect(inbox.status).toBe(200);
        return (inbox.body.approvals as Array<Record<string, unknown>>).find((approval) => approval['approval_id'] === waiting.approval_id);
      },
      { what: `approval ${waiting.approval_id} in GET /v1/approvals?status=pending`, timeoutMs: 30_000, intervalMs: 100 },
    );
    return { request, waiting, pending };
  }

  /**
   * A task whose workspace holds `build/marker`, then `rm -rf build` proposed in it and waiting
   * for approval. A task ends when its last open step ends, so it is opened by another
   * destructive command (`rm -rf scratch`, left pending until the end); the marker is created
   * by an allowed action of the same task before `rm -rf build` is proposed, so the state the
   * approver is shown is the state it will run on.
   */
  async function pendingRemovalOfMarker() {
    const holder = await awaitingApproval({ target_resources: ['scratch'], params: { argv: ['rm', '-rf', 'scratch'] } });
    const taskId = String(holder.waiting.task_id);
    const marker = await run(agent, {
      task_id: taskId,
      step: { kind: 'edit', title: 'create the marker' },
      target_resources: ['build/marker'],
      params: { argv: ['sh', '-c', 'mkdir -p build && echo keep > build/marker'] },
      expected_effects: ['build/marker exists'],
    });
    expect(marker.action).toMatchObject({ status: 'succeeded', task_id: taskId });
    expect(await readFile(stack.workspaceFile(taskId, 'build/marker'), 'utf8')).toBe('keep\n');
    const removal = await awaitingApproval({ task_id: taskId, target_resources: ['build'], params: { argv: ['rm', '-rf', 'build'] } });
    expect(removal.waiting.task_id).toBe(taskId);
    return { holder: holder.waiting, removal: removal.request, waiting: removal.waiting, pending: removal.pending };
  }

  /** Denies the request that held the task open, so the task ends; its denial is receipted too. */
  async function release(holder: { action_request_id: string; approval_id: string; task_id: string }): Promise<void> {
    expect(await resolve(director, holder.approval_id, holder.task_id, 'deny')).toMatchObject({ status: 200, body: { status: 'denied' } });
    await stack.waitForAction(holder.action_request_id, { statuses: ['denied'], until: (row) => row.receipt_id !== null });
  }

  it(
    'waits in the pending approvals; a director grant runs it in the same attempt and it ends succeeded',
    async () => {
      // given rm -rf build waiting for approval, with build/marker in its workspace
      const { holder, removal, waiting, pending } = await pendingRemovalOfMarker();
      expect(waiting.approval_id).toMatch(/^apv-/);
      expect(pending).toMatchObject({ task_id: waiting.task_id, attempt_id: waiting.attempt_id, status: 'pending', requested_by: agent.id });
      expect(pending['packet']).toMatchObject({ action_request_id: removal.action_request_id, action_class: 'execute_command' });

      // when a director grants it
      const granted = await resolve(director, waiting.approval_id, waiting.task_id, 'grant');
      expect(granted).toMatchObject({ status: 200, body: { approval_id: waiting.approval_id, status: 'granted', resolved_by: director.id } });

      // then the same attempt runs it and succeeds: build/ is gone, the deletion recorded
      const done = await stack.waitForAction(removal.action_request_id);
      expect(done).toMatchObject({ status: 'succeeded', task_id: waiting.task_id, attempt_id: waiting.attempt_id, approval_id: waiting.approval_id });
      const log = await stack.taskEvents(waiting.task_id);
      expect(log.filter((event) => event.event_type === 'attempt.created' && event.entity_id === waiting.attempt_id)).toHaveLength(1);
      const execution = log.find((event) => event.event_type === 'execution.completed' && event.attempt_id === waiting.attempt_id);
      expect(ExecutionCompleted.parse(execution?.payload).changed_files).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: 'build/marker', change: 'deleted', before_sha256: sha256Hex('keep\n'), after_sha256: null })]),
      );
      expect(existsSync(stack.workspaceFile(waiting.task_id, 'build/marker'))).toBe(false);
      const receipt = await verifiedReceipt(done.receipt_id);
      expect(receipt.body).toMatchObject({ attempt_id: waiting.attempt_id, result_code: 'succeeded', approval_ref: expect.stringContaining(waiting.approval_id) });
      await release(holder);
    },
    STEP_MS,
  );

  it(
    "a forged approval.granted on the task's subject: unsealed (a stolen bus credential) it is quarantined AUTHOR_UNPROVEN, as is a grant.issued sealed with the policy service's key; sealed with the approval service's stolen key it mints no grant and fails writ verify --task; the real director's grant then runs it",
    async () => {
      // given rm -rf scratch waiting for approval, alone in its task
      const { request, waiting } = await awaitingApproval({ target_resources: ['scratch'], params: { argv: ['rm', '-rf', 'scratch'] } });
      const taskId = String(waiting.task_id);
      const approvalId = String(waiting.approval_id);

      // when someone who can write the log appends approval.granted to the task's subject, as the approval service would, unsigned by any director:
      // once with no seal (a bus credential alone), once sealed with the approval service's own key (its key stolen too), both chained on the head
      const head = (await stack.taskEvents(taskId)).at(-1) as EventEnvelope;
      const at = new Date().toISOString();
      const forgery = (eventId: string): EventDraft => ({
        event_id: eventId,
        schema_version: 1,
        event_type: 'approval.granted',
        entity_type: 'approval',
        entity_id: approvalId,
        step_id: head.step_id,
        attempt_id: String(waiting.attempt_id),
        occurred_at: at,
        actor_type: 'service',
        actor_id: 'writ-approval',
        payload: { resolved_by: director.id, witness_validated: false, at },
        causation_id: null,
        correlation_id: taskId,
      });
      const unsealedId = uniqueName('evt-unsealed').replaceAll('_', '-');
      const forgedId = uniqueName('evt-forged').replaceAll('_', '-');
      const unsealed = sealEvent(forgery(unsealedId), taskId, { taskSeq: head.task_seq, hash: head.hash });
      const unsealedAck = await stack.js.publish(stack.subject(`evt.task.${taskId}`), JSON.stringify(unsealed));
      // and, with the policy service's credential and sealing key, a grant.issued for the attempt (policy may not mint grants)
      const grantDraft: EventDraft = { ...forgery(uniqueName('evt-grant').replaceAll('_', '-')), event_type: 'grant.issued', entity_type: 'grant', entity_id: uniqueName('grant').replaceAll('_', '-'), actor_id: 'writ-policy', payload: { at } };
      const grantForgery = sealEvent(grantDraft, taskId, { taskSeq: head.task_seq, hash: head.hash });
      grantForgery.seal = await eventSealer('writ-policy', await stack.sealKey('writ-policy')).seal(grantForgery.hash);
      const grantAck = await stack.js.publish(stack.subject(`evt.task.${taskId}`), JSON.stringify(grantForgery));
      const sealed = sealEvent(forgery(forgedId), taskId, { taskSeq: head.task_seq, hash: head.hash });
      sealed.seal = await eventSealer('writ-approval', await stack.approvalKey()).seal(sealed.hash);
      await stack.js.publish(stack.subject(`evt.task.${taskId}`), JSON.stringify(sealed));

      // then the unsealed one is no event of the task for any reader
      const entry = await stack.store.entryAt(stack.subject(`evt.task.${taskId}`), unsealedAck.seq);
      expect(entry).toMatchObject({ kind: 'quarantined', record: { reason: 'QUARANTINE_AUTHOR_UNPROVEN' } });
      expect(await stack.store.entryAt(stack.subject(`evt.task.${taskId}`), grantAck.seq)).toMatchObject({
        kind: 'quarantined',
        record: { reason: 'QUARANTINE_AUTHOR_UNPROVEN', detail: expect.stringContaining('appended by approval, not policy') },
      });
      // then the orchestrator records the refusal with its code, and nothing is granted, run or receipted on it
      const refused = await stack.waitForTaskEvent(taskId, (event) => event.event_type === 'approval.resolution_refused', { what: 'the refusal of the forged grant' });
      expect(refused.payload).toMatchObject({ resolution_event_id: forgedId, code: 'APPROVAL_RESOLUTION_UNSIGNED' });
      const afterForgery = await stack.taskEvents(taskId);
      expect(afterForgery.map((event) => event.event_type)).not.toContain('grant.issued');
      expect(afterForgery.map((event) => event.event_type)).not.toContain('attempt.authorized');
      expect(await stack.waitForAction(request.action_request_id, { statuses: ['awaiting_approval'] })).toMatchObject({ approval_id: approvalId });
      // and writ verify --task fails the task on the forged grant, by code
      const verified = await stack.cli(['verify', '--task', taskId, '--json']).then(
        () => undefined,
        (error: Error) => error.message,
      );
      expect(verified).toMatch(/approval\.authority \(approval [^)]+\) APPROVAL_RESOLUTION_UNSIGNED/);
      // and the unsealed one is shown for what it is, and was never acted upon
      const report = await stack.cli(['verify', '--task', taskId]).then(
        (stdout) => stdout,
        // It fails (the sealed forgery): its report is on stdout all the same.
        (error: Error) => String((error.cause as { stdout?: unknown } | undefined)?.stdout ?? ''),
      );
      expect(report).toMatch(/QUARANTINED\s+events\.author\s+stream seq \d+: author unproven \(approval\.granted carries no service seal/);
      expect((await stack.taskEvents(taskId)).filter((event) => event.event_type === 'approval.resolution_refused').map((event) => event.payload['resolution_event_id'])).toEqual([forgedId]);

      // when the real director grants it
      const granted = await resolve(director, approvalId, taskId, 'grant');
      expect(granted).toMatchObject({ status: 200, body: { approval_id: approvalId, status: 'granted', resolved_by: director.id } });

      // then it runs on the real resolution, whose grant names the director
      expect(await stack.waitForAction(request.action_request_id)).toMatchObject({ status: 'succeeded', attempt_id: waiting.attempt_id });
      const issued = (await stack.taskEvents(taskId)).find((event) => event.event_type === 'grant.issued');
      expect(issued?.payload['claims']).toMatchObject({ issued_by_principal_id: director.id });
    },
    STEP_MS,
  );

  it(
    'denied by a director never runs: the marker survives and a signed receipt records the denial',
    async () => {
      // given rm -rf build waiting for approval, with build/marker in its workspace
      const { holder, removal, waiting } = await pendingRemovalOfMarker();

      // when a director denies it
      const denied = await resolve(director, waiting.approval_id, waiting.task_id, 'deny');
      expect(denied).toMatchObject({ status: 200, body: { approval_id: waiting.approval_id, status: 'denied' } });

      // then the action ends denied, with a receipt and no grant
      const done = await stack.waitForAction(removal.action_request_id, { until: (row) => row.receipt_id !== null });
      expect(done).toMatchObject({ status: 'denied', attempt_id: waiting.attempt_id, grant_id: null });
      expect(done.receipt_id).toMatch(/^rct-/);
      const receipt = await verifiedReceipt(done.receipt_id);
      expect(receipt.body).toMatchObject({
        attempt_id: waiting.attempt_id,
        receipt_class: 'approval_resolution',
        result_code: 'refused',
        capability_grant_ref: null,
        action_request_ref: `action_request:${removal.action_request_id}`,
      });

      // and nothing ran for that attempt: no grant, no claim, no execution; the marker is still there
      const ofAttempt = (await stack.taskEvents(waiting.task_id)).filter((event) => event.attempt_id === waiting.attempt_id).map((event) => event.event_type);
      expect(ofAttempt).toEqual(expect.arrayContaining(['approval.denied', 'attempt.approval_denied', 'receipt.issued']));
      expect(ofAttempt).not.toContain('grant.issued');
      expect(ofAttempt).not.toContain('grant.use_claimed');
      expect(ofAttempt).not.toContain('execution.completed');
      expect(await readFile(stack.workspaceFile(waiting.task_id, 'build/marker'), 'utf8')).toBe('keep\n');
      await release(holder);
      expect(await readFile(stack.workspaceFile(waiting.task_id, 'build/marker'), 'utf8')).toBe('keep\n');
    },
    STEP_MS,
  );

  it(
    'superseded by a revised request while it waits: the first approval is invalidated (input_drift) and receipted, can no longer be granted, and the revision is evaluated and asks its own approval',
    async () => {
      // given rm -rf build waiting for approval
      const first = await awaitingApproval({ target_resources: ['build'], params: { argv: ['rm', '-rf', 'build'] } });
      const taskId = String(first.waiting.task_id);

      // when the agent revises it: a narrower removal that supersedes the first request
      const revised = stack.actionRequest(agent, {
        task_id: taskId,
        supersedes: first.request.action_request_id,
        step: { kind: 'edit', title: 'remove the cache only' },
        target_resources: ['build/cache'],
        params: { argv: ['rm', '-rf', 'build/cache'] },
        expected_effects: ['build/cache is gone'],
        reversibility_hint: 'irreversible',
        reason: 'only the cache needs to go',
      });
      await stack.submit(agent, revised);

      // then the first attempt is superseded by the revision's, and its pending approval is invalidated as input drift
      const superseded = await stack.waitForTaskEvent(taskId, (event) => event.event_type === 'attempt.superseded' && event.attempt_id === first.waiting.attempt_id, {
        what: 'the first attempt superseded',
      });
      const invalidated = await stack.waitForTaskEvent(taskId, (event) => event.event_type === 'approval.invalidated' && event.entity_id === first.waiting.approval_id, {
        what: 'the first approval invalidated',
      });
      expect(invalidated.payload).toMatchObject({ cause: 'input_drift' });

      // and the revision went through policy itself and waits for its own approval, never the first one
      const second = await stack.waitForAction(revised.action_request_id, { statuses: ['awaiting_approval'] });
      expect(second).toMatchObject({ task_id: taskId, policy_outcome: 'require_approval' });
      expect(second.approval_id).toMatch(/^apv-/);
      expect(second.approval_id).not.toBe(first.waiting.approval_id);
      expect(superseded.payload).toMatchObject({ cause: 'input_drift', superseded_by_attempt_id: second.attempt_id });
      const policy = (await stack.taskEvents(taskId)).filter((event) => event.event_type === 'policy.evaluated' && event.attempt_id === second.attempt_id);
      expect(policy).toHaveLength(1);

      // and the invalidation is receipted on its own, signed like every receipt
      const resolution = await stack.waitForTaskEvent(
        taskId,
        (event) => event.event_type === 'receipt.issued' && event.payload['cause'] === 'approval_resolved' && event.attempt_id === first.waiting.attempt_id,
        { what: 'the receipt of the invalidation' },
      );
      const resolutionReceiptId = String((resolution.payload['receipt'] as Record<string, unknown>)['receipt_id']);
      // the projection serves it once it has folded the event
      await waitFor(async () => ((await stack.http(`/v1/receipts/${resolutionReceiptId}`)).status === 200 ? true : undefined), {
        what: `receipt ${resolutionReceiptId} in GET /v1/receipts`,
        timeoutMs: 30_000,
        intervalMs: 100,
      });
      const receipt = await verifiedReceipt(resolutionReceiptId);
      expect(receipt.body).toMatchObject({ receipt_class: 'approval_resolution', result_code: 'cancelled', approval_ref: `approval:${first.waiting.approval_id}`, capability_grant_ref: null });

      // and the first approval can no longer be granted into a run
      const late = await resolve(director, first.waiting.approval_id, taskId, 'grant');
      expect(late.status).toBe(409);
      const log = await stack.taskEvents(taskId);
      expect(log.filter((event) => event.attempt_id === first.waiting.attempt_id && ['grant.issued', 'attempt.authorized', 'attempt.policy_reentered'].includes(event.event_type))).toEqual([]);

      // the revision is denied, so the task ends; nothing ever ran
      expect(await resolve(director, second.approval_id, taskId, 'deny')).toMatchObject({ status: 200, body: { status: 'denied' } });
      await stack.waitForAction(revised.action_request_id, { statuses: ['denied'], until: (row) => row.receipt_id !== null });
      expect((await stack.taskEvents(taskId)).filter((event) => event.event_type === 'execution.completed')).toEqual([]);
    },
    STEP_MS,
  );
});

describe('ingress refuses what it cannot authenticate or read', () => {
  let agent: Principal;

  beforeAll(async () => {
    agent = await stack.registerPrincipal();
  }, 60_000);

  /** The request was recorded, rejected with `code`, and no task was created for it. */
  async function expectRejected(principalId: string, key: string, body: string, actionRequestId: string | undefined, code: string): Promise<void> {
    const { ingressId, taskId } = ingressIds(principalId, key, body);
    const rejected = await waitFor(async () => (await stack.entityEvents('ingress', ingressId)).find(ofType('ingress.rejected')), { what: `ingress.rejected of ${ingressId}`, timeoutMs: 30_000 });
    expect(rejected.payload).toMatchObject({ reason_code: code });
    expect((await stack.entityEvents('ingress', ingressId)).map((event) => event.event_type)).toEqual(['ingress.received', 'ingress.rejected']);
    if (actionRequestId !== undefined) {
      const action = await stack.waitForAction(actionRequestId, { statuses: ['rejected'] });
      expect(action).toMatchObject({ status: 'rejected', reason_code: code, task_id: null, ingress_id: ingressId });
    }
    expect(await stack.eventSubjects(`task.${taskId}`)).toEqual({});
  }

  it(
    'a forged signature: rejected INGRESS_SIGNATURE_INVALID, nothing runs',
    async () => {
      // given a request signed by someone else's key under the agent's kid
      const forger = await generateEd25519Key({ kid: agent.kid });
      const request = stack.actionRequest(agent);
      const forged = await stack.sign(agent, request, { key: forger });
      // when it is published as the agent's
      await stack.submit(agent, request, { body: forged });
      // then
      await expectRejected(agent.id, request.action_request_id, forged, request.action_request_id, 'INGRESS_SIGNATURE_INVALID');
    },
    STEP_MS,
  );

  it(
    'an unknown principal: rejected INGRESS_PRINCIPAL_UNKNOWN, nothing runs',
    async () => {
      // given a well-signed request of a principal nobody registered
      const key = await generateEd25519Key({ kid: 'stranger-k1' });
      const stranger: Principal = { id: uniqueName('stranger').replaceAll('_', '-'), kid: key.kid, key, publicJwk: key.publicJwk };
      const request = stack.actionRequest(stranger);
      const jws = await stack.sign(stranger, request);
      // when it is published
      await stack.submit(stranger, request, { body: jws });
      // then
      await expectRejected(stranger.id, request.action_request_id, jws, request.action_request_id, 'INGRESS_PRINCIPAL_UNKNOWN');
    },
    STEP_MS,
  );

  it(
    'a malformed body: a signed request that is no ActionRequest, and bytes that are no JWS, are rejected INGRESS_REQUEST_INVALID; nothing runs',
    async () => {
      // given a correctly signed document missing what an ActionRequest needs
      const { action_class: _dropped, params: _params, ...incomplete } = stack.actionRequest(agent);
      const signed = await stack.sign(agent, incomplete);
      await stack.submit(agent, incomplete as typeof incomplete & { action_request_id: string }, { body: signed });
      await expectRejected(agent.id, incomplete.action_request_id, signed, incomplete.action_request_id, 'INGRESS_REQUEST_INVALID');

      // and bytes that are not a compact JWS at all
      const key = uniqueName('garbage');
      const garbage = '{"action_request_id": "not-a-jws"}';
      await stack.submit(agent, undefined, { body: garbage, key });
      await expectRejected(agent.id, key, garbage, undefined, 'INGRESS_REQUEST_INVALID');
    },
    STEP_MS,
  );

  it(
    'the same request sent twice under one idempotency key runs once: one task, one execution',
    async () => {
      // given one signed request appending a line to count.txt
      const request = stack.actionRequest(agent, { target_resources: ['count.txt'], params: { argv: ['sh', '-c', 'echo ran >> count.txt'] } });
      const jws = await stack.sign(agent, request);
      const { ingressId, taskId } = ingressIds(agent.id, request.action_request_id, jws);

      // when it is published twice under the same Writ-Idempotency-Key (both stored: ingress, not JetStream, dedupes), and once more over HTTP with it as Idempotency-Key
      const first = await stack.submit(agent, request, { body: jws });
      const second = await stack.submit(agent, request, { body: jws });
      expect(first.duplicate).toBe(false);
      expect(second.seq).toBeGreaterThan(first.seq);
      const action = await stack.waitForAction(request.action_request_id);
      const posted = await stack.http('/v1/actions', {
        method: 'POST',
        headers: { 'content-type': 'application/jose', 'idempotency-key': request.action_request_id },
        body: jws,
      });

      // then ingress knew it, and it ran once: one ingress, one task, one claim, one execution, one line
      expect(posted).toMatchObject({ status: 200, body: { status: 'duplicate', ingress_id: ingressId } });
      expect(action).toMatchObject({ status: 'succeeded', task_id: taskId });
      expect((await stack.entityEvents('ingress', ingressId)).map((event) => event.event_type)).toEqual(['ingress.received', 'ingress.accepted']);
      const log = await stack.taskEvents(taskId);
      expect(log.filter(ofType('task.created'))).toHaveLength(1);
      expect(log.filter(ofType('grant.use_claimed'))).toHaveLength(1);
      expect(log.filter(ofType('execution.completed'))).toHaveLength(1);
      expect(await readFile(stack.workspaceFile(taskId, 'count.txt'), 'utf8')).toBe('ran\n');
    },
    STEP_MS,
  );
});

describe('the example agent (examples/agent)', () => {
  it(
    'registers itself through the CLI; its requests end succeeded, awaiting approval and denied; approve.mjs lets a director grant the pending one',
    async () => {
      // given the stack's API, NATS subjects and log named in the agent's environment
      const env = { ...process.env, WRIT_URL: stack.apiUrl, WRIT_SUBJECT_ROOT: stack.root, WRIT_EVENTS_STREAM: stack.streams.events };
      // when the agent runs
      const agent = await promisify(execFile)(process.execPath, [path.join(REPO_ROOT, 'examples/agent/agent.mjs')], { env, timeout: 120_000 });
      // then it reports the three outcomes, and the line that grants the pending one
      expect(agent.stdout).toMatch(/\(a\) allowed command: status succeeded/);
      expect(agent.stdout).toMatch(/\(b\) destructive command: status awaiting_approval/);
      expect(agent.stdout).toMatch(/\(c\) network write: status denied/);
      const [, approvalId, taskId] = /approve\.mjs grant (\S+) --task (\S+)/.exec(agent.stdout) ?? [];
      expect(approvalId).toMatch(/^apv-/);

      // when a director registered as the README says (writ principal keygen, writ principal add) grants it with approve.mjs
      const dir = await mkdtemp(path.join(tmpdir(), 'writ-e2e-director-'));
      try {
        const director = uniqueName('director').replaceAll('_', '-');
        const publicJwk = await stack.cli(['principal', 'keygen', '--kid', `${director}-k1`, '--out', path.join(dir, 'director.jwk.json')]);
        await writeFile(path.join(dir, 'director.pub.json'), publicJwk);
        await stack.cli(['principal', 'add', '--id', director, '--type', 'user', '--role', 'director', '--jwk', path.join(dir, 'director.pub.json')]);
        const approve = await promisify(execFile)(
          process.execPath,
          [path.join(REPO_ROOT, 'examples/agent/approve.mjs'), 'grant', String(approvalId), '--task', String(taskId), '--director', director, '--key', path.join(dir, 'director.jwk.json')],
          { env, timeout: 60_000 },
        );
        expect(approve.stdout).toMatch(/^200 /);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }

      // then the destructive command runs and succeeds
      const row = await waitFor(
        async () => {
          const answer = await stack.http(`/v1/tasks/${taskId}`);
          return answer.status === 200 && ['completed', 'failed'].includes(answer.body.status) ? answer.body : undefined;
        },
        { what: 'the approved task to end', timeoutMs: 60_000, intervalMs: 100 },
      );
      expect(row).toMatchObject({ task_id: taskId, status: 'completed' });
    },
    STEP_MS,
  );
});

// It stops the executor alone, which one process running every service cannot (WRIT_E2E_SINGLE_PROCESS=1).
describe.skipIf(process.env['WRIT_E2E_SINGLE_PROCESS'] === '1')('a grant that expires while its run waits for an executor (issue 13)', () => {
  it(
    'is refused as expired and renewed on the same authority: the action runs once, succeeds, and its receipt cites the renewal',
    async () => {
      // given no executor takes run commands (they wait in the commands stream)
      await stack.stopService('executor');
      let restarted = false;
      try {
        const agent = await stack.registerPrincipal();
        const request = stack.actionRequest(agent, { target_resources: ['count.txt'], params: { argv: ['sh', '-c', 'echo ran >> count.txt'] } });
        await stack.submit(agent, request);
        const authorized = await stack.waitForAction(request.action_request_id, { statuses: ['authorized'], until: (row: { grant_id: string | null }) => row.grant_id !== null });
        const taskId = String(authorized.task_id);
        const issued = await stack.waitForTaskEvent(taskId, ofType('grant.issued'));
        const exp = Number((issued.payload['claims'] as { exp: number }).exp);
        await stack.waitForTaskEvent(taskId, ofType('attempt.grant_attached'));
        // when its grant expires before an executor comes back for the run command
        await waitFor(() => (Date.now() >= exp * 1000 ? true : undefined), { what: 'the grant to expire', timeoutMs: (GRANT_TTL_SECONDS + 5) * 1000, intervalMs: 200 });
        await stack.startService('executor');
        restarted = true;

        // then the action succeeds, once, under a renewal of its grant
        const action = await stack.waitForAction(request.action_request_id, { timeoutMs: 120_000, until: (row: { receipt_id: string | null }) => row.receipt_id !== null });
        expect(action.status).toBe('succeeded');
        const log = await stack.taskEvents(taskId);
        const grants = log.filter(ofType('grant.issued')).map((event) => (event.payload['claims'] as { jti: string; issued_by_principal_id: string; exp: number }));
        expect(grants).toHaveLength(2);
        const [first, renewal] = grants;
        expect(renewal?.issued_by_principal_id).toBe(first?.issued_by_principal_id);
        expect(renewal?.exp).toBeGreaterThan(exp);
        expect(log.filter(ofType('grant.refused')).map((event) => [event.entity_id, event.payload['code']])).toEqual([[first?.jti, 'GRANT_EXPIRED']]);
        expect(log.filter(ofType('grant.use_claimed')).map((event) => event.entity_id)).toEqual([renewal?.jti]);
        expect(log.filter(ofType('execution.completed'))).toHaveLength(1);
        expect(log.filter(ofType('attempt.failed'))).toEqual([]);
        expect(await readFile(stack.workspaceFile(taskId, 'count.txt'), 'utf8')).toBe('ran\n');
        const receipt = await verifiedReceipt(String(action.receipt_id));
        expect(receipt.body).toMatchObject({ result_code: 'succeeded', capability_grant_ref: `grant:${renewal?.jti}` });
      } finally {
        if (!restarted) await stack.startService('executor');
      }
    },
    STEP_MS + 60_000,
  );
});

describe('the executor refuses a grant past its expiry', () => {
  // Last in the file: the grant spent at the start of the executor tests has had time to expire.
  it(
    'an expired grant: grant.refused GRANT_EXPIRED, nothing ran',
    async () => {
      // given the spent grant past its expiry (the stack mints grants for GRANT_TTL_SECONDS)
      const first = await spentGrant();
      await waitFor(() => (Date.now() >= first.exp * 1000 ? true : undefined), { what: 'the grant to expire', timeoutMs: (GRANT_TTL_SECONDS + 5) * 1000, intervalMs: 200 });
      // when it is presented for a new use
      const late: RunAction = { ...first.command, action_request: { ...first.command.action_request, reason: 'expired grant' } };
      await publishRun(late);
      // then
      const refusals = (await stack.taskEvents(first.taskId)).filter(ofType('grant.refused'));
      expect(refusals.map((event) => event.payload['code'])).toContain('GRANT_EXPIRED');
      await expectRanOnce(first);
    },
    STEP_MS,
  );
});

