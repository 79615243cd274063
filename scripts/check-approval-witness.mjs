#!/usr/bin/env node
// End-to-end check (by hand, not a test) of approvals with a state witness (Hermit 12.4, 16.8;
// DESIGN invariant 4) against a running stack (scripts/writ-up.sh), through the public surfaces
// only: the writ CLI for principals, POST /v1/actions for the agent's signed request,
// POST /v1/approvals/<id>/grant|deny for the director's signed resolution, GET /v1/actions/<id>
// and GET /v1/receipts/<id> for the outcome.
//
//   node scripts/check-approval-witness.mjs
//   env: WRIT_URL (http://127.0.0.1:8080), WRIT_CLI ("node apps/cli/bin/writ.mjs"),
//        WRIT_CELLS_ROOT (/var/lib/writ/cells: where the executor keeps the task workspaces),
//        WRIT_CHECK_TIMEOUT_MS (60000 per wait)
//
// Scenarios, each a fresh task (`rm -rf build`, target_resources ["build"], files_owned ["**"],
// profile local_edit_allowed → require_approval with a state witness):
//   1. grant:  the director grants → approval.granted (witness validated) → the SAME attempt is
//              authorized, granted and run → `succeeded` with a receipt.
//   2. drift:  a file appears under build/ in the task's workspace between request and grant →
//              the grant answers `invalidated`, the same attempt re-enters policy and waits for a
//              new approval; granting that one → `succeeded` in the same attempt, build/ is gone.
//   3. deny:   the director denies → `denied` with a receipt.
// Prints one line per check and ends with "N passed, N failed"; exit 0 only when all pass.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const base = process.env.WRIT_URL ?? 'http://127.0.0.1:8080';
const cli = (process.env.WRIT_CLI ?? `node ${join(repo, 'apps/cli/bin/writ.mjs')}`).split(' ');
const cellsRoot = process.env.WRIT_CELLS_ROOT ?? '/var/lib/writ/cells';
const waitMs = Number(process.env.WRIT_CHECK_TIMEOUT_MS ?? 60_000);
/** The user every cell process runs as (scripts/build-cell-image.sh). */
const CELL_UID = 10001;

