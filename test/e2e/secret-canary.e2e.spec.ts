import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DeliverPolicy } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { SIGNED_REQUESTS, signRequest } from '@writ/runtime';
import { exportEd25519PrivateJwk } from '@writ/crypto';
import { waitFor } from '@writ/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type Principal, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * Issue 17, "Done when": a secret canary placed in a workspace file, an artifact and a
 * belief never appears in a context pack, a log line, a projection row or an event; the
 * test scans every persisted byte it can reach. Through the seven running services (the
 * executor runs real Docker cells): the canary is a secret of the executor's secret store
 * (WRIT_SECRETS_DIR, one 0600 file per handle, outside everything scanned); a command
 * granted its handle writes it into a workspace file and prints it (captured as
 * artifacts), a later command reads that file back without the handle (after the executor
 * restarted: what its cell held is known from the log, not from memory), and the agent
 * tries to make it a belief (by value, and in a claim). Then every message of every
 * stream of the NATS account (events, commands, ingress, dead letters, the artifact
 * object store's chunks, the KV buckets), every row of every table of the stack's
 * Postgres schema, every log file the stack wrote, every file under the stack's directory
 * (keys, credentials, the cells' workspaces and per-use records) but the workspace file it
 * was put in, and every attempt's context pack are scanned for the canary in every
 * encoding it could be stored in. The secret store is a directory of its own, outside all
 * of them: it is the one place the value must be.
 */

const STEP_MS = 90_000;
/** Shaped like an API key (as a real credential would be), unique to this run. */
const CANARY = `sk-wcanary${[...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
const HANDLE = 'canary';

let stack: Stack;
let secrets: string;

beforeAll(async () => {
  // The secret store: the executor reads the value at each use; nothing else can see this directory.
  secrets = await mkdtemp(path.join(tmpdir(), 'writ-e2e-secrets-'));
  await writeFile(path.join(secrets, HANDLE), `${CANARY}\n`, { mode: 0o600 });
  stack = await startStack({ prefix: 'e2ecanary', serviceEnv: { executor: { WRIT_SECRETS_DIR: secrets } } });
}, 180_000);

stopStackAfterAll(() => stack);

afterAll(async () => {
  if (secrets !== undefined) await rm(secrets, { recursive: true, force: true });
});

/**
 * Every way the canary's bytes could be written down: as is (and JSON-escaped, the same for
 * its characters), hex in either case (Postgres bytea, digests of nothing), and base64 /
 * base64url at each of the three alignments it could have inside a longer encoded value
 * (a JWS payload, a header): the part of the encoding its neighbours cannot change.
 */
function encodedForms(secret: string): Map<string, string> {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = new Map<string, string>([
    ['raw', secret],
    ['json', JSON.stringify(secret).slice(1, -1)],
    ['hex', bytes.toString('hex')],
    ['HEX', bytes.toString('hex').toUpperCase()],
  ]);
  for (const shift of [0, 1, 2]) {
    const shifted = Buffer.concat([Buffer.alloc(shift, 0x41), bytes]);
    for (const encoding of ['base64', 'base64url'] as const) {
      const text = shifted.toString(encoding).replace(/=+$/, '');
      // The first block holds filler when shifted; the last may hold the next byte of a longer value.
      forms.set(`${encoding}@${shift}`, text.slice(shift === 0 ? 0 : 4, -4));
    }
  }
  return forms;
}

const FORMS = encodedForms(CANARY);

/** The forms of the canary `text` holds, by name. */
const formsIn = (text: string): string[] => [...FORMS].filter(([, form]) => text.includes(form)).map(([name]) => name);

interface Finding {
  readonly where: string;
  readonly forms: string[];
}

/** Every message of every stream of the account, data and headers, read with an ordered consumer from the first sequence. */
async function scanStreams(): Promise<{ findings: Finding[]; streams: Record<string, number> }> {
  const findings: Finding[] = [];
  const streams: Record<string, number> = {};
  for await (const info of stack.jsm.streams.list()) {
    const name = info.config.name;
    const total = info.state.messages;
    streams[name] = 0;
    if (total === 0) continue;
    const consumer = await stack.js.consumers.get(name, { deliver_policy: DeliverPolicy.All });
    const messages = await consumer.fetch({ max_messages: total, expires: 30_000 });
    for await (const message of messages) {
      streams[name] += 1;
      const headers = message.headers === undefined ? '' : [...message.headers.keys()].map((key) => `${key}: ${message.headers?.values(key).join(', ')}`).join('\n');
      const forms = formsIn(`${Buffer.from(message.data).toString('latin1')}\n${message.subject}\n${headers}`);
      if (forms.length > 0) findings.push({ where: `stream ${name} seq ${message.seq} (${message.subject})`, forms });
      if (streams[name] >= total) break;
    }
  }
  return { findings, streams };
}

/** Every row of every table of the stack's schema, as JSON (bytea as hex: the hex forms catch it). */
async function scanTables(): Promise<{ findings: Finding[]; tables: Record<string, number> }> {
  const findings: Finding[] = [];
  const tables: Record<string, number> = {};
  const listed = await stack.pgQuery<{ table_schema: string; table_name: string }>(
    `SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name`,
    [stack.pgSchema],
  );
  for (const { table_schema: schema, table_name: table } of listed.rows) {
    const rows = await stack.pgQuery<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${schema}"."${table}" t`);
    tables[table] = rows.rows.length;
    for (const [index, { row }] of rows.rows.entries()) {
      const forms = formsIn(row);
      if (forms.length > 0) findings.push({ where: `table ${schema}.${table} row ${index}`, forms });
    }
  }
  return { findings, tables };
}

