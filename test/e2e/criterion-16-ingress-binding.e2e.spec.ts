import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EventEnvelope } from '@writ/contracts';
import { exportEd25519PrivateJwk } from '@writ/crypto';
import { conversationTasks, type FocusLogEntry } from '@writ/kernel';
import { SIGNED_REQUESTS, conversationStreamId, signRequest } from '@writ/runtime';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type Principal, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * Seed 004 exit criterion 16 ("conversation focus and ingress binding are
 * projection-rebuildable from durable ingress records plus events"), issue 17,
 * end to end: the seven built services on the real NATS, Postgres and Docker.
 * An agent sends free-form messages with `writ say`; ingress records each
 * first, then binds it: an explicit task ref binds to that task, a message
 * naming nothing follows the focus, and once the focused task has ended with
 * two other tasks open it is pending_disambiguation. The focus and the
 * bindings the projection serves equal the kernel's fold of the log's ingress
 * records, and are identical after `writ projections rebuild`; another agent
 * cannot read them, nor send a message about a task that is not its own.
 */

const STEP_MS = 120_000;
const CONVERSATION = 'conv-ops';

let stack: Stack;
let keys: string;

beforeAll(async () => {
  stack = await startStack({ prefix: 'e2eib' });
  keys = await mkdtemp(path.join(tmpdir(), 'writ-e2e-say-'));
}, 180_000);

stopStackAfterAll(() => stack);

afterAll(async () => {
  if (keys !== undefined) await rm(keys, { recursive: true, force: true });
});

/** The principal's PRIVATE JWK in a file, as `writ say --key` reads it. */
async function keyFile(principal: Principal): Promise<string> {
  const file = path.join(keys, `${principal.id}.jwk.json`);
  await writeFile(file, JSON.stringify(await exportEd25519PrivateJwk(principal.key)), { mode: 0o600 });
  return file;
}

interface Said {
  readonly ingress_id: string;
  readonly resolution: string;
  readonly rationale: string;
  readonly task_id?: string;
  readonly candidates: readonly string[];
  readonly duplicate: boolean;
}

async function say(principal: Principal, text: string, args: readonly string[] = []): Promise<Said> {
  return JSON.parse(await stack.cli(['say', text, '--conversation', CONVERSATION, '--key', await keyFile(principal), '--principal', principal.id, ...args, '--json'])) as Said;
}

/** The same message posted over HTTP, as an agent (whose bus credential publishes its ingress subject only) sends it: the signed body is the credential. */
async function post(principal: Principal, fields: { kind?: string; text: string; explicit_task_ref?: string }): Promise<{ status: number; body: Record<string, unknown> }> {
  const { jws } = await signRequest(
    SIGNED_REQUESTS.ingressMessage,
    { message_id: uniqueName('m'), conversation_id: CONVERSATION, kind: 'note', ...fields } as never,
    { principalId: principal.id, key: principal.key, now: new Date() },
  );
  return stack.http('/v1/messages', { method: 'POST', headers: { authorization: '', 'content-type': 'application/json' }, body: JSON.stringify({ message_jws: jws }) });
}

/** A task of `agent`'s held open by an irreversible action awaiting a director's approval. */
async function openTask(agent: Principal): Promise<{ taskId: string; approvalId: string }> {
  const holder = stack.actionRequest(agent, { target_resources: ['scratch'], params: { argv: ['rm', '-rf', 'scratch'] }, reversibility_hint: 'irreversible', reason: 'clean up' });
  await stack.submit(agent, holder);
  const waiting = await stack.waitForAction(holder.action_request_id, { statuses: ['awaiting_approval'], timeoutMs: STEP_MS });
  return { taskId: String(waiting.task_id), approvalId: String(waiting.approval_id) };
}

/** The conversation stream as the log holds it (chain and authorship verified), as the kernel's fold reads it. */
async function logEntries(agent: Principal): Promise<{ events: EventEnvelope[]; entries: FocusLogEntry[] }> {
  const stream = conversationStreamId(agent.id, CONVERSATION);
  const events = await stack.entityEvents('ingress', stream);
  return { events, entries: events.map((event) => ({ entity_type: 'ingress', entity_id: stream, event: { type: event.event_type, data: event.payload } })) };
}

it(
  'exit criterion 16: free-form messages are recorded then bound (explicit task, focus, pending_disambiguation settled by a reply, reply, an answer to a pending approval, a fork starting a child task, a follow-up on an ended task starting a new anchored one), and focus and bindings are the fold of the log, identical after a rebuild, readable by their principal only',
  async () => {
    // given: an agent with three open tasks and a director
    const agent = await stack.registerPrincipal({ type: 'agent', roles: ['executor'], extractable: true });
    const director = await stack.registerPrincipal({ id: uniqueName('director').replaceAll('_', '-'), type: 'user', roles: ['director'] });
    const [one, two, three] = [await openTask(agent), await openTask(agent), await openTask(agent)];

    // when: it sends notes naming each task, then a control word naming none
    const first = await say(agent, 'use the staging database', ['--task', one.taskId]);
    expect(first).toMatchObject({ resolution: 'append_note', task_id: one.taskId, duplicate: false });
    // (the same message_id again is answered as recorded, and nothing is appended)
    expect(await say(agent, 'resend', ['--task', one.taskId, '--message-id', 'm-fixed'])).toMatchObject({ duplicate: false });
    expect(await say(agent, 'resend', ['--task', one.taskId, '--message-id', 'm-fixed'])).toMatchObject({ duplicate: true, task_id: one.taskId });
    expect(await say(agent, 'skip the flaky suite', ['--task', two.taskId])).toMatchObject({ resolution: 'append_note', task_id: two.taskId });
    expect(await say(agent, 'this one first', ['--task', three.taskId])).toMatchObject({ resolution: 'append_note', task_id: three.taskId });
    // then: a message naming no task follows the focus (the last task a binding moved it to)
    expect(await say(agent, 'pause', ['--kind', 'control'])).toMatchObject({ resolution: 'control', task_id: three.taskId });

    // when: the focused task ends (its approval granted, its action run)
    await stack.resolveApproval(director, three.taskId, three.approvalId, 'grant');
    await stack.waitForRoute(`/v1/tasks/${three.taskId}`, (status, body) => status === 200 && body['status'] === 'completed', { timeoutMs: STEP_MS });
    // then: a message naming nothing, with two tasks open, is pending_disambiguation between them (the kernel never pretends)
    const ambiguous = await say(agent, 'and also rotate the logs');
    expect(ambiguous).toMatchObject({ resolution: 'pending_disambiguation', candidates: [one.taskId, two.taskId].sort() });
    expect(ambiguous.task_id).toBeUndefined();
    // and a reply to it naming one of its candidates settles it: the reply is a note there, and the pending message is bound there too
    expect(await say(agent, 'the second one', ['--task', two.taskId, '--reply-to', ambiguous.ingress_id])).toMatchObject({ resolution: 'append_note', task_id: two.taskId });
    // and a reply binds to the replied message's task; an explicit ref to the ended task is never a reopening
    expect(await say(agent, 'staging, as said', ['--reply-to', first.ingress_id])).toMatchObject({ resolution: 'append_note', task_id: one.taskId });
    // and a note asking for a fork of a live task starts a child task of it (its parent named), leaving the parent as it was
    const fork = await say(agent, 'try it on the replica too', ['--task', one.taskId, '--fork']);
    expect(fork).toMatchObject({ resolution: 'fork_child' });
    expect((await stack.entityEvents('task', String(fork.task_id))).map((event) => [event.event_type, event.payload['parent_task_id'] ?? null])).toEqual([
      ['task.created', one.taskId],
      ['task.marked_ready', null],
      ['task.started', null],
    ]);
    // and an answer about a task awaiting approval is bound to that approval (named in the rationale), resolving nothing and moving no focus
    const answer = await say(agent, 'yes, clean the build output', ['--kind', 'answer', '--task', two.taskId]);
    expect(answer).toMatchObject({ resolution: 'approval', task_id: two.taskId });
    expect(answer.rationale).toContain(two.approvalId);
    const followUp = await post(agent, { text: 'one more thing', explicit_task_ref: three.taskId });
    expect(followUp).toMatchObject({ status: 200, body: { resolution: 'start_new_root', duplicate: false } });
    // (a follow-up on the ended task starts a new task of the agent's, anchored on that outcome; the ended one is untouched)
    const four = String(followUp.body['task_id']);
    const anchor = { anchor_task_id: three.taskId, anchor_kind: 'completed_outcome', outcome_status: 'completed' };
    expect((await stack.entityEvents('task', four)).map((event) => [event.event_type, event.payload['continuation_anchor'] ?? null])).toEqual([
      ['task.created', expect.objectContaining(anchor)],
      ['task.marked_ready', null],
      ['task.started', null],
    ]);
    // and the agent's first action there is proposed under a context pack whose task contract carries the outcome it continues
    const held = stack.actionRequest(agent, { task_id: four, target_resources: ['scratch'], params: { argv: ['rm', '-rf', 'scratch'] }, reversibility_hint: 'irreversible', reason: 'clean up again' });
    await stack.submit(agent, held);
    const waiting = await stack.waitForAction(held.action_request_id, { statuses: ['awaiting_approval'], timeoutMs: STEP_MS });
    await stack.waitForRoute(`/v1/attempts/${String(waiting.attempt_id)}`, (status, body) => status === 200 && typeof body['context_pack_sha256'] === 'string', { as: agent, timeoutMs: STEP_MS });
    const pack = (await stack.http(`/v1/attempts/${String(waiting.attempt_id)}/context`, { as: agent })).body as { items: Array<{ section: string; content: Record<string, unknown> }> };
    expect(pack.items.find((item) => item.section === 'task_contract')?.content['continues']).toMatchObject(anchor);

    // hostile: another agent cannot send a message about this agent's task (nothing recorded), nor read its focus or history
    const stranger = await stack.registerPrincipal({ type: 'agent', roles: ['executor'], extractable: true });
    await expect(say(stranger, 'cancel it', ['--task', one.taskId])).rejects.toThrow(/INGRESS_MESSAGE_TASK_UNKNOWN/);
    expect(await post(stranger, { kind: 'control', text: 'cancel it', explicit_task_ref: one.taskId })).toMatchObject({ status: 404, body: { code: 'INGRESS_MESSAGE_TASK_UNKNOWN' } });
    expect(await stack.entityEvents('ingress', conversationStreamId(stranger.id, CONVERSATION))).toEqual([]);
    expect(await stack.http(`/v1/focus?principal_id=${agent.id}`, { as: stranger })).toMatchObject({ status: 403, body: { code: 'PROJECTION_SCOPE_FORBIDDEN' } });
    expect(await stack.http(`/v1/conversations/${CONVERSATION}/history?principal_id=${agent.id}`, { as: stranger })).toMatchObject({ status: 403 });
    expect(await stack.http('/v1/focus', { as: stranger })).toMatchObject({ status: 200, body: { focus: [] } });

    // then: the log holds each message recorded before it was bound, by ingress, exactly once
    const { events, entries } = await logEntries(agent);
    const said = 11;
    const recordedAt = new Map(events.flatMap((event, at) => (event.event_type === 'ingress.recorded' ? [[event.payload['ingress_id'], at]] : [])));
    expect(recordedAt.size).toBe(said);
    // every message bound once after its record, but the pending one, bound again when the reply settled it
    const bindings = events.flatMap((event, at) => (event.event_type === 'ingress.bound' ? [[event.payload['ingress_id'], at] as const] : []));
    expect(bindings.length).toBe(said + 1);
    expect(events.filter((e) => e.event_type === 'ingress.bound' && e.payload['ingress_id'] === ambiguous.ingress_id).map((e) => [e.payload['resolution'], e.payload['task_id']])).toEqual([
      ['pending_disambiguation', undefined],
      ['append_note', two.taskId],
    ]);
    expect(bindings.every(([id, at]) => recordedAt.get(id)! < at)).toBe(true);
    // (read with every event's seal checked against EVENT_AUTHORSHIP: ingress's alone may write these)
    expect([...new Set(events.map((event) => `${event.actor_type}:${event.actor_id}`))]).toEqual([`service:${events[0]?.actor_id}`]);
    // and the focus and bindings the projection serves are the kernel's fold of those records (and task events) alone
    const folded = conversationTasks(entries, agent.id, CONVERSATION);
    expect(folded.focus_task_id).toBe(four);
    const focus = (await stack.waitForRoute('/v1/focus', (status, body) => status === 200 && (body['focus'] as Array<{ message_count: number }>)[0]?.message_count === said, { as: agent, timeoutMs: STEP_MS })).body as Record<string, unknown>;
    expect(focus['focus']).toEqual([
      expect.objectContaining({ conversation_id: CONVERSATION, bound_focus_task_id: folded.focus_task_id, focus_task_id: four, pending_ingress_ids: [], unbound_ingress_ids: [] }),
    ]);
    const history = (await stack.http(`/v1/conversations/${CONVERSATION}/history`, { as: agent })).body as { messages: Array<{ ingress_id: string; task_id: string | null; resolution: string }> };
    expect(Object.fromEntries(history.messages.map((message) => [message.ingress_id, message.task_id]))).toEqual(folded.boundTo);

    // when: the projection is rebuilt from the log alone, then both views are identical and serve the same answers
    const job = JSON.parse(await stack.cli(['projections', 'rebuild', '--json'])) as { comparisons: Array<{ view: string; match: boolean }> };
    expect(job.comparisons.filter((comparison) => !comparison.match)).toEqual([]);
    expect(job.comparisons.map((comparison) => comparison.view)).toEqual(expect.arrayContaining(['conversation_focus', 'conversation_messages']));
    expect((await stack.http('/v1/focus', { as: agent })).body).toEqual(focus);
    expect((await stack.http(`/v1/conversations/${CONVERSATION}/history`, { as: agent })).body).toEqual(history);
    // and writ focus shows it
    expect(await stack.cli(['focus', '--of', agent.id, '--url', stack.apiUrl])).toContain(`${CONVERSATION} focus ${four}`);
  },
  8 * STEP_MS,
);
