import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { TransparencyLogEntryAppended, type PublicEd25519Jwk, type TransparencyLogReceiptRefused } from '@writ/contracts';
import { generateEd25519Key, hexToBytes, merkleLeafHash, bytesToHex, verifyInclusion } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerInLog } from '../test/principal.fixture.js';
import { receiptServiceKey, sealTestReceipt } from '../test/receipt.fixture.js';
import { ServiceProcess, operatorEnv } from '../test/service-process.fixture.js';
import { run, type CliIo } from './main.js';

/**
 * `writ tlog head|prove` against the real NATS and the BUILT receipt service
 * (services/receipt/dist/main.js, started as a child process on this test's
 * own subject root and streams; build it first: `npx nx run @writ/receipt:build`).
 * Receipts are appended to task streams as the receipt service appends them
 * (signed with its key); its sequencer makes them leaves of the transparency
 * log, and refuses forged ones.
 */

const MiB = 1024 ** 2;

let nc: NatsConnection;
let store: EventStore;
let dir: string;
let keyFile: string;
let service: ServiceProcess | undefined;
const root = uniqueName('t');
const logId = uniqueName('log');
const streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
const env = { ...operatorEnv(), WRIT_SUBJECT_ROOT: root, WRIT_EVENTS_STREAM: streams.events, WRIT_NATS_URL: process.env['WRIT_NATS_URL'] ?? 'nats://127.0.0.1:4223' };
const receiptIds: string[] = [];

/** Runs `writ <argv>` in process, capturing its output. */
async function writ(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => new Date() };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/**
 * A `receipt.issued` appended around the receipt service, signed with its own
 * key as the service would (`service`), or forged: a key it never had
 * (`throwaway`) or a garbage signature (`garbage`).
 */
