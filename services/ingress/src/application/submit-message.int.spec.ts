import type { IngressMessageReply, IngressMessageSubmission } from '@writ/contracts';
import { generateEd25519Key } from '@writ/crypto';
import { EventStore, eventSealer } from '@writ/eventstore';
import { approvalDecider, fold, taskDecider, type TaskCommand } from '@writ/kernel';
import { DEFAULT_SERVICE_PRINCIPALS, SIGNED_REQUESTS, TrustAnchoredPrincipals, conversationStreamId, followUpTaskId, registerServicePrincipal, serviceAuthorship, serviceDraft, signRequest } from '@writ/runtime';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPrincipal, startTestIngress, type TestAgent, type TestIngress } from '../../test/fixtures.js';
import { EventStoreIngressLog } from '../outbound/event-log.js';
import { LogPrincipalDirectory } from '../outbound/principal-directory.js';
import type { IngressLog } from './ports.js';
import { SubmitMessageHandler, type MessageTexts } from './submit-message.handler.js';

/**
 * Free-form messages against the real log (issue 17, Hermit 8.1.2/8.1.3):
 * recorded first, then bound once, across a crash between the two; a
 * refusal records nothing; a binding forged by another service is not one.
 */
let t: TestIngress;
let agent: TestAgent;
let other: TestAgent;
/** The log as a deployment reads it: every event's seal checked against EVENT_AUTHORSHIP; ingress's own appends sealed. */
let checked: EventStore;

const INGRESS = DEFAULT_SERVICE_PRINCIPALS.ingress;
const texts = new Map<string, Uint8Array>();
const memoryTexts: MessageTexts = { store: async (bytes) => void texts.set(Buffer.from(bytes).toString('utf8'), bytes) };

async function sealedAs(store: EventStore, principalId: string): Promise<EventStore> {
  const key = await generateEd25519Key({ kid: uniqueName(`${principalId}-k`) });
  store.sealWith(eventSealer(principalId, key));
  await registerServicePrincipal(store, { principalId, displayName: principalId, key });
  return store;
}

const openStore = (authorship: boolean) =>
  EventStore.open(t.nc, { stream: t.config.streams.events, subjectPrefix: t.config.streams.eventsPrefix, maxBytes: 64 * 1024 ** 2 }, authorship ? { authorship: serviceAuthorship({ WRIT_AUTHORSHIP: 'enforce' }).store! } : {});

beforeAll(async () => {
  t = await startTestIngress();
  checked = await sealedAs(await openStore(true), INGRESS);
  agent = await registerPrincipal(checked);
  other = await registerPrincipal(checked);
});

afterAll(async () => {
  await t?.stop();
});

function handler(log: IngressLog = new EventStoreIngressLog(checked)): SubmitMessageHandler {
  return new SubmitMessageHandler({
    log,
    principals: new TrustAnchoredPrincipals(new LogPrincipalDirectory(checked), undefined),
    texts: memoryTexts,
    clock: { now: () => new Date() },
    principalId: INGRESS,
    freshnessSeconds: 300,
  });
}

async function message(from: TestAgent, fields: Omit<IngressMessageSubmission, 'sent_by' | 'sent_at'>): Promise<{ message_jws: string }> {
  const { jws } = await signRequest(SIGNED_REQUESTS.ingressMessage, fields, { principalId: from.id, key: from.key, now: new Date() });
  return { message_jws: jws };
}

