import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { parseReceipt, type PublicEd25519Jwk } from '@writ/contracts';
import { registerInLog } from '../test/principal.fixture.js';
import { canonicalJson, generateEd25519Key, hexToBytes, sha256Hex, signJws, verifyInclusion } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceProcess, operatorEnv } from '../test/service-process.fixture.js';
import { run, type CliIo } from './main.js';

/**
 * `writ tlog head|prove` against the real NATS and the BUILT receipt service
 * (services/receipt/dist/main.js, started as a child process on this test's
 * own subject root and streams; build it first: `npx nx run @writ/receipt:build`).
 * Receipts are appended to task streams as the receipt service appends them;
 * its sequencer makes them leaves of the transparency log.
 */

const MiB = 1024 ** 2;

let nc: NatsConnection;
let store: EventStore;
let dir: string;
let service: ServiceProcess | undefined;
const root = uniqueName('t');
const logId = uniqueName('log');
const streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
const env = { ...operatorEnv(), WRIT_SUBJECT_ROOT: root, WRIT_EVENTS_STREAM: streams.events, WRIT_NATS_URL: 'nats://127.0.0.1:4223' };
const receiptIds: string[] = [];

/** Runs `writ <argv>` in process, capturing its output. */
async function writ(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => new Date() };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** A `receipt.issued` as the receipt service appends it (signed here by a throwaway key: the log checks the hash, the CLI the leaf). */
async function appendReceipt(): Promise<string> {
  const key = await generateEd25519Key({ kid: uniqueName('k') });
  const taskId = uniqueName('task');
  const body = {
    receipt_id: uniqueName('rct'),
    task_id: taskId,
    step_id: uniqueName('step'),
    attempt_id: uniqueName('att'),
    receipt_class: 'command_execution' as const,
    action_request_ref: `action_request:${uniqueName('ar')}`,
    input_refs: [],
    environment_ref: null,
    policy_result_ref: null,
    approval_ref: null,
    capability_grant_ref: null,
    output_refs: [],
    result_code: 'refused' as const,
    result_summary: 'refused: nothing ran',
    created_at: new Date().toISOString(),
    verifiability: 'signed' as const,
    signer_ref: key.kid,
    prev_receipt_hash: null,
  };
  const canonical = canonicalJson(body);
  const jws = await signJws(canonical, key, { typ: 'writ-receipt+jws' });
  const [header, , signature] = jws.split('.');
  const receipt = parseReceipt({ ...body, receipt_hash: sha256Hex(canonical), signature: `${header}..${signature}` });
  await store.append(
    taskId,
    [
      {
        event_id: uniqueName('evt'),
        schema_version: 1,
        event_type: 'receipt.issued',
        entity_type: 'receipt',
        entity_id: body.receipt_id,
        step_id: body.step_id,
        attempt_id: body.attempt_id,
        occurred_at: body.created_at,
        actor_type: 'service',
        actor_id: 'writ-receipt',
        payload: { receipt, jws, cause: 'refused' },
        causation_id: null,
        correlation_id: taskId,
      },
    ],
    0,
  );
  return body.receipt_id;
}

beforeAll(async () => {
  nc = await connectTestNats('cli-tlog-test');
  store = await EventStore.open(nc, { stream: streams.events, subjectPrefix: `${root}.evt`, maxBytes: 64 * MiB });
  dir = await mkdtemp(join(tmpdir(), 'writ-cli-tlog-'));
  for (let n = 0; n < 3; n++) receiptIds.push(await appendReceipt());
  service = ServiceProcess.start('receipt', 
    {
      ...env,
      WRIT_INGRESS_STREAM: streams.ingress,
      WRIT_COMMANDS_STREAM: streams.commands,
      WRIT_DLQ_STREAM: streams.dlq,
      WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
      WRIT_BUS_MAX_BYTES: String(8 * MiB),
      WRIT_BUS_PULL_EXPIRES_MS: '1000',
      WRIT_RECEIPT_KEY_FILE: join(dir, 'receipt.jwk.json'),
      WRIT_TLOG_ID: logId,
    },
    join(dir, 'receipt.log'),
  );
  // Ready once the three receipts are leaves.
  await waitFor(
    async () => {
      service?.assertRunning();
      const events = await store.readEntity('transparency_log', logId).catch(() => []);
      return events.filter(({ event }) => event.event_type === 'tlog.entry_appended').length >= receiptIds.length ? true : undefined;
    },
    { what: 'the receipts sequenced', timeoutMs: 30_000, intervalMs: 100 },
  );
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await deleteStreams(nc, ...Object.values(streams));
  await nc.close();
  await rm(dir, { recursive: true, force: true });
});

