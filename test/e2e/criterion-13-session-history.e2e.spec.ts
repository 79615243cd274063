import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportEd25519PrivateJwk } from '@writ/crypto';
import { conversationStreamId } from '@writ/runtime';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type Principal, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * Seed 004 exit criterion 13 ("session history is demoted to a projection"),
 * issue 17, end to end: the seven built services on the real NATS, Postgres
 * and Docker. An agent's messages (one carrying a secret-shaped canary) are
 * recorded by ingress as a hash in the log and a redacted text in the
 * artifact bucket; `writ history` shows the conversation, each message with
 * where it was bound. The history is only a projection: with its rows and the
 * focus rows wiped or corrupted in Postgres, ingress still binds the next
 * message from the log, and `writ projections rebuild` gives the history back
 * from the log alone. The canary is in no event, no row, no stored text.
 */

const STEP_MS = 120_000;
const CONVERSATION = 'conv-history';
const PG_URL = process.env['WRIT_E2E_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/writ_test';
/** Shaped like an API key, so the redaction masks it: it must never be kept. */
const CANARY = `sk-${'c4n4ry'.repeat(4)}${Math.random().toString(16).slice(2, 10)}`;

let stack: Stack;
let keys: string;
let db: pg.Client;

beforeAll(async () => {
  stack = await startStack({ prefix: 'e2esh' });
  keys = await mkdtemp(path.join(tmpdir(), 'writ-e2e-history-'));
  db = new pg.Client({ connectionString: PG_URL });
  await db.connect();
}, 180_000);

stopStackAfterAll(() => stack);

afterAll(async () => {
  await db?.end().catch(() => undefined);
  if (keys !== undefined) await rm(keys, { recursive: true, force: true });
});

async function say(principal: Principal, text: string, args: readonly string[] = []): Promise<{ ingress_id: string; resolution: string; task_id?: string }> {
  const file = path.join(keys, `${principal.id}.jwk.json`);
  await writeFile(file, JSON.stringify(await exportEd25519PrivateJwk(principal.key)), { mode: 0o600 });
  return JSON.parse(await stack.cli(['say', text, '--conversation', CONVERSATION, '--key', file, '--principal', principal.id, ...args, '--json'])) as { ingress_id: string; resolution: string; task_id?: string };
}

interface History {
  readonly messages: Array<{ ingress_id: string; conversation_seq: number; resolution: string | null; task_id: string | null; text: string | null }>;
}

async function historyOf(agent: Principal, count: number): Promise<History> {
  const deadline = Date.now() + STEP_MS;
  for (;;) {
    const { status, body } = await stack.http(`/v1/conversations/${CONVERSATION}/history`, { as: agent });
    if (status === 200 && (body as History).messages.length === count && (body as History).messages.every((m) => m.resolution !== null)) return body as History;
    if (Date.now() > deadline) throw new Error(`the history did not reach ${count} bound messages: ${status} ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

it(
  'exit criterion 13: the session history is a projection of ingress records and bindings, shown by writ history, never read to decide (ingress binds from the log with it wiped), rebuilt from the log, and holds no secret',
  async () => {
    // given: an agent's open task
    const agent = await stack.registerPrincipal({ type: 'agent', roles: ['executor'], extractable: true });
    const holder = stack.actionRequest(agent, { target_resources: ['scratch'], params: { argv: ['rm', '-rf', 'scratch'] }, reversibility_hint: 'irreversible', reason: 'clean up' });
    await stack.submit(agent, holder);
    const taskId = String((await stack.waitForAction(holder.action_request_id, { statuses: ['awaiting_approval'], timeoutMs: STEP_MS })).task_id);

    // when: it sends a note about the task carrying a secret, and a chat line
    const note = await say(agent, `deploy with ${CANARY} after the freeze`, ['--task', taskId]);
    expect(note).toMatchObject({ resolution: 'append_note', task_id: taskId });
    await say(agent, 'thanks', ['--kind', 'chat']);

    // then: writ history shows the conversation in order, where each message went, the secret masked
    const history = await historyOf(agent, 2);
    expect(history.messages.map((m) => [m.resolution, m.task_id])).toEqual([
      ['append_note', taskId],
      ['chat_only', null],
    ]);
    expect(history.messages[0]?.text).toContain('after the freeze');
    expect(history.messages[0]?.text).not.toContain(CANARY);
    const shown = await stack.cli(['history', CONVERSATION, '--of', agent.id, '--url', stack.apiUrl]);
    expect(shown).toContain(`[append_note ${taskId}]`);
    expect(shown).toContain('[chat_only]');
    expect(shown).not.toContain(CANARY);
    // and the canary is in no message of the conversation's stream (read raw) and no row
    const raw = await stack.streamMessages(stack.streams.events, stack.subject(`evt.ingress.${conversationStreamId(agent.id, CONVERSATION)}`));
    expect(raw.length).toBe(4);
    expect(raw.filter((message) => Buffer.from(message.data).toString('utf8').includes(CANARY))).toEqual([]);
    expect(raw.filter((message) => Buffer.from(message.data).toString('utf8').includes('after the freeze'))).toEqual([]);
    const rows = await db.query(`SELECT coalesce(string_agg(row_to_json(m)::text, ','), '') AS rows FROM "${stack.pgSchema}"."conversation_messages" m`);
    expect(String(rows.rows[0].rows)).not.toContain(CANARY);

    // when: the history and focus rows are wiped and corrupted, as a broken or tampered projection would be
    await db.query(`DELETE FROM "${stack.pgSchema}"."conversation_messages"`);
    await db.query(`UPDATE "${stack.pgSchema}"."conversation_focus" SET bound_focus_task_id = 'task-forged', message_count = 999`);
    // then: ingress still binds the next message from the log (the focus its bindings set), not from the projection
    expect(await say(agent, 'and keep the backups')).toMatchObject({ resolution: 'append_note', task_id: taskId });

    // when: the projection is rebuilt from the log alone, then the tampering is detected (nothing swapped without --force)
    await expect(stack.cli(['projections', 'rebuild', '--json'])).rejects.toThrow(/PROJECTION_REBUILD_MISMATCH/);
    // and, forced for those two views, the whole history is back, in order
    const job = JSON.parse(await stack.cli(['projections', 'rebuild', '--view', 'conversation_messages', '--view', 'conversation_focus', '--force', '--json'])) as { state: string; comparisons: Array<{ view: string; match: boolean }> };
    expect(job.state).toBe('swapped');
    expect(job.comparisons.filter((comparison) => !comparison.match).map((comparison) => comparison.view).sort()).toEqual(['conversation_focus', 'conversation_messages']);
    const rebuilt = await historyOf(agent, 3);
    expect(rebuilt.messages.map((m) => [m.ingress_id, m.resolution, m.task_id])).toEqual([
      [note.ingress_id, 'append_note', taskId],
      [history.messages[1]?.ingress_id, 'chat_only', null],
      [expect.any(String), 'append_note', taskId],
    ]);
    expect(rebuilt.messages.map((m) => m.conversation_seq)).toEqual([1, 3, 5]);
    expect((await stack.http('/v1/focus', { as: agent })).body).toMatchObject({ focus: [{ conversation_id: CONVERSATION, focus_task_id: taskId, message_count: 3 }] });
  },
  6 * STEP_MS,
);