/** A task of `owner`'s, opened and walked by the kernel's task decider (as ingress and the orchestrator would), sealed by ingress. */
async function task(owner: TestAgent, ...walk: Exclude<TaskCommand['type'], 'create-task'>[]): Promise<string> {
  const taskId = uniqueName('task');
  const commands: TaskCommand[] = [
    {
      type: 'create-task',
      data: { task_id: taskId, title: 'fix the flaky test', goal: 'make it pass', owner_principal_id: owner.id, policy_profile_ref: 'local_edit_allowed@1', task_contract_ref: 'artifact:brief' },
      metadata: { now: new Date().toISOString() },
    },
    ...walk.map((type) => ({ type, data: {}, metadata: { now: new Date().toISOString() } }) as TaskCommand),
  ];
  let events: { type: string; data: unknown }[] = [];
  for (const command of commands) events = [...events, ...taskDecider.decide(command, fold(taskDecider, events))];
  const drafts = events.map((event, n) =>
    serviceDraft({ key: `${taskId}:${n}`, eventType: event.type, entityType: 'task', entityId: taskId, occurredAt: new Date().toISOString(), actorId: INGRESS, payload: event.data as object, causationId: null, correlationId: taskId }),
  );
  await checked.append(taskId, drafts, 0);
  return taskId;
}

/** Appends an `approval.requested` on `taskId` (as the kernel's approval decider writes it), sealed by `author`'s store; returns its id. */
async function requestApproval(author: EventStore, authorId: string, taskId: string): Promise<string> {
  const approvalId = uniqueName('apv');
  const now = new Date();
  const [requested] = approvalDecider.decide(
    {
      type: 'request-approval',
      data: {
        approval_id: approvalId,
        task_id: taskId,
        step_id: uniqueName('stp'),
        attempt_id: uniqueName('att'),
        approval_type: 'destructive_command',
        requested_action_ref: uniqueName('ar'),
        approval_packet_ref: 'e'.repeat(64),
        requested_by: agent.id,
        expires_at: new Date(now.getTime() + 3_600_000).toISOString(),
      },
      metadata: { now: now.toISOString() },
    },
    approvalDecider.initialState(),
  );
  const draft = serviceDraft({ key: `${approvalId}:requested`, eventType: requested!.type, entityType: 'approval', entityId: approvalId, occurredAt: now.toISOString(), actorId: authorId, payload: requested!.data as object, causationId: null, correlationId: taskId });
  await author.append(taskId, [draft], (await author.head(taskId)).taskSeq);
  return approvalId;
}

const streamOf = async (principal: TestAgent, conversation: string) => (await checked.readEntity('ingress', conversationStreamId(principal.id, conversation))).map(({ event }) => event);

/** Ends `taskId` (completed), as the orchestrator would. */
async function endTask(taskId: string): Promise<void> {
  const head = await checked.head(taskId);
  const state = fold(taskDecider, (await checked.read(taskId)).map(({ event }) => ({ type: event.event_type, data: event.payload })));
  const [done] = taskDecider.decide({ type: 'complete-task', data: {}, metadata: { now: new Date().toISOString() } } as TaskCommand, state);
  await checked.append(taskId, [serviceDraft({ key: `${taskId}:end`, eventType: done!.type, entityType: 'task', entityId: taskId, occurredAt: new Date().toISOString(), actorId: INGRESS, payload: done!.data as object, causationId: null, correlationId: taskId })], head.taskSeq);
}

/** The bindings (resolution, task) a conversation stream holds for one message, in order. */
const bindingsOf = (events: readonly { event_type: string; payload: Record<string, unknown> }[], ingressId: string) =>
  events.filter((event) => event.event_type === 'ingress.bound' && event.payload['ingress_id'] === ingressId).map((event) => [event.payload['resolution'], event.payload['task_id']]);

/** The checked log, with some of its operations replaced (a kill at a chosen instruction). */
function logWith(replaced: Partial<IngressLog>): IngressLog {
  const inner = new EventStoreIngressLog(checked);
  return {
    headOfIngress: (id) => inner.headOfIngress(id),
    readIngress: (id) => inner.readIngress(id),
    headOfTask: (id) => inner.headOfTask(id),
    readTask: (id) => inner.readTask(id),
    appendTask: (id, drafts, seq) => inner.appendTask(id, drafts, seq),
    appendIngress: (id, drafts, seq) => inner.appendIngress(id, drafts, seq),
    ...replaced,
  };
}