describe('writ tlog head', () => {
  it("given a log of three receipts, then it prints the signed head and PASSes its signature against the receipt service's key in the log", async () => {
    const result = await writ(['tlog', 'head']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const [first, second] = result.stdout.split('\n');
    expect(first).toMatch(new RegExp(`^tree head of ${logId}: 3 leaves, root [0-9a-f]{64}, signed \\S+ by writ-receipt-`));
    expect(second).toMatch(/^ {2}PASS {2}tree_head /);

    const json = await writ(['tlog', 'head', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, tree_head: { log_id: logId, tree_size: 3 }, checks: [{ check: 'tree_head', pass: true }] });
  });

  it('given a principal that does not sign tree heads, then the signature check FAILs and it exits 1 (CLI_TLOG_UNVERIFIED)', async () => {
    const keyFile = join(dir, 'other.private.json');
    const keygen = await writ(['principal', 'keygen', '--kid', 'other-k1', '--out', keyFile]);
    await registerInLog(store, { id: 'other-signer', type: 'service', roles: ['observer'], jwk: JSON.parse(keygen.stdout) as PublicEd25519Jwk });

    const result = await writ(['tlog', 'head', '--principal', 'other-signer']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^ {2}FAIL {2}tree_head /m);
    expect(result.stderr).toMatch(/^error CLI_TLOG_UNVERIFIED: /);
  });
});

describe('writ tlog prove', () => {
  it('given a sequenced receipt, then the head, the receipt leaf and the inclusion all PASS; --json carries a proof that verifies', async () => {
    const receiptId = receiptIds[1] ?? '';
    const result = await writ(['tlog', 'prove', receiptId]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe(`receipt ${receiptId} is leaf 1 of ${logId} (tree of 3, root ${result.stdout.match(/root ([0-9a-f]{64})/)?.[1]}):`);
    for (const check of ['tree_head', 'receipt  ', 'inclusion']) expect(result.stdout).toMatch(new RegExp(`^ {2}PASS {2}${check} `, 'm'));

    const json = JSON.parse((await writ(['tlog', 'prove', receiptId, '--json', '--tree-size', '3'])).stdout) as {
      ok: boolean;
      proof: { leaf_hash: string; leaf_index: number; tree_size: number; audit_path: string[] };
      tree_head: { root_hash: string };
    };
    expect(json.ok).toBe(true);
    const { proof } = json;
    expect(verifyInclusion(hexToBytes(proof.leaf_hash), proof.leaf_index, proof.tree_size, proof.audit_path.map(hexToBytes), hexToBytes(json.tree_head.root_hash))).toBe(true);
  });

  it('given a receipt the log does not hold, or a size no head was signed at, then it exits 1 with the service code', async () => {
    const unknown = await writ(['tlog', 'prove', uniqueName('rct')]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error RECEIPT_NOT_IN_LOG: /);

    const unsigned = await writ(['tlog', 'prove', receiptIds[0] ?? '', '--tree-size', '2']);
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toMatch(/^error TLOG_TREE_HEAD_NOT_FOUND: /);

    const usage = await writ(['tlog', 'prove', receiptIds[0] ?? '', '--tree-size', 'two']);
    expect(usage.code).toBe(2);
  });
});
