import { conversationStreamId } from '@writ/runtime';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationStory, messageEvent } from '../test/conversation.fixture.js';
import { actionRequest, storyIds, taskCompleted, taskOpening, type StoryIds } from '../test/governed-path.fixture.js';
import { createRig, http, type Rig } from '../test/projection-rig.js';
import { readerToken, registerReader, type Reader } from '../test/readers.js';
import { rebuildIntoFreshSchema } from './bootstrap.js';
import type { ProjectionApp } from './bootstrap.js';

/**
 * The conversation views (issue 17, exit criteria 13 and 16) against the real
 * NATS and Postgres: focus and session history folded from ingress's
 * records and bindings alone, served to their principal only, and rebuilt
 * identical from the log; a binding on another stream, a second binding of a
 * bound message, and a record naming another sender on a stream move nothing.
 */
describe('conversation views: focus and history from ingress records and bindings', () => {
  let rig: Rig;
  let app: ProjectionApp;
  let one: StoryIds;
  let two: StoryIds;
  let alice: Reader;
  let bob: Reader;
  const conversation = 'conv-main';
  let streamA: string;

  beforeAll(async () => {
    rig = await createRig();
    app = await rig.start();
    const tag = uniqueName('cv');
    one = storyIds(`${tag}-1`);
    two = { ...storyIds(`${tag}-2`), principal: one.principal };
    alice = await registerReader(rig, one.principal, 'agent', ['executor']);
    bob = await registerReader(rig, uniqueName('agent'), 'agent', ['executor']);
    streamA = conversationStreamId(alice.id, conversation);
    const streamB = conversationStreamId(bob.id, conversation);
    const last = await rig.append([
      ...taskOpening(one, actionRequest(one)),
      ...taskOpening(two, actionRequest(two)),
      ...conversationStory(streamA, alice.id, conversation, [
        { ingress: `msg-${tag}-1`, explicit: one.task, bind: { resolution: 'append_note', task_id: one.task } },
        { ingress: `msg-${tag}-2`, explicit: two.task, bind: { resolution: 'append_note', task_id: two.task } },
        { ingress: `msg-${tag}-3`, bind: { resolution: 'pending_disambiguation', candidates: [one.task, two.task] } },
        { ingress: `msg-${tag}-4` },
      ]),
      // forgeries ingress never writes: a second binding of a bound message, a binding of it on another stream,
      // and a record naming alice's conversation on bob's stream
      messageEvent(streamA, 'ingress.bound', { ingress_id: `msg-${tag}-2`, resolution: 'control', task_id: one.task, candidates: [], rationale: 'again', bound_by: 'writ-ingress' }, 40, `again-${tag}`),
      ...conversationStory(streamB, bob.id, conversation, [{ ingress: `msg-${tag}-b1`, bind: { resolution: 'chat_only' } }], 50),
      messageEvent(streamB, 'ingress.bound', { ingress_id: `msg-${tag}-1`, resolution: 'control', task_id: two.task, candidates: [], rationale: 'elsewhere', bound_by: 'writ-ingress' }, 60, `elsewhere-${tag}`),
      messageEvent(streamB, 'ingress.recorded', { ingress_id: `msg-${tag}-x`, conversation_id: conversation, principal_id: alice.id, source_channel: 'nats', text_sha256: 'f'.repeat(64) }, 61),
      // the focused task ends
      taskCompleted(two, 70),
    ]);
    await rig.caughtUp(last);
  });

  afterAll(async () => {
    await rig?.dispose();
  });

  it('given bindings and the focused task completed, then the focus is released with its outcome kept, pending and unbound messages listed', async () => {
    const { status, body } = await http(app, `/v1/focus?principal_id=${alice.id}`);
    expect(status).toBe(200);
    expect(body['focus']).toEqual([
      expect.objectContaining({
        principal_id: alice.id,
        conversation_id: conversation,
        stream_id: streamA,
        bound_focus_task_id: two.task,
        focus_task_id: null,
        last_outcome_task_id: two.task,
        pending_ingress_ids: [expect.stringMatching(/-3$/)],
        unbound_ingress_ids: [expect.stringMatching(/-4$/)],
        message_count: 4,
      }),
    ]);
  });

  it('given the conversation, then its history is each message in order with where it was bound; forgeries changed no row', async () => {
    const { body } = await http(app, `/v1/conversations/${conversation}/history?principal_id=${alice.id}`);
    const messages = body['messages'] as Array<Record<string, unknown>>;
    expect(messages.map((m) => [m['resolution'], m['task_id']])).toEqual([
      ['append_note', one.task],
      ['append_note', two.task],
      ['pending_disambiguation', null],
      [null, null],
    ]);
    expect(messages[2]?.['candidates']).toEqual([one.task, two.task]);
    expect(messages.every((m) => m['stream_id'] === streamA && m['text'] === null)).toBe(true);
    const page = await http(app, `/v1/conversations/${conversation}/history?principal_id=${alice.id}&after=${String(messages[1]?.['conversation_seq'])}&limit=1`);
    expect((page.body['messages'] as unknown[]).length).toBe(1);
  });

  it('given agents, then each reads its own conversations only: naming another is 403, and the same conversation id of another reads as its own', async () => {
    const asAlice = { authorization: `Bearer ${await readerToken(rig, alice)}` };
    const asBob = { authorization: `Bearer ${await readerToken(rig, bob)}` };
    expect(((await http(app, '/v1/focus', { headers: asAlice })).body['focus'] as unknown[]).length).toBe(1);
    expect(await http(app, `/v1/focus?principal_id=${alice.id}`, { headers: asBob })).toMatchObject({ status: 403, body: { code: 'PROJECTION_SCOPE_FORBIDDEN' } });
    expect(await http(app, `/v1/conversations/${conversation}/history?principal_id=${alice.id}`, { headers: asBob })).toMatchObject({ status: 403 });
    const own = (await http(app, `/v1/conversations/${conversation}/history`, { headers: asBob })).body['messages'] as Array<Record<string, unknown>>;
    expect(own.map((m) => [m['principal_id'], m['resolution']])).toEqual([[bob.id, 'chat_only']]);
  });

  it('given the conversation rows, when the projection is rebuilt from the log alone, then focus and history are identical (invariant 2, criterion 16)', async () => {
    const report = await rebuildIntoFreshSchema(rig.config);
    expect(report.views.filter((v) => !v.match)).toEqual([]);
    expect(report.views.find((v) => v.view === 'conversation_focus')?.live.rows).toBe(2);
    expect(report.views.find((v) => v.view === 'conversation_messages')?.live.rows).toBe(5);
    expect(report.identical).toBe(true);
  });
});
