import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ApprovalResolution } from '@writ/contracts';
import { generateEd25519Key, importEd25519PublicJwk, verifyJws } from '@writ/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  actionRow,
  approvalDetail,
  approvalRow,
  deadUrl,
  signedReceiptRow,
  startApi,
  taskPage,
  timeline,
  type FakeApi,
  type Routes,
} from '../test/projection-api.fixture.js';
import { run, type CliIo } from './main.js';

// The read and approval commands against a real HTTP server playing the
// projection's API with canned JSON (the HTTP contract; no NATS needed).

const BIN = fileURLToPath(new URL('../bin/writ.mjs', import.meta.url));
const NOW = new Date('2031-05-01T12:30:00.000Z');
let dir: string;
const servers: FakeApi[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'writ-cli-api-'));
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await rm(dir, { recursive: true, force: true });
});

async function api(routes: Routes): Promise<FakeApi> {
  const server = await startApi(routes);
  servers.push(server);
  return server;
}

/** Runs `writ <argv>` in process, capturing its output. */
async function writ(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => NOW };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('writ action <id>', () => {
  it('prints the status row, or the raw JSON with --json', async () => {
    // given the API knows action ar-1
    const server = await api({ 'GET /v1/actions/ar-1': () => ({ json: actionRow }) });
    // when it is shown, readable and as JSON
    const shown = await writ(['action', 'ar-1', '--url', server.url]);
    const json = await writ(['action', 'ar-1', '--url', server.url, '--json']);
    // then the summary names its status and the ids of what decided and ran it
    expect(shown.code).toBe(0);
    expect(shown.stdout.split('\n')[0]).toBe('action ar-1: succeeded');
    expect(shown.stdout).toMatch(/^ {2}task: +task-1$/m);
    expect(shown.stdout).toMatch(/^ {2}policy: +allow, risk low$/m);
    expect(shown.stdout).toMatch(/^ {2}receipt: +rcp-1$/m);
    expect(shown.stdout).not.toMatch(/approval:/);
    // and --json is the API's document as is
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(actionRow);
  });

  it('exits 1 with the API code for an unknown action (problem details: code, detail), and reads WRIT_URL', async () => {
    const problem = { type: '/v1/problems/PROJECTION_NOT_FOUND', title: 'Projection not found', status: 404, detail: 'no action ar-x in the projection', code: 'PROJECTION_NOT_FOUND' };
    const server = await api({ 'GET /v1/actions/ar-x': () => ({ status: 404, json: problem }) });
    const result = await writ(['action', 'ar-x'], { WRIT_URL: `${server.url}/` });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error PROJECTION_NOT_FOUND: no action ar-x in the projection/);
    expect(server.seen.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/actions/ar-x']);
  });

  it('keeps `writ action submit` a subcommand, with its own --json', async () => {
    const result = await writ(['action', 'submit', 'missing.json', '--key', 'k.json', '--principal', 'agent-1', '--json']);
    expect(result.stderr).toMatch(/^error CLI_FILE_UNREADABLE: /);
  });
});

describe('writ approvals', () => {
  it('lists the pending inbox as a table, by default, and the raw JSON with --json', async () => {
    // given two pending approvals, one of whose summaries carries terminal escapes
    const rows = [approvalRow('apr-1'), approvalRow('apr-2', { packet: { action_summary: 'echo \u001b[2Jhi\u202e', risk_band: 'medium' }, expires_at: null })];
    const server = await api({ 'GET /v1/approvals': () => ({ json: { items: rows, next_cursor: null, approvals: rows } }) });
    // when the inbox is listed
    const listed = await writ(['approvals', '--url', server.url]);
    const json = await writ(['approvals', '--url', server.url, '--json']);
    // then it asked for the pending ones and prints one line per approval under a header
    expect(server.seen[0]?.query.get('status')).toBe('pending');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.split('\n');
    expect(lines[0]).toMatch(/^APPROVAL +TASK +ACTION +RISK +REQUESTED_BY +EXPIRES_AT$/);
    expect(lines[1]).toMatch(/^apr-1 +task-of-apr-1 +execute_command: rm -rf build\/ +high +agent-1 +2031-05-01T13:00:00.000Z$/);
    // and nothing from the server can drive the terminal
    expect(lines[2]).toContain('echo \\u{1b}[2Jhi\\u{202e}');
    expect(listed.stdout).not.toContain('\u001b');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(json.stdout)).toEqual({ items: rows, next_cursor: null, approvals: rows });
  });

  it('filters by --status (all: no filter, with a status column), and refuses an unknown status', async () => {
    const server = await api({
      'GET /v1/approvals': (r) => {
        const items = r.query.get('status') === null ? [approvalRow('apr-9', { status: 'granted' })] : [];
        return { json: { items, next_cursor: null, approvals: items } };
      },
    });
    const granted = await writ(['approvals', '--status', 'granted', '--url', server.url]);
    expect(granted).toMatchObject({ code: 0, stdout: 'no granted approvals' });
    expect(server.seen[0]?.query.get('status')).toBe('granted');
    const all = await writ(['approvals', '--status', 'all', '--limit', '5', '--url', server.url]);
    expect(server.seen[1]?.query.has('status')).toBe(false);
    expect(server.seen[1]?.query.get('limit')).toBe('5');
    expect(all.stdout.split('\n')[0]).toMatch(/ STATUS$/);
    expect(all.stdout.split('\n')[1]).toMatch(/ granted$/);
    const bogus = await writ(['approvals', '--status', 'approved', '--url', server.url]);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toMatch(/^error CLI_USAGE: /);
    expect(server.seen).toHaveLength(2);
  });
});