async function appendReceipt(signer: 'service' | 'throwaway' | 'garbage' = 'service'): Promise<{ receiptId: string; taskId: string; receiptHash: string; eventId: string }> {
  const key = signer === 'throwaway' ? await generateEd25519Key({ kid: uniqueName('k') }) : await receiptServiceKey(keyFile);
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
    prev_receipt_hash: null,
  };
  let { receipt, jws } = await sealTestReceipt(body, key);
  if (signer === 'garbage') {
    const [header, payload] = jws.split('.');
    const garbage = Buffer.from('g'.repeat(64)).toString('base64url');
    jws = `${header}.${payload}.${garbage}`;
    receipt = { ...receipt, signature: `${header}..${garbage}` };
  }
  const eventId = uniqueName('evt');
  await store.append(
    taskId,
    [
      {
        event_id: eventId,
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
  return { receiptId: body.receipt_id, taskId, receiptHash: receipt.receipt_hash ?? '', eventId };
}

/** The log's events of one type. */
async function tlogEvents(type: string) {
  return (await store.readEntity('transparency_log', logId).catch(() => [])).filter(({ event }) => event.event_type === type);
}

beforeAll(async () => {
  nc = await connectTestNats('cli-tlog-test');
  store = await EventStore.open(nc, { stream: streams.events, subjectPrefix: `${root}.evt`, maxBytes: 64 * MiB });
  dir = await mkdtemp(join(tmpdir(), 'writ-cli-tlog-'));
  keyFile = join(dir, 'receipt.jwk.json');
  service = ServiceProcess.start('receipt', 
    {
      ...env,
      WRIT_INGRESS_STREAM: streams.ingress,
      WRIT_COMMANDS_STREAM: streams.commands,
      WRIT_DLQ_STREAM: streams.dlq,
      WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
      WRIT_BUS_MAX_BYTES: String(8 * MiB),
      WRIT_BUS_PULL_EXPIRES_MS: '1000',
      WRIT_RECEIPT_KEY_FILE: keyFile,
      WRIT_TLOG_ID: logId,
    },
    join(dir, 'receipt.log'),
  );
  // The service registers its principal (and key) as it starts; receipts are signed after that.
  await waitFor(
    async () => {
      service?.assertRunning();
      return (await store.readEntity('principal', 'writ-receipt').catch(() => [])).length > 0 ? true : undefined;
    },
    { what: 'the receipt service started', timeoutMs: 30_000, intervalMs: 100 },
  );
  for (let n = 0; n < 3; n++) receiptIds.push((await appendReceipt()).receiptId);
  // Ready once the three receipts are leaves.
  await waitFor(
    async () => {
      service?.assertRunning();
      return (await tlogEvents('tlog.entry_appended')).length >= receiptIds.length ? true : undefined;
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

describe('writ tlog prove of a forged receipt', () => {
  it('given a receipt.issued with a garbage signature appended straight to a task stream, then the log refuses it (no leaf) and prove exits 1 with TLOG_RECEIPT_REFUSED', async () => {
    // given
    const forged = await appendReceipt('garbage');
    const refusal = await waitFor(async () => (await tlogEvents('tlog.receipt_refused')).map(({ event }) => event.payload as TransparencyLogReceiptRefused).find((found) => found.receipt_id === forged.receiptId), {
      what: 'the refusal of the forged receipt',
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    expect(refusal.code).toBe('TLOG_RECEIPT_SIGNATURE_INVALID');
    expect((await tlogEvents('tlog.entry_appended')).some(({ event }) => (event.payload as { receipt_id?: unknown }).receipt_id === forged.receiptId)).toBe(false);
    // when
    const result = await writ(['tlog', 'prove', forged.receiptId]);
    // then
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error TLOG_RECEIPT_REFUSED: /);
  });

  it('given a leaf for a forged receipt written into the log around the service (as an older release could have admitted it), then prove FAILs the receipt check even though the head and the inclusion verify', async () => {
    // given: a receipt signed by a key the receipt service never had, refused by the sequencer ...
    const forged = await appendReceipt('throwaway');
    await waitFor(async () => ((await tlogEvents('tlog.receipt_refused')).some(({ event }) => (event.payload as TransparencyLogReceiptRefused).receipt_id === forged.receiptId) ? true : undefined), {
      what: 'the refusal of the forged receipt',
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    // ... and a leaf for it appended to the log's own stream by a forger with publish rights
    const head = await store.headOfEntity('transparency_log', logId);
    const leaves = (await tlogEvents('tlog.entry_appended')).length;
    const entry = TransparencyLogEntryAppended.parse({
      log_id: logId,
      leaf_index: leaves,
      receipt_id: forged.receiptId,
      task_id: forged.taskId,
      receipt_hash: forged.receiptHash,
      leaf_hash: bytesToHex(merkleLeafHash(hexToBytes(forged.receiptHash))),
      receipt_event_id: forged.eventId,
    });
    await store.appendToEntity(
      'transparency_log',
      logId,
      [
        {
          event_id: uniqueName('evt'),
          schema_version: 1,
          event_type: 'tlog.entry_appended',
          entity_type: 'transparency_log',
          entity_id: logId,
          occurred_at: new Date().toISOString(),
          actor_type: 'service',
          actor_id: 'writ-receipt',
          payload: entry,
          causation_id: forged.eventId,
          correlation_id: forged.taskId,
        },
      ],
      head.taskSeq,
    );
    // when
    const result = await waitFor(async () => {
      const proved = await writ(['tlog', 'prove', forged.receiptId]);
      return proved.stderr.startsWith('error RECEIPT_NOT_IN_LOG') ? undefined : proved;
    }, { what: 'the forged leaf served', timeoutMs: 30_000, intervalMs: 100 });
    // then
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^ {2}PASS {2}tree_head /m);
    expect(result.stdout).toMatch(/^ {2}PASS {2}inclusion /m);
    expect(result.stdout).toMatch(/^ {2}FAIL {2}receipt {3}.*is not signed by a key of writ-receipt valid at its created_at/m);
    expect(result.stderr).toMatch(/^error CLI_TLOG_UNVERIFIED: /);
  });
});