/** Every file the stack logged to, line by line. */
async function scanLogs(): Promise<{ findings: Finding[]; files: Record<string, number> }> {
  const findings: Finding[] = [];
  const files: Record<string, number> = {};
  for (const name of await readdir(stack.logDir)) {
    const file = path.join(stack.logDir, name);
    if (!(await stat(file)).isFile()) continue;
    const lines = (await readFile(file, 'latin1')).split('\n');
    files[name] = lines.length;
    for (const [index, line] of lines.entries()) {
      const forms = formsIn(line);
      if (forms.length > 0) findings.push({ where: `log ${name}:${index + 1}`, forms });
    }
  }
  return { findings, files };
}

/**
 * Every file under the stack's own directory (keys, principals' credentials, the cells: each
 * task's workspace, its per-use records and journals), but `placed`: the workspace file the
 * canary was written into on purpose. Files a cell's user made unreadable to the test are
 * counted, not read (the executor reads them as that user only).
 */
async function scanStackFiles(root: string, placed: string): Promise<{ findings: Finding[]; read: number; unreadable: string[] }> {
  const findings: Finding[] = [];
  const unreadable: string[] = [];
  let read = 0;
  const walk = async (dir: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      unreadable.push(dir);
      return;
    }
    for (const entry of entries) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(file);
      else if (entry.isFile() && file !== placed) {
        const text = await readFile(file, 'latin1').catch(() => undefined);
        if (text === undefined) {
          unreadable.push(file);
          continue;
        }
        read += 1;
        const forms = formsIn(text);
        if (forms.length > 0) findings.push({ where: `file ${path.relative(root, file)}`, forms });
      }
    }
  };
  await walk(root);
  return { findings, read, unreadable };
}

/** A signed knowledge request of the agent, posted as an agent posts it: the HTTP status and code of the answer. */
async function postBelief(agent: Principal, taskId: string, beliefId: string, belief: Record<string, unknown>): Promise<{ status: number; code?: string }> {
  const payload = {
    task_id: taskId,
    request_id: `req-${beliefId}`,
    change: { op: 'assert', belief: { belief_id: beliefId, scope: `task:${taskId}`, confidence: 0.9, trust_tier: 'observed', evidence_refs: [{ kind: 'observation', id: 'obs-canary' }], ...belief } },
  };
  const signed = await signRequest(SIGNED_REQUESTS.beliefRequest, payload as never, { principalId: agent.id, key: agent.key, now: new Date() });
  const answer = await stack.http(`/v1/tasks/${taskId}/beliefs`, { method: 'POST', headers: { authorization: '', 'content-type': 'application/json' }, body: JSON.stringify({ request_jws: signed.jws }) });
  return { status: answer.status, code: (answer.body as { code?: string }).code };
}