/** A log that dies instead of appending any `ingress.bound` (a kill between a message's record and its binding). */
const killedBeforeBinding = (why: string): IngressLog =>
  logWith({
    appendIngress: async (id, drafts, seq) => {
      if ((drafts as { event_type: string }[]).some((draft) => draft.event_type === 'ingress.bound')) throw new Crash(why);
      return new EventStoreIngressLog(checked).appendIngress(id, drafts, seq);
    },
  });

class Crash extends Error {
  readonly code = 'TEST_CRASH';
}

describe('a free-form message is recorded, then bound', () => {
  it('given a note naming the sender\'s task, then ingress.recorded (the text\'s hash, a secret redacted) precedes ingress.bound append_note on it', async () => {
    const taskId = await task(agent);
    const conversation = uniqueName('conv');
    const canary = `sk-${'q7'.repeat(16)}`;
    const reply = await handler().submit(await message(agent, { message_id: 'm-1', conversation_id: conversation, kind: 'note', text: `the CI key is ${canary}, retry after 5`, explicit_task_ref: taskId }));
    expect(reply).toMatchObject({ resolution: 'append_note', task_id: taskId, duplicate: false });
    const events = await streamOf(agent, conversation);
    expect(events.map((e) => e.event_type)).toEqual(['ingress.recorded', 'ingress.bound']);
    expect(events[0]!.payload).toMatchObject({ ingress_id: reply.ingress_id, principal_id: agent.id, text_sha256: reply.text_sha256, explicit_task_ref: taskId });
    // the log holds no body, and what is kept as text has the secret masked
    expect(JSON.stringify(events)).not.toContain('retry after 5');
    const kept = [...texts.keys()].find((text) => text.includes('retry after 5'));
    expect(kept).toBeDefined();
    expect(kept).not.toContain(canary);
  });

  it('given a crash after the record, when the message is delivered again, then it is bound once; a third send is a duplicate', async () => {
    const taskId = await task(agent);
    const conversation = uniqueName('conv');
    const crashing = killedBeforeBinding('killed between record and bind');
    const sent = await message(agent, { message_id: 'm-1', conversation_id: conversation, kind: 'correction', text: 'use the staging database', explicit_task_ref: taskId });
    await expect(handler(crashing).submit(sent)).rejects.toBeInstanceOf(Crash);
    expect((await streamOf(agent, conversation)).map((e) => e.event_type)).toEqual(['ingress.recorded']);
    const again = await handler().submit(sent);
    const third = await handler().submit(sent);
    expect(again).toMatchObject({ resolution: 'append_note', task_id: taskId, duplicate: false });
    expect(third).toEqual({ ...again, duplicate: true });
    expect((await streamOf(agent, conversation)).map((e) => e.event_type)).toEqual(['ingress.recorded', 'ingress.bound']);
  });

  it('given another principal\'s task, an unknown reply, or a reused message_id, then a stable code and nothing more recorded', async () => {
    const theirs = await task(other);
    const conversation = uniqueName('conv');
    const codeOf = (promise: Promise<unknown>) => promise.then(() => 'none', (error: { code?: string }) => error.code);
    expect(await codeOf(handler().submit(await message(agent, { message_id: 'm-1', conversation_id: conversation, kind: 'note', text: 'stop', explicit_task_ref: theirs })))).toBe('INGRESS_MESSAGE_TASK_UNKNOWN');
    expect(await codeOf(handler().submit(await message(agent, { message_id: 'm-1', conversation_id: conversation, kind: 'note', text: 'stop', reply_to_ref: 'msg-nope' })))).toBe('INGRESS_MESSAGE_REPLY_UNKNOWN');
    expect(await streamOf(agent, conversation)).toEqual([]);
    await handler().submit(await message(agent, { message_id: 'm-1', conversation_id: conversation, kind: 'chat', text: 'hello' }));
    expect(await codeOf(handler().submit(await message(agent, { message_id: 'm-1', conversation_id: conversation, kind: 'chat', text: 'hello again' })))).toBe('INGRESS_MESSAGE_REUSED');
    expect((await streamOf(agent, conversation)).length).toBe(2);
  });

  it('given another principal\'s task, then a director may send a message about it, and an agent holding the director role may not', async () => {
    const theirs = await task(other);
    const director = await registerPrincipal(checked, { type: 'user', roles: ['director'] });
    const agentDirector = await registerPrincipal(checked, { type: 'agent', roles: ['director'] });
    expect(await handler().submit(await message(director, { message_id: 'm-1', conversation_id: uniqueName('conv'), kind: 'control', text: 'hold', explicit_task_ref: theirs }))).toMatchObject({ resolution: 'control', task_id: theirs });
    await expect(handler().submit(await message(agentDirector, { message_id: 'm-1', conversation_id: uniqueName('conv'), kind: 'control', text: 'hold', explicit_task_ref: theirs }))).rejects.toMatchObject({ code: 'INGRESS_MESSAGE_TASK_UNKNOWN' });
  });

  it('given the focus moved across two tasks and the focused one ended, then a message naming none is pending_disambiguation; a reply binds to the replied task', async () => {
    const [first, second] = [await task(agent, 'mark-task-ready'), await task(agent, 'mark-task-ready')];
    const conversation = uniqueName('conv');
    const third = await task(agent, 'mark-task-ready');
    const a = await handler().submit(await message(agent, { message_id: 'm-1', conversation_id: conversation, kind: 'note', text: 'one', explicit_task_ref: first }));
    await handler().submit(await message(agent, { message_id: 'm-2', conversation_id: conversation, kind: 'note', text: 'two', explicit_task_ref: second }));
    await handler().submit(await message(agent, { message_id: 'm-3', conversation_id: conversation, kind: 'note', text: 'three', explicit_task_ref: third }));
    // the focus is the third task: a message naming nothing goes there
    expect(await handler().submit(await message(agent, { message_id: 'm-4', conversation_id: conversation, kind: 'control', text: 'pause' }))).toMatchObject({ resolution: 'control', task_id: third });
    // when the third task ends (as its log says, not a projection)
    const head = await checked.head(third);
    const state = fold(taskDecider, (await checked.read(third)).map(({ event }) => ({ type: event.event_type, data: event.payload })));
    const [cancelled] = taskDecider.decide({ type: 'cancel-task', data: { reason: 'superseded by the first two' }, metadata: { now: new Date().toISOString() } } as TaskCommand, state);
    await checked.append(third, [serviceDraft({ key: `${third}:end`, eventType: cancelled!.type, entityType: 'task', entityId: third, occurredAt: new Date().toISOString(), actorId: INGRESS, payload: cancelled!.data as object, causationId: null, correlationId: third })], head.taskSeq);
    const ambiguous = await handler().submit(await message(agent, { message_id: 'm-5', conversation_id: conversation, kind: 'note', text: 'and also this' }));
    expect(ambiguous).toMatchObject({ resolution: 'pending_disambiguation', candidates: [first, second].sort() });
    expect(ambiguous.task_id).toBeUndefined();
    expect(await handler().submit(await message(agent, { message_id: 'm-6', conversation_id: conversation, kind: 'answer', text: 'yes', reply_to_ref: a.ingress_id }))).toMatchObject({ resolution: 'append_note', task_id: first });
  });

  it('given an answer and a task of the conversation awaiting approval, then it binds as approval on that task, ahead of the focus; a note still goes to the focus', async () => {
    const approver = await sealedAs(await openStore(false), DEFAULT_SERVICE_PRINCIPALS.approval);
    const [held, focused] = [await task(agent, 'mark-task-ready', 'start-task'), await task(agent, 'mark-task-ready', 'start-task')];
    const approvalId = await requestApproval(approver, DEFAULT_SERVICE_PRINCIPALS.approval, held);
    const conversation = uniqueName('conv');
    await handler().submit(await message(agent, { message_id: 'm-1', conversation_id: conversation, kind: 'note', text: 'about the held one', explicit_task_ref: held }));
    await handler().submit(await message(agent, { message_id: 'm-2', conversation_id: conversation, kind: 'note', text: 'now this one', explicit_task_ref: focused }));
    // when the sender answers without naming a task
    const answer = await handler().submit(await message(agent, { message_id: 'm-3', conversation_id: conversation, kind: 'answer', text: 'yes, go ahead with the cleanup' }));
    // then the answer is bound to the approval it answers, which it names, and resolves nothing
    expect(answer).toMatchObject({ resolution: 'approval', task_id: held, candidates: [held] });
    expect(answer.rationale).toContain(approvalId);
    expect((await checked.read(held)).map(({ event }) => event.event_type)).not.toContain('approval.granted');
    expect(await handler().submit(await message(agent, { message_id: 'm-4', conversation_id: conversation, kind: 'note', text: 'unrelated' }))).toMatchObject({ resolution: 'append_note', task_id: focused });
  });

  it('given an approval.requested forged onto the focus task by a service that may not author it, then an answer is a note on the focus, not an approval', async () => {
    const forger = await sealedAs(await openStore(false), DEFAULT_SERVICE_PRINCIPALS.orchestrator);
    const focused = await task(agent, 'mark-task-ready', 'start-task');
    await requestApproval(forger, DEFAULT_SERVICE_PRINCIPALS.orchestrator, focused);
    const conversation = uniqueName('conv');
    await handler().submit(await message(agent, { message_id: 'm-1', conversation_id: conversation, kind: 'note', text: 'on it', explicit_task_ref: focused }));
    expect(await handler().submit(await message(agent, { message_id: 'm-2', conversation_id: conversation, kind: 'answer', text: 'yes' }))).toMatchObject({ resolution: 'append_note', task_id: focused });
  });

  it('given a note naming an ended task, then it starts a new task of that task\'s owner anchored on the outcome (never a reopening), and the focus moves to it', async () => {
    const ended = await task(agent, 'mark-task-ready', 'start-task', 'complete-task');
    const conversation = uniqueName('conv');
    const reply = await handler().submit(await message(agent, { message_id: 'm-1', conversation_id: conversation, kind: 'note', text: 'now do the same for staging', explicit_task_ref: ended }));
    // then: bound start_new_root on a task derived from the message, which the log holds, started, with the continuation anchor
    const newTaskId = followUpTaskId(reply.ingress_id);
    expect(reply).toMatchObject({ resolution: 'start_new_root', task_id: newTaskId, duplicate: false });
    const started = (await checked.read(newTaskId)).map(({ event }) => event);
    expect(started.map((event) => event.event_type)).toEqual(['task.created', 'task.marked_ready', 'task.started']);
    const anchor = { anchor_task_id: ended, anchor_kind: 'completed_outcome', outcome_status: 'completed', selection_reason: `explicit task ref ${ended}` };
    expect(started[0]!.payload).toMatchObject({ owner_principal_id: agent.id, task_contract_ref: `ingress:${reply.ingress_id}`, policy_profile_ref: 'local_edit_allowed@1', continuation_anchor: anchor });
    expect(JSON.stringify(started)).not.toContain('now do the same for staging');
    const bound = (await streamOf(agent, conversation)).find((event) => event.event_type === 'ingress.bound')!;
    expect(bound.payload).toMatchObject({ resolution: 'start_new_root', task_id: newTaskId, continuation_anchor: anchor });
    // the ended task was not touched
    expect((await checked.read(ended)).map(({ event }) => event.event_type).at(-1)).toBe('task.completed');
    // and a message naming nothing now goes to the new task
    expect(await handler().submit(await message(agent, { message_id: 'm-2', conversation_id: conversation, kind: 'note', text: 'use the same flags' }))).toMatchObject({ resolution: 'append_note', task_id: newTaskId });
    // a control word on the ended task starts nothing
    expect(await handler().submit(await message(agent, { message_id: 'm-3', conversation_id: conversation, kind: 'control', text: 'stop', explicit_task_ref: ended }))).toMatchObject({ resolution: 'chat_only' });
  });

  it('given a crash after the follow-up task was started, when the message is delivered again, then the task is started once and the message bound once', async () => {
    const ended = await task(agent, 'mark-task-ready', 'start-task', 'complete-task');
    const conversation = uniqueName('conv');
    const crashing = killedBeforeBinding('killed between starting the task and binding');
    const sent = await message(agent, { message_id: 'm-1', conversation_id: conversation, kind: 'correction', text: 'it was the other bucket', explicit_task_ref: ended });
    await expect(handler(crashing).submit(sent)).rejects.toBeInstanceOf(Crash);
    const again = await handler().submit(sent);
    expect(again).toMatchObject({ resolution: 'start_new_root', duplicate: false });
    expect((await checked.read(again.task_id!)).map(({ event }) => event.event_type)).toEqual(['task.created', 'task.marked_ready', 'task.started']);
    expect((await streamOf(agent, conversation)).map((e) => e.event_type)).toEqual(['ingress.recorded', 'ingress.bound']);
  });

  it('given a crash half way through starting the follow-up task (task.created stored alone), when the message is delivered again, then the task is finished from where it stopped', async () => {
    const ended = await task(agent, 'mark-task-ready', 'start-task', 'complete-task');
    const halfway = logWith({
      appendTask: async (id, drafts, seq) => {
        await new EventStoreIngressLog(checked).appendTask(id, drafts.slice(0, 1), seq);
        throw new Crash('killed after the first event of the new task');
      },
    });
    const sent = await message(agent, { message_id: 'm-1', conversation_id: uniqueName('conv'), kind: 'note', text: 'and the docs', explicit_task_ref: ended });
    await expect(handler(halfway).submit(sent)).rejects.toBeInstanceOf(Crash);
    const again = await handler().submit(sent);
    expect((await checked.read(again.task_id!)).map(({ event }) => event.event_type)).toEqual(['task.created', 'task.marked_ready', 'task.started']);
  });

  it('given a note asking for a fork of a live task, then a child task of its owner names it as parent, the parent is untouched, and the same message_id without the fork is refused', async () => {
    const parent = await task(agent, 'mark-task-ready', 'start-task');
    const conversation = uniqueName('conv');
    const fields = { message_id: 'm-1', conversation_id: conversation, kind: 'note' as const, text: 'try the other approach in parallel', explicit_task_ref: parent };
    const reply = await handler().submit(await message(agent, { ...fields, fork: true }));
    expect(reply).toMatchObject({ resolution: 'fork_child', task_id: followUpTaskId(reply.ingress_id) });
    const started = (await checked.read(reply.task_id!)).map(({ event }) => event);
    expect(started.map((event) => event.event_type)).toEqual(['task.created', 'task.marked_ready', 'task.started']);
    expect(started[0]!.payload).toMatchObject({ owner_principal_id: agent.id, parent_task_id: parent, task_contract_ref: `ingress:${reply.ingress_id}` });
    expect(started[0]!.payload).not.toHaveProperty('continuation_anchor');
    const bound = (await streamOf(agent, conversation)).find((event) => event.event_type === 'ingress.bound')!;
    expect(bound.payload).toMatchObject({ resolution: 'fork_child', task_id: reply.task_id, parent_task_id: parent });
    expect((await checked.read(parent)).map(({ event }) => event.event_type)).toEqual(['task.created', 'task.marked_ready', 'task.started']);
    // the same message_id without the fork is another message: refused, nothing more recorded
    await expect(handler().submit(await message(agent, fields))).rejects.toMatchObject({ code: 'INGRESS_MESSAGE_REUSED' });
    expect(await handler().submit(await message(agent, { ...fields, fork: true }))).toMatchObject({ resolution: 'fork_child', task_id: reply.task_id, duplicate: true });
  });

  it('given a director\'s follow-up on an agent\'s ended task, then the new task is the agent\'s, and names who asked', async () => {
    const ended = await task(other, 'mark-task-ready', 'start-task', 'complete-task');
    const director = await registerPrincipal(checked, { type: 'user', roles: ['director'] });
    const reply = await handler().submit(await message(director, { message_id: 'm-1', conversation_id: uniqueName('conv'), kind: 'note', text: 'also rotate the keys', explicit_task_ref: ended }));
    expect(reply).toMatchObject({ resolution: 'start_new_root' });
    const [created] = (await checked.read(reply.task_id!)).map(({ event }) => event);
    expect(created!.payload['owner_principal_id']).toBe(other.id);
    expect(created!.payload['goal']).toContain(director.id);
  });

  it('given a message left pending between two tasks, when a reply to it names one of them, then it is bound there too; a reply naming another task leaves it pending', async () => {
    const [one, two, three] = [await task(agent, 'mark-task-ready', 'start-task'), await task(agent, 'mark-task-ready', 'start-task'), await task(agent, 'mark-task-ready', 'start-task')];
    const conversation = uniqueName('conv');
    for (const [n, id] of [one, two, three].entries()) await handler().submit(await message(agent, { message_id: `m-${n}`, conversation_id: conversation, kind: 'note', text: `on ${n}`, explicit_task_ref: id }));
    await endTask(three);
    const pending = await handler().submit(await message(agent, { message_id: 'm-p', conversation_id: conversation, kind: 'control', text: 'pause it' }));
    expect(pending).toMatchObject({ resolution: 'pending_disambiguation', candidates: [one, two].sort() });
    // when: a reply to it names a fourth task, not one of its candidates: it stays pending
    const four = await task(agent, 'mark-task-ready', 'start-task');
    await handler().submit(await message(agent, { message_id: 'm-x', conversation_id: conversation, kind: 'note', text: 'unrelated', explicit_task_ref: four, reply_to_ref: pending.ingress_id }));
    expect(bindingsOf(await streamOf(agent, conversation), pending.ingress_id)).toEqual([['pending_disambiguation', undefined]]);
    // when: a reply to it names one of its candidates
    const reply = await handler().submit(await message(agent, { message_id: 'm-r', conversation_id: conversation, kind: 'note', text: 'the second one', explicit_task_ref: two, reply_to_ref: pending.ingress_id }));
    // then: the reply is a note on it, and the pending message is bound to it as the control it asked for, naming the reply
    expect(reply).toMatchObject({ resolution: 'append_note', task_id: two });
    const events = await streamOf(agent, conversation);
    expect(bindingsOf(events, pending.ingress_id)).toEqual([['pending_disambiguation', undefined], ['control', two]]);
    expect(events.at(-1)!.payload['rationale']).toContain(reply.ingress_id);
    // and a resend of the reply changes nothing
    expect(await handler().submit(await message(agent, { message_id: 'm-r', conversation_id: conversation, kind: 'note', text: 'the second one', explicit_task_ref: two, reply_to_ref: pending.ingress_id }))).toMatchObject({ duplicate: true });
    expect((await streamOf(agent, conversation)).length).toBe(events.length);
  });

  it('given a crash between the reply\'s binding and the pending message\'s, when the reply is sent again, then the pending message is bound once', async () => {
    const [one, two, three] = [await task(agent, 'mark-task-ready', 'start-task'), await task(agent, 'mark-task-ready', 'start-task'), await task(agent, 'mark-task-ready', 'start-task')];
    const conversation = uniqueName('conv');
    for (const [n, id] of [one, two, three].entries()) await handler().submit(await message(agent, { message_id: `m-${n}`, conversation_id: conversation, kind: 'note', text: `on ${n}`, explicit_task_ref: id }));
    await endTask(three);
    const pending = await handler().submit(await message(agent, { message_id: 'm-p', conversation_id: conversation, kind: 'note', text: 'and this' }));
    const firstOnly = logWith({
      appendIngress: async (id, drafts, seq) => {
        const inner = new EventStoreIngressLog(checked);
        if (drafts.length < 2) return inner.appendIngress(id, drafts, seq);
        await inner.appendIngress(id, drafts.slice(0, 1), seq);
        throw new Crash('killed between the two bindings');
      },
    });
    const sent = await message(agent, { message_id: 'm-r', conversation_id: conversation, kind: 'note', text: 'the first', explicit_task_ref: one, reply_to_ref: pending.ingress_id });
    await expect(handler(firstOnly).submit(sent)).rejects.toBeInstanceOf(Crash);
    expect(bindingsOf(await streamOf(agent, conversation), pending.ingress_id)).toEqual([['pending_disambiguation', undefined]]);
    expect(await handler().submit(sent)).toMatchObject({ resolution: 'append_note', task_id: one, duplicate: true });
    expect(await handler().submit(sent)).toMatchObject({ duplicate: true });
    expect(bindingsOf(await streamOf(agent, conversation), pending.ingress_id)).toEqual([['pending_disambiguation', undefined], ['append_note', one]]);
  });

  it('given a binding forged into the conversation by another service, then ingress binds as if it were not there', async () => {
    const [mine, decoy] = [await task(agent), await task(agent)];
    const conversation = uniqueName('conv');
    await handler().submit(await message(agent, { message_id: 'm-1', conversation_id: conversation, kind: 'note', text: 'on mine', explicit_task_ref: mine }));
    // when the orchestrator's credential (checking nothing) appends an ingress.bound moving the focus to the decoy
    const forger = await sealedAs(await openStore(false), DEFAULT_SERVICE_PRINCIPALS.orchestrator);
    const stream = conversationStreamId(agent.id, conversation);
    const forgedRecord = (await streamOf(agent, conversation))[0]!.payload;
    const at = new Date().toISOString();
    const forged = serviceDraft({
      key: uniqueName('forged'),
      eventType: 'ingress.bound',
      entityType: 'ingress',
      entityId: stream,
      occurredAt: at,
      actorId: INGRESS,
      payload: { ingress_id: 'msg-forged', resolution: 'append_note', task_id: decoy, candidates: [], rationale: 'forged', bound_by: INGRESS, at },
      causationId: null,
      correlationId: stream,
    });
    const recordForged = { ...forged, event_id: uniqueName('forged'), idempotency_key: uniqueName('forged'), event_type: 'ingress.recorded', payload: { ...forgedRecord, ingress_id: 'msg-forged', at } };
    await forger.appendToEntity('ingress', stream, [recordForged, forged], (await forger.headOfEntity('ingress', stream)).taskSeq);
    // then the next message naming nothing still goes to the task the real bindings focused
    const next: IngressMessageReply = await handler().submit(await message(agent, { message_id: 'm-2', conversation_id: conversation, kind: 'note', text: 'more' }));
    expect(next).toMatchObject({ resolution: 'append_note', task_id: mine });
    // and, read with authorship checked, the stream holds ingress's four events only
    expect((await streamOf(agent, conversation)).map((e) => [e.event_type, e.payload['ingress_id'] === 'msg-forged'])).toEqual([
      ['ingress.recorded', false],
      ['ingress.bound', false],
      ['ingress.recorded', false],
      ['ingress.bound', false],
    ]);
  });
});