let passed = 0;
let failed = 0;
const check = (name, ok, why = '') => {
  ok ? passed++ : failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${why ? ` — ${why}` : ''}`);
  return ok;
};
const b64u = (value) => Buffer.from(value).toString('base64url');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Who reads the API (GET): the director, with a bearer token it signs (typ writ-http+jws); set once it exists. */
let reader;

async function http(method, path, body, headers = {}) {
  if (method === 'GET' && reader !== undefined && path !== '/v1/keys') headers = { authorization: reader.bearer(), ...headers };
  try {
    const response = await fetch(base + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    let parsed = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: response.status, body: parsed };
  } catch (error) {
    return { status: 0, body: String(error.cause ?? error) };
  }
}

/** An Ed25519 principal: its private key signs compact EdDSA JWS; its public JWK is registered with the CLI. */
function principal(kind, roles) {
  const id = `witness-${kind}-${randomUUID().slice(0, 8)}`;
  const kid = `${id}-k1`;
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'EdDSA', use: 'sig' };
  const file = join(mkdtempSync(join(tmpdir(), 'writ-witness-')), `${kid}.jwk.json`);
  writeFileSync(file, JSON.stringify(jwk));
  const args = ['principal', 'add', '--id', id, '--type', kind === 'agent' ? 'agent' : 'user', '--jwk', file, ...roles.flatMap((role) => ['--role', role])];
  try {
    execFileSync(cli[0], [...cli.slice(1), ...args], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    check(`writ principal add ${id} (${roles.join(', ')})`, true);
  } catch (error) {
    check(`writ principal add ${id} (${roles.join(', ')})`, false, String(error.stderr ?? error).slice(0, 300));
  }
  const jws = (payload, header = {}) => {
    const input = `${b64u(JSON.stringify({ alg: 'EdDSA', kid, ...header }))}.${b64u(JSON.stringify(payload))}`;
    return `${input}.${b64u(sign(null, Buffer.from(input), privateKey))}`;
  };
  const bearer = () => {
    const iat = Math.floor(Date.now() / 1000);
    return `Bearer ${jws({ sub: id, iss: id, aud: `writ-http:${process.env.WRIT_SUBJECT_ROOT ?? 'writ'}`, iat, exp: iat + 120 }, { typ: 'writ-http+jws' })}`;
  };
  return { id, jws, bearer };
}

/** Polls GET /v1/actions/<id> until `until(row)` holds; returns the last row seen. */
async function action(id, until, what) {
  let row = null;
  for (const end = Date.now() + waitMs; Date.now() < end; await sleep(250)) {
    const response = await http('GET', `/v1/actions/${id}`);
    row = response.status === 200 ? response.body : null;
    if (row !== null && until(row)) return row;
  }
  console.log(`     (waited ${waitMs} ms for ${what}; last: ${JSON.stringify(row)?.slice(0, 300)})`);
  return row;
}

async function submit(agent) {
  const request = {
    action_request_id: randomUUID(),
    task: { title: 'clean the build', goal: 'remove stale build output', policy_profile: 'local_edit_allowed', files_owned: ['**'] },
    step: { kind: 'edit', title: 'rm -rf build' },
    action_class: 'execute_command',
    target_resources: ['build'],
    params: { argv: ['rm', '-rf', 'build'] },
    expected_effects: ['build/ is gone'],
    reversibility_hint: 'irreversible',
    reason: 'state-witness end-to-end check',
    proposed_by: agent.id,
    proposed_at: new Date().toISOString(),
  };
  const response = await http('POST', '/v1/actions', { jws: agent.jws(request) }, { 'Idempotency-Key': request.action_request_id });
  check(`POST /v1/actions accepts rm -rf build (${request.action_request_id})`, response.status >= 200 && response.status < 300, `status ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`);
  const waiting = await action(request.action_request_id, (row) => row.status === 'awaiting_approval' && row.approval_id !== null, 'awaiting_approval');
  check('it waits for approval (policy: require_approval, witness required)', waiting?.status === 'awaiting_approval', `status ${waiting?.status}`);
  return { id: request.action_request_id, row: waiting };
}

async function resolve(director, row, decision) {
  // The resolution signs the packet's hash: here the one the approval records (writ approve recomputes it from the packet shown).
  const shown = await http('GET', `/v1/approvals/${row.approval_id}`);
  const packetHash = String(shown.body?.packet_ref ?? '').replace(/^artifact:/, '');
  const resolution = { approval_id: row.approval_id, decision, packet_hash: packetHash, resolved_by: director.id, resolved_at: new Date().toISOString(), note: `${decision} (witness check)` };
  return http('POST', `/v1/approvals/${row.approval_id}/${decision}`, { task_id: row.task_id, resolution_jws: director.jws(resolution) });
}

async function receiptOf(row) {
  if (!row?.receipt_id) return false;
  const response = await http('GET', `/v1/receipts/${row.receipt_id}`);
  return response.status === 200;
}

const keys = await http('GET', '/v1/keys');
if (!check('the stack answers GET /v1/keys', keys.status === 200, `status ${keys.status}`)) {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(1);
}
const agent = principal('agent', ['executor']);
const director = principal('director', ['director']);
reader = director;

// 1. grant: unchanged workspace → witness validated → the same attempt runs.
console.log('# 1. grant with the resources unchanged');
{
  const { id, row } = await submit(agent);
  if (row?.approval_id) {
    const granted = await resolve(director, row, 'grant');
    check('the director grant is recorded as granted (witness revalidated)', granted.status === 200 && granted.body?.status === 'granted', JSON.stringify(granted.body).slice(0, 200));
    const done = await action(id, (r) => ['succeeded', 'failed', 'denied', 'unknown_outcome'].includes(r.status), 'a final status');
    check('GET /v1/actions/<id> reaches succeeded', done?.status === 'succeeded', `status ${done?.status}`);
    check('in the same attempt', done?.attempt_id === row.attempt_id, `${row.attempt_id} → ${done?.attempt_id}`);
    check('with a receipt', await receiptOf(done), `receipt ${done?.receipt_id}`);
  }
}

// 2. drift: the workspace changes between request and grant → invalidated → policy again → new approval.
console.log('# 2. a file appears under build/ between request and grant');
{
  const { id, row } = await submit(agent);
  if (row?.approval_id) {
    const stale = join(cellsRoot, row.task_id, 'workspace', 'build', 'stale.o');
    let wrote = false;
    try {
      mkdirSync(dirname(stale), { recursive: true });
      writeFileSync(stale, 'stale object\n');
      // As the cell's user (10001) would have left it, so that the cell may remove it.
      chownSync(dirname(stale), CELL_UID, CELL_UID);
      chownSync(stale, CELL_UID, CELL_UID);
      wrote = true;
    } catch (error) {
      check(`write ${stale} on the host (needs the executor's cells root and root)`, false, String(error));
    }
    if (wrote) {
      const first = await resolve(director, row, 'grant');
      check('the grant is answered invalidated (witness drift), no grant minted', first.status === 200 && first.body?.status === 'invalidated', JSON.stringify(first.body).slice(0, 200));
      const again = await action(id, (r) => r.status === 'awaiting_approval' && r.approval_id !== null && r.approval_id !== row.approval_id, 'a new approval');
      check('the same attempt re-entered policy and waits for a new approval', again?.approval_id !== row.approval_id && again?.attempt_id === row.attempt_id, `${row.approval_id} → ${again?.approval_id}`);
      if (again?.approval_id && again.approval_id !== row.approval_id) {
        const second = await resolve(director, again, 'grant');
        check('the new approval is granted', second.status === 200 && second.body?.status === 'granted', JSON.stringify(second.body).slice(0, 200));
        const done = await action(id, (r) => ['succeeded', 'failed', 'denied', 'unknown_outcome'].includes(r.status), 'a final status');
        check('GET /v1/actions/<id> reaches succeeded in the same attempt', done?.status === 'succeeded' && done?.attempt_id === row.attempt_id, `status ${done?.status}`);
        check('build/ is gone from the workspace', !existsSync(dirname(stale)));
      }
    }
  }
}

// 3. deny → denied, receipted.
console.log('# 3. deny');
{
  const { id, row } = await submit(agent);
  if (row?.approval_id) {
    const denied = await resolve(director, row, 'deny');
    check('the director deny is recorded as denied', denied.status === 200 && denied.body?.status === 'denied', JSON.stringify(denied.body).slice(0, 200));
    const done = await action(id, (r) => r.status === 'denied' && r.receipt_id !== null, 'denied with a receipt');
    check('GET /v1/actions/<id> reaches denied', done?.status === 'denied', `status ${done?.status}`);
    check('with a receipt', await receiptOf(done), `receipt ${done?.receipt_id}`);
  }
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