it(
  'a secret canary placed in a workspace file, an artifact and a belief is in no context pack, log line, projection row, event or other stored message',
  async () => {
    // given: a profile that lets commands name the canary's handle, applied by a director
    const director = await stack.registerPrincipal({ type: 'user', roles: ['director'], extractable: true });
    const keyFile = path.join(secrets, '..', `${path.basename(secrets)}-director.jwk.json`);
    await writeFile(keyFile, JSON.stringify(await exportEd25519PrivateJwk(director.key)), { mode: 0o600 });
    const profileId = `canary_${Math.random().toString(16).slice(2, 8)}`;
    const profileFile = path.join(secrets, '..', `${path.basename(secrets)}-profile.json`);
    await writeFile(
      profileFile,
      JSON.stringify({
        id: profileId,
        description: 'Commands in the workspace, with the canary secret handle.',
        action_classes: { execute_command: { outcome: 'allow' }, read_local: { outcome: 'allow' } },
        destructive_commands: 'require_approval',
        ceilings: { secret_handles: [HANDLE] },
      }),
    );
    try {
      await stack.cli(['policy', 'apply', profileFile, '--key', keyFile, '--principal', director.id, '--json']);
    } finally {
      await rm(keyFile, { force: true });
      await rm(profileFile, { force: true });
    }

    // and an agent's task under it, held open by an action awaiting approval (a task whose steps all ended completes)
    const agent = await stack.registerPrincipal({ type: 'agent', roles: ['executor'] });
    const holder = stack.actionRequest(agent, {
      task: { title: 'canary', goal: 'hold a secret in the workspace', policy_profile: profileId, files_owned: ['**'] },
      target_resources: ['scratch'],
      params: { argv: ['rm', '-rf', 'scratch'] },
      reversibility_hint: 'irreversible',
      reason: 'clean up',
    });
    await stack.submit(agent, holder);
    const taskId = String((await stack.waitForAction(holder.action_request_id, { statuses: ['awaiting_approval'], timeoutMs: STEP_MS })).task_id);

    // when: a command granted the handle writes the secret into a workspace file and prints it (stdout, stderr and the file are captured)
    const write = stack.actionRequest(agent, {
      task_id: taskId,
      target_resources: ['canary.txt'],
      params: { argv: ['sh', '-c', `printf '%s' "$WRIT_SECRET_CANARY" > canary.txt && cat canary.txt && echo "token=$WRIT_SECRET_CANARY" >&2`], secret_handle: HANDLE },
      expected_effects: ['canary.txt holds the secret'],
    });
    await stack.submit(agent, write);
    expect(await stack.waitForAction(write.action_request_id, { timeoutMs: STEP_MS })).toMatchObject({ status: 'succeeded' });
    // the secret really is in the workspace file (where it was put: the cell's disk, not a store Writ scans)
    expect(await readFile(stack.workspaceFile(taskId, 'canary.txt'), 'utf8')).toBe(CANARY);

    // and, after the executor restarts (it remembers nothing of the cell's secrets but what the log says), a later command reads the file back without naming the handle
    await stack.killService('executor');
    await stack.startService('executor');
    const read = stack.actionRequest(agent, { task_id: taskId, target_resources: ['canary.txt'], params: { argv: ['cat', 'canary.txt'] }, expected_effects: [], reason: 'read it back' });
    await stack.submit(agent, read);
    expect(await stack.waitForAction(read.action_request_id, { timeoutMs: STEP_MS })).toMatchObject({ status: 'succeeded' });

    // and the agent tries to make it a belief: by value in a secret belief (refused), in a claim (the pattern net), by reference (kept as a name)
    expect(await postBelief(agent, taskId, 'bel-canary-value', { claim: 'the deploy key', structured_assertion: { key: CANARY }, sensitivity: 'secret' })).toEqual({ status: 422, code: 'KNOWLEDGE_SECRET_BY_VALUE' });
    expect((await postBelief(agent, taskId, 'bel-canary-claim', { claim: `the deploy key is ${CANARY}` })).status).toBe(200);
    expect((await postBelief(agent, taskId, 'bel-canary-ref', { claim: 'the deploy key is in the secret store', structured_assertion: { secret_ref: `writ-secret:${HANDLE}` }, sensitivity: 'secret' })).status).toBe(200);

    // and its next action is proposed under a pack compiled from all of it
    const next = stack.actionRequest(agent, { task_id: taskId, params: { argv: ['true'] }, target_resources: ['canary.txt'], expected_effects: [], reason: 'next step' });
    await stack.submit(agent, next);
    const last = await stack.waitForAction(next.action_request_id, { timeoutMs: STEP_MS });
    expect(last.status).toBe('succeeded');
    await stack.waitForRoute(`/v1/attempts/${String(last.attempt_id)}`, (status, body) => status === 200 && typeof body['context_pack_sha256'] === 'string', { as: agent, timeoutMs: STEP_MS });
    // every action receipted and the beliefs folded: nothing of the task is still on its way to a store
    const events = await waitFor(
      async () => {
        const log = await stack.taskEvents(taskId);
        return log.filter((event) => event.event_type === 'receipt.issued').length >= 3 ? log : undefined;
      },
      { what: 'the three receipts', timeoutMs: STEP_MS, intervalMs: 100 },
    );
    const completed = events.filter((event) => event.event_type === 'execution.completed');
    expect(completed).toHaveLength(3);
    // the captured output holds the redaction mark where the secret was, in the action granted the handle and in the one that read the file back
    const bucket = await new Objm(stack.nc).open(stack.bucket);
    const blob = async (sha256: unknown) => new TextDecoder().decode((await bucket.getBlob(`sha256-${String(sha256)}`)) ?? new Uint8Array());
    expect(await blob(completed[0]?.payload['stdout_sha256'])).toBe(`[redacted:${HANDLE}]`);
    expect(await blob(completed[0]?.payload['stderr_sha256'])).toBe(`token=[redacted:${HANDLE}]\n`);
    expect(await blob(completed[1]?.payload['stdout_sha256'])).toBe(`[redacted:${HANDLE}]`);
    await stack.waitForRoute(`/v1/tasks/${taskId}/beliefs`, (status, body) => status === 200 && Array.isArray(body['beliefs']) && body['beliefs'].length === 2, { timeoutMs: STEP_MS });

    // then: every attempt's pack (the holder's and the three actions'), as served, holds no form of it (and the claim's belief is in the last one, redacted)
    const packs: string[] = [];
    for (const attemptId of [...new Set(events.filter((event) => event.event_type === 'context.pack_compiled').map((event) => String(event.attempt_id)))]) {
      const response = await fetch(`${stack.apiUrl}/v1/attempts/${attemptId}/context`, { headers: { authorization: await stack.bearer(agent) } });
      expect(response.status).toBe(200);
      packs.push(await response.text());
    }
    expect(packs).toHaveLength(4);
    expect(packs.flatMap((text, index) => formsIn(text).map((form) => `pack ${index}: ${form}`))).toEqual([]);
    expect(packs[3]).toContain('bel-canary-claim');

    // and no message of any stream, no row of any table, no log line, no file of the stack (but the one it was put in) holds any form of it
    const [streams, tables, logs] = [await scanStreams(), await scanTables(), await scanLogs()];
    const files = await scanStackFiles(path.dirname(stack.keysDir), stack.workspaceFile(taskId, 'canary.txt'));
    // (the scans reached what they should: the events, the bucket's chunks, the projection's rows, every service's log)
    expect(streams.streams[stack.streams.events]).toBeGreaterThan(20);
    expect(streams.streams[`OBJ_${stack.bucket}`]).toBeGreaterThan(0);
    expect(tables.tables['beliefs']).toBeGreaterThan(0);
    expect(Object.keys(logs.files).sort()).toEqual(expect.arrayContaining(['approval.log', 'executor.log', 'ingress.log', 'orchestrator.log', 'policy.log', 'projection.log', 'receipt.log']));
    expect(files.read).toBeGreaterThan(0);
    expect({ findings: [...streams.findings, ...tables.findings, ...logs.findings, ...files.findings], unreadable: files.unreadable }).toEqual({ findings: [], unreadable: [] });
  },
  STEP_MS * 6,
);