describe('writ approve / deny', () => {
  async function director() {
    const privateFile = join(dir, `director-${Math.random().toString(36).slice(2)}.private.json`);
    const keygen = await writ(['principal', 'keygen', '--kid', 'director-k1', '--out', privateFile]);
    expect(keygen.code).toBe(0);
    return { privateFile, publicJwk: JSON.parse(keygen.stdout) as Record<string, unknown> };
  }

  it("signs an ApprovalResolution over the packet shown with the director's key and POSTs it to /grant with the approval's task", async () => {
    // given a pending approval and a director key
    const key = await director();
    const shown = approvalDetail('apr-1');
    const server = await api({
      'GET /v1/approvals/apr-1': () => ({ json: shown }),
      'POST /v1/approvals/apr-1/grant': () => ({ json: { approval_id: 'apr-1', task_id: 'task-of-apr-1', status: 'granted', resolved_by: 'director-1', event_id: 'evt-9' } }),
    });
    // when the director approves it with a note
    const result = await writ(['approve', 'apr-1', '--key', key.privateFile, '--principal', 'director-1', '--note', 'looks right', '--url', server.url]);
    // then the outcome is printed
    expect(result).toMatchObject({ code: 0, stdout: 'granted apr-1 (task task-of-apr-1) by director-1' });
    // and the POST carried the task from the inbox and a JWS the director's public key verifies, with kid in the header
    const post = server.seen.find((r) => r.method === 'POST');
    expect(post).toMatchObject({ path: '/v1/approvals/apr-1/grant', headers: { 'content-type': 'application/json' } });
    const body = JSON.parse(post!.body) as { task_id: string; resolution_jws: string };
    expect(body.task_id).toBe('task-of-apr-1');
    const verified = await verifyJws(body.resolution_jws, await importEd25519PublicJwk(key.publicJwk));
    expect(verified.protectedHeader).toMatchObject({ alg: 'EdDSA', kid: 'director-k1' });
    const resolution = ApprovalResolution.parse(JSON.parse(new TextDecoder().decode(verified.payload)));
    expect(resolution).toEqual({
      approval_id: 'apr-1',
      decision: 'grant',
      packet_hash: shown.packet_ref.slice('artifact:'.length),
      resolved_by: 'director-1',
      resolved_at: NOW.toISOString(),
      note: 'looks right',
    });
    expect(server.seen.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/approvals/apr-1', 'POST /v1/approvals/apr-1/grant']);
    // and the private key went nowhere
    expect(post!.body).not.toContain((JSON.parse(await readFile(key.privateFile, 'utf8')) as { d: string }).d);
  });

  it('signs a deny of an approval that is no longer pending, and exits with the approval service code', async () => {
    // given an approval that is no longer pending
    const key = await director();
    const server = await api({
      'GET /v1/approvals/apr-3': () => ({ json: approvalDetail('apr-3', { status: 'granted' }) }),
      'POST /v1/approvals/apr-3/deny': () => ({ status: 409, json: { code: 'APPROVAL_NOT_PENDING', message: 'approval apr-3 is granted' } }),
    });
    // when it is denied
    const result = await writ(['deny', 'apr-3', '--key', key.privateFile, '--principal', 'director-1', '--url', server.url]);
    // then the signed decision is deny, posted to /deny, and the refusal's code is the exit error
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error APPROVAL_NOT_PENDING: /);
    const post = server.seen.find((r) => r.method === 'POST');
    expect(post?.path).toBe('/v1/approvals/apr-3/deny');
    const body = JSON.parse(post!.body) as { task_id: string; resolution_jws: string };
    expect(body.task_id).toBe('task-of-apr-3');
    const verified = await verifyJws(body.resolution_jws, await importEd25519PublicJwk(key.publicJwk));
    expect(JSON.parse(new TextDecoder().decode(verified.payload))).toMatchObject({ approval_id: 'apr-3', decision: 'deny' });
  });

  it('reports a refused resolver by its code; --task names the task, and the packet is still fetched to sign over', async () => {
    const key = await director();
    const server = await api({
      'GET /v1/approvals/apr-4': () => ({ json: approvalDetail('apr-4') }),
      'POST /v1/approvals/apr-4/grant': () => ({ status: 403, json: { code: 'APPROVAL_RESOLVER_NOT_ALLOWED', message: 'agent-1 lacks the director role' } }),
    });
    const result = await writ(['approve', 'apr-4', '--task', 'task-4', '--key', key.privateFile, '--principal', 'agent-1', '--url', server.url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error APPROVAL_RESOLVER_NOT_ALLOWED: /);
    expect(server.seen.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/approvals/apr-4', 'POST /v1/approvals/apr-4/grant']);
    expect(JSON.parse(server.seen[1]!.body)).toMatchObject({ task_id: 'task-4' });
  });

  it('prints an invalidated grant and exits with CLI_APPROVAL_INVALIDATED; --json prints the reply', async () => {
    const key = await director();
    const reply = { approval_id: 'apr-5', task_id: 'task-5', status: 'invalidated', resolved_by: 'director-1', event_id: 'evt-5' };
    const server = await api({ 'GET /v1/approvals/apr-5': () => ({ json: approvalDetail('apr-5') }), 'POST /v1/approvals/apr-5/grant': () => ({ json: reply }) });
    const result = await writ(['approve', 'apr-5', '--task', 'task-5', '--key', key.privateFile, '--principal', 'director-1', '--url', server.url, '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual(reply);
    expect(result.stderr).toMatch(/^error CLI_APPROVAL_INVALIDATED: /);
  });

  it('refuses an approval the projection does not hold, a public key, and a bad id, without posting anything', async () => {
    const key = await director();
    const server = await api({ 'GET /v1/approvals/apr-6': () => ({ status: 404, json: { code: 'PROJECTION_NOT_FOUND', message: 'no approval apr-6 in the projection' } }) });
    const unknown = await writ(['approve', 'apr-6', '--key', key.privateFile, '--principal', 'director-1', '--url', server.url]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error CLI_APPROVAL_NOT_FOUND: /);
    const publicFile = join(dir, 'director.public.json');
    await writeFile(publicFile, JSON.stringify(key.publicJwk));
    const notPrivate = await writ(['approve', 'apr-6', '--task', 't', '--key', publicFile, '--principal', 'director-1', '--url', server.url]);
    expect(notPrivate.stderr).toMatch(/^error CRYPTO_KEY_INVALID: /);
    const badId = await writ(['approve', '../apr', '--key', key.privateFile, '--principal', 'director-1', '--url', server.url]);
    expect(badId.stderr).toMatch(/^error CONTRACT_INVALID: /);
    const noPrincipal = await writ(['approve', 'apr-6', '--key', key.privateFile, '--url', server.url]);
    expect(noPrincipal).toMatchObject({ code: 2 });
    expect(server.seen.filter((r) => r.method === 'POST')).toHaveLength(0);
  });
});

describe('writ approve / deny: the packet the director signs over', () => {
  it('given a packet that does not hash to the packet the approval records, when approved, then CLI_APPROVAL_PACKET_MISMATCH and nothing is signed or posted', async () => {
    // given the packet shown changed after the approval recorded its hash
    const privateFile = join(dir, 'director-mismatch.private.json');
    expect((await writ(['principal', 'keygen', '--kid', 'director-k1', '--out', privateFile])).code).toBe(0);
    const recorded = approvalDetail('apr-7');
    const changed = { ...recorded, packet: { ...recorded.packet, action_summary: 'rm -rf /' } };
    const server = await api({ 'GET /v1/approvals/apr-7': () => ({ json: changed }) });
    // when
    const result = await writ(['approve', 'apr-7', '--key', privateFile, '--principal', 'director-1', '--url', server.url]);
    // then
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_APPROVAL_PACKET_MISMATCH: /);
    expect(server.seen.filter((r) => r.method === 'POST')).toHaveLength(0);
  });
});

describe('writ task <id>', () => {
  it('prints status, steps and attempts, and the whole timeline across pages', async () => {
    // given a task whose timeline the API serves 10 events a page
    const server = await api({ 'GET /v1/tasks/task-1': (r) => ({ json: taskPage(Number(r.query.get('after') ?? 0), 10) }) });
    // when it is shown
    const result = await writ(['task', 'task-1', '--url', server.url]);
    // then every page was read
    expect(result.code).toBe(0);
    expect(server.seen.map((r) => r.query.get('after'))).toEqual([null, '10', '20']);
    // and the summary, the steps and one timeline line per event are printed
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('task task-1: completed');
    expect(result.stdout).toMatch(/^ {2}title: +hello$/m);
    expect(result.stdout).toContain('  step step-1: succeeded\n    attempt att-1: succeeded (last attempt.succeeded)');
    expect(result.stdout).toContain(`timeline (${timeline.length} events):`);
    expect(result.stdout).toMatch(/^ {2}SEQ +OCCURRED_AT +EVENT +ACTOR +DETAIL$/m);
    expect(result.stdout).toMatch(/^ {2}10 +2031-05-01T12:00:10.000Z +policy.evaluated +service:policy +outcome=allow risk=low$/m);
    expect(result.stdout).toMatch(/^ {2}22 +\S+ +task.completed +service:orchestrator$/m);
  });

  it('prints the task with every page of events in one list with --json', async () => {
    const server = await api({ 'GET /v1/tasks/task-1': (r) => ({ json: taskPage(Number(r.query.get('after') ?? 0), 15) }) });
    const result = await writ(['task', 'task-1', '--url', server.url, '--json']);
    const doc = JSON.parse(result.stdout) as { task_id: string; events: { task_seq: number }[]; next_after: number | null };
    expect(doc).toMatchObject({ task_id: 'task-1', next_after: null });
    expect(doc.events.map((e) => e.task_seq)).toEqual(timeline.map((e) => e.task_seq));
  });

  it('exits with the API code for an unknown task', async () => {
    const server = await api({ 'GET /v1/tasks/nope': () => ({ status: 404, json: { code: 'PROJECTION_NOT_FOUND', message: 'no task nope' } }) });
    const result = await writ(['task', 'nope', '--url', server.url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error PROJECTION_NOT_FOUND: /);
  });
});

describe('writ receipt <id>', () => {
  const receiptKey = generateEd25519Key({ kid: 'receipt-k1' });
  const keysDoc = async () => ({ keys: [{ ...(await receiptKey).publicJwk, alg: 'EdDSA', use: 'sig' }] });

  it('prints the receipt, or the raw row with --json', async () => {
    const row = await signedReceiptRow(await receiptKey);
    const server = await api({ 'GET /v1/receipts/rcp-1': () => ({ json: row }) });
    const shown = await writ(['receipt', 'rcp-1', '--url', server.url]);
    expect(shown.code).toBe(0);
    expect(shown.stdout.split('\n')[0]).toBe('receipt rcp-1: succeeded');
    expect(shown.stdout).toMatch(/^ {2}signer: +receipt-k1$/m);
    expect(shown.stdout).toMatch(/^ {2}previous: +\(none: the first receipt of its task\)$/m);
    const json = await writ(['receipt', 'rcp-1', '--url', server.url, '--json']);
    expect(JSON.parse(json.stdout)).toEqual(row);
    expect(server.seen.some((r) => r.path === '/v1/keys')).toBe(false);
  });

  it('--verify passes every check against GET /v1/keys', async () => {
    // given a receipt as the receipt service signed it, and its key published
    const row = await signedReceiptRow(await receiptKey);
    const keys = await keysDoc();
    const server = await api({ 'GET /v1/receipts/rcp-1': () => ({ json: row }), 'GET /v1/keys': () => ({ json: keys }) });
    // when it is verified
    const result = await writ(['receipt', 'rcp-1', '--verify', '--url', server.url]);
    // then each check passes and the exit status is 0
    expect(result.code).toBe(0);
    for (const name of ['contract', 'hash', 'signature', 'payload', 'signer']) expect(result.stdout).toMatch(new RegExp(`^ {2}PASS +${name} `, 'm'));
  });

  it('--verify fails a tampered receipt: FAIL per broken check, CLI_RECEIPT_UNVERIFIED, exit 1', async () => {
    // given a served receipt whose summary was changed after signing
    const row = await signedReceiptRow(await receiptKey);
    const tampered = { ...row, receipt: { ...row.receipt, result_summary: 'exit 0, all good' } };
    const keys = await keysDoc();
    const server = await api({ 'GET /v1/receipts/rcp-1': () => ({ json: tampered }), 'GET /v1/keys': () => ({ json: keys }) });
    // when it is verified
    const result = await writ(['receipt', 'rcp-1', '--verify', '--url', server.url]);
    const json = await writ(['receipt', 'rcp-1', '--verify', '--url', server.url, '--json']);
    // then the hash and payload checks fail with their codes, the others pass
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^ {2}FAIL +hash +RECEIPT_HASH_MISMATCH: /m);
    expect(result.stdout).toMatch(/^ {2}FAIL +payload +RECEIPT_PAYLOAD_MISMATCH: /m);
    expect(result.stdout).toMatch(/^ {2}PASS +signature /m);
    expect(result.stderr).toMatch(/^error CLI_RECEIPT_UNVERIFIED: /);
    // and --json carries the same verdict
    expect(json.code).toBe(1);
    const doc = JSON.parse(json.stdout) as { receipt: unknown; verification: { ok: boolean; checks: { name: string; result: string; code?: string }[] } };
    expect(doc.receipt).toEqual(tampered);
    expect(doc.verification.ok).toBe(false);
    expect(doc.verification.checks.filter((c) => c.result === 'fail').map((c) => c.code)).toEqual(['RECEIPT_HASH_MISMATCH', 'RECEIPT_PAYLOAD_MISMATCH']);
  });

  it('--verify fails a receipt signed by a key the API does not publish; --keys trusts a local JWKS instead', async () => {
    const row = await signedReceiptRow(await receiptKey);
    const stranger = await generateEd25519Key({ kid: 'stranger-k1' });
    const server = await api({ 'GET /v1/receipts/rcp-1': () => ({ json: row }), 'GET /v1/keys': () => ({ json: { keys: [stranger.publicJwk] } }) });
    const unknown = await writ(['receipt', 'rcp-1', '--verify', '--url', server.url]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toMatch(/^ {2}FAIL +signature +RECEIPT_KEY_UNKNOWN: /m);
    expect(unknown.stdout).toMatch(/^ {2}SKIP +payload /m);
    const jwksFile = join(dir, 'trusted.jwks.json');
    await writeFile(jwksFile, JSON.stringify(await keysDoc()));
    const before = server.seen.length;
    const local = await writ(['receipt', 'rcp-1', '--verify', '--keys', jwksFile, '--url', server.url]);
    expect(local.code).toBe(0);
    expect(server.seen.slice(before).map((r) => r.path)).toEqual(['/v1/receipts/rcp-1']);
  });
});

describe('HTTP failures', () => {
  it('reports an unreachable API, a non-JSON answer, an error without a code, and a bad --url by code', async () => {
    const down = await writ(['action', 'ar-1', '--url', await deadUrl()]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^error CLI_HTTP_FAILED: /);
    const server = await api({
      'GET /v1/actions/ar-html': () => ({ raw: '<html>hi</html>', contentType: 'text/html' }),
      'GET /v1/actions/ar-500': () => ({ status: 500, raw: 'Internal Server Error', contentType: 'text/plain' }),
      'GET /v1/actions/ar-shape': () => ({ json: { hello: 'world' } }),
    });
    expect((await writ(['action', 'ar-html', '--url', server.url])).stderr).toMatch(/^error CLI_HTTP_REPLY_INVALID: /);
    expect((await writ(['action', 'ar-500', '--url', server.url])).stderr).toMatch(/^error CLI_HTTP_FAILED: /);
    expect((await writ(['action', 'ar-shape', '--url', server.url])).stderr).toMatch(/^error CLI_HTTP_REPLY_INVALID: /);
    const badUrl = await writ(['task', 'task-1', '--url', 'ftp://example']);
    expect(badUrl).toMatchObject({ code: 2 });
    expect(badUrl.stderr).toMatch(/^error CLI_USAGE: /);
  });

  it('the bin exits 1 with `error CODE: message` and prints --json on stdout', async () => {
    const server = await api({
      'GET /v1/actions/ar-1': () => ({ json: actionRow }),
      'GET /v1/actions/ar-x': () => ({ status: 404, json: { code: 'PROJECTION_NOT_FOUND', message: 'no action ar-x' } }),
    });
    const execFileAsync = promisify(execFile);
    const env = { ...process.env, WRIT_URL: server.url };
    const ok = await execFileAsync(process.execPath, [BIN, 'action', 'ar-1', '--json'], { env });
    expect(JSON.parse(ok.stdout)).toEqual(actionRow);
    const failure = await execFileAsync(process.execPath, [BIN, 'action', 'ar-x'], { env }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toMatch(/^error PROJECTION_NOT_FOUND: /);
  });
});
