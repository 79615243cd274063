import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { IssueReceipt, PolicyEvaluated, ReceiptIssued, type EventEnvelope, type PublicEd25519Jwk, type RotateKeyReply } from '@writ/contracts';
import { registerInLog } from '../../test/principal.fixture.js';
import { EventStore } from '@writ/eventstore';
import { connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceProcess, operatorEnv } from '../../test/service-process.fixture.js';
import { run, type CliIo } from '../main.js';

/**
 * `writ keys rotate --service receipt` against the real NATS and the BUILT
 * receipt service (a child process on this test's own subject root, streams,
 * key directory and transparency log; build it first: `npx nx run
 * @writ/receipt:build`), then `writ export` and `writ verify` of the task
 * whose receipts straddle the rotation. The replaced key retires 2 s after
 * the rotation (checked every second), so the bundle holds a receipt signed
 * by a key revoked since.
 */

const MiB = 1024 ** 2;
const root = uniqueName('t');
const logId = uniqueName('log');
const streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
const env = { ...operatorEnv(), WRIT_SUBJECT_ROOT: root, WRIT_EVENTS_STREAM: streams.events, WRIT_NATS_URL: process.env['WRIT_NATS_URL'] ?? 'nats://127.0.0.1:4223' };
const RECEIPT = 'writ-receipt';
const DIRECTOR = uniqueName('director');
const taskId = uniqueName('task');

let nc: NatsConnection;
let store: EventStore;
let dir: string;
let service: ServiceProcess | undefined;
let directorKey: string;

async function writ(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => new Date() };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

function startService(): ServiceProcess {
  return ServiceProcess.start('receipt', 
    {
      ...env,
      WRIT_INGRESS_STREAM: streams.ingress,
      WRIT_COMMANDS_STREAM: streams.commands,
      WRIT_DLQ_STREAM: streams.dlq,
      WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
      WRIT_BUS_MAX_BYTES: String(8 * MiB),
      WRIT_BUS_PULL_EXPIRES_MS: '1000',
      WRIT_RECEIPT_KEY_FILE: join(dir, 'receipt.jwk.json'),
      WRIT_RECEIPT_KEY_RETIRE_SECONDS: '2',
      WRIT_RECEIPT_KEY_CHECK_SECONDS: '1',
      WRIT_TLOG_ID: logId,
      WRIT_TLOG_STH_INTERVAL_MS: '200',
    },
    join(dir, 'receipt.log'),
  );
}

/** Waits until the service answers its tree-head query (started: key, principal, log rebuilt, listeners bound). */
async function started(instance: ServiceProcess): Promise<void> {
  await waitFor(
    async () => {
      instance.assertRunning();
      const reply = await nc.request(`${root}.qry.receipt.tree-head`, '{}', { timeout: 1_000 }).catch(() => undefined);
      return reply === undefined ? undefined : true;
    },
    { what: 'the receipt service answering', timeoutMs: 30_000, intervalMs: 100 },
  );
}

const principalEvents = async (): Promise<EventEnvelope[]> => (await store.readEntity('principal', RECEIPT)).map(({ event }) => event);

function draft(eventType: string, entity: { type: EventEnvelope['entity_type']; id: string }, attemptId: string, payload: Record<string, unknown>) {
  return {
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: eventType,
    entity_type: entity.type,
    entity_id: entity.id,
    step_id: 'step-1',
    attempt_id: attemptId,
    occurred_at: new Date().toISOString(),
    actor_type: 'service' as const,
    actor_id: 'writ-policy',
    payload,
    causation_id: null,
    correlation_id: taskId,
  };
}

/** A new attempt of the task, denied by policy, and its receipt asked for; resolves with the receipt once issued. */
async function deniedReceipt(): Promise<ReceiptIssued> {
  const attemptId = uniqueName('att');
  const actionRequestId = uniqueName('ar');
  const policyResultId = uniqueName('pr');
  const at = new Date().toISOString();
  const request = {
    action_request_id: actionRequestId,
    task_id: taskId,
    action_class: 'execute_command',
    target_resources: ['build'],
    params: { argv: ['rm', '-rf', '/'], cwd: '.' },
    expected_effects: ['nothing left'],
    reversibility_hint: 'irreversible',
    reason: 'clean up',
    proposed_by: 'agent-1',
    proposed_at: at,
  };
  const policy = PolicyEvaluated.parse({
    policy_result: {
      policy_result_id: policyResultId,
      task_id: taskId,
      step_id: 'step-1',
      attempt_id: attemptId,
      action_request_id: actionRequestId,
      outcome: 'deny',
      action_class: 'execute_command',
      risk_band: 'high',
      action_summary: 'execute_command: rm -rf /',
      risk_summary: 'deletes everything',
      policy_profile_ref: 'policy:local_edit_allowed',
      policy_version: 'v1',
      affected_resources: ['build'],
      reasoning_summary: 'never in this profile',
      matched_rules: ['destructive'],
      witness_required: false,
      revalidation_conditions: [],
      evaluated_at: at,
      evaluated_by: 'writ-policy',
    },
    decision: {
      decision_id: uniqueName('dec'),
      task_id: taskId,
      step_id: 'step-1',
      attempt_id: attemptId,
      decision_type: 'execution',
      summary: 'policy deny',
      rationale: 'profile rules',
      evidence_refs: [],
      risk_level: 'high',
      decided_by: 'writ-policy',
      reversible: false,
      created_at: at,
    },
  });
  const head = await store.head(taskId);
  await store.append(
    taskId,
    [draft('attempt.awaiting_policy', { type: 'attempt', id: attemptId }, attemptId, { action_request: request, at }), draft('policy.evaluated', { type: 'policy', id: policyResultId }, attemptId, policy)],
    head.taskSeq,
  );
  const command = IssueReceipt.parse({ task_id: taskId, step_id: 'step-1', attempt_id: attemptId, cause: 'policy_denied' });
  await jetstream(nc).publish(`${root}.cmd.receipt.issue`, JSON.stringify(command), { msgID: `${attemptId}:policy_denied` });
  return waitFor(
    async () => {
      const issued = (await store.read(taskId)).find(({ event }) => event.event_type === 'receipt.issued' && event.attempt_id === attemptId);
      return issued === undefined ? undefined : ReceiptIssued.parse(issued.event.payload);
    },
    { what: `the receipt of ${attemptId}`, timeoutMs: 30_000, intervalMs: 50 },
  );
}

beforeAll(async () => {
  nc = await connectTestNats('cli-keys-rotate');
  store = await EventStore.open(nc, { stream: streams.events, subjectPrefix: `${root}.evt`, maxBytes: 64 * MiB });
  dir = await mkdtemp(join(tmpdir(), 'writ-cli-keys-rotate-'));
  // a director, registered in the log as an operator would
  directorKey = join(dir, 'director.private.json');
  const keygen = await writ(['principal', 'keygen', '--kid', `${DIRECTOR}-k1`, '--out', directorKey]);
  expect(keygen.code).toBe(0);
  await registerInLog(store, { id: DIRECTOR, type: 'user', roles: ['director'], jwk: JSON.parse(keygen.stdout) as PublicEd25519Jwk });
  service = startService();
  await started(service);
}, 60_000);

afterAll(async () => {
  await service?.stop();
  if (nc !== undefined) {
    await deleteStreams(nc, ...Object.values(streams));
    await nc.close();
  }
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('writ keys rotate --service receipt', () => {
  let rotation: RotateKeyReply;
  let before: ReceiptIssued;
  let after: ReceiptIssued;

  it('given a receipt signed with the first key, when a director rotates the key, then the next receipt is signed by the new key and the old one retires at retire_after', async () => {
    // given
    before = await deniedReceipt();
    const oldKid = before.receipt.signer_ref;
    // when
    const result = await writ(['keys', 'rotate', '--service', 'receipt', '--key', directorKey, '--principal', DIRECTOR, '--reason', 'scheduled', '--json']);
    // then
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    rotation = JSON.parse(result.stdout) as RotateKeyReply;
    expect(rotation).toMatchObject({ principal_id: RECEIPT, status: 'rotated', previous_kid: oldKid });
    after = await deniedReceipt();
    expect(after.receipt.signer_ref).toBe(rotation.kid);
    expect(after.receipt.prev_receipt_hash).toBe(before.receipt.receipt_hash);
    // and the service's own check revokes the replaced key once its 2 s are up
    await waitFor(async () => ((await principalEvents()).some((event) => event.event_type === 'principal.key_revoked') ? true : undefined), {
      what: `principal.key_revoked of ${oldKid}`,
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    const keys = await writ(['keys', 'list', '--service', 'receipt', '--json']);
    expect(JSON.parse(keys.stdout)).toMatchObject({
      principals: [{ principal_id: RECEIPT, keys: [{ kid: oldKid, status: 'retired', reason: 'rotated', replaced_by: rotation.kid }, { kid: rotation.kid, status: 'active' }] }],
    });
  });

  it("given the task's receipts straddle the rotation and the old key is retired, then its exported bundle verifies offline: each receipt against the key valid when it was signed, the tree head against the new key", async () => {
    // when
    const exported = await writ(['export', taskId, '--out', 'bundle.json', '--wait', '60']);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    const bundle = JSON.parse(await readFile(join(dir, 'bundle.json'), 'utf8')) as { tree_head: { signer_ref: string } };
    expect(bundle.tree_head.signer_ref).toBe(rotation.kid);
    const verified = await writ(['verify', 'bundle.json']);
    // then
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
    expect(verified.stdout).not.toMatch(/^ {2}(FAIL|SKIP) /m);
    expect(verified.stdout).toMatch(new RegExp(`^ {2}PASS\\s+receipt\\.key\\s+.*key ${rotation.previous_kid} of ${RECEIPT} was valid at created_at ${before.receipt.created_at} .*revoked: rotated`, 'm'));
    expect(verified.stdout).toMatch(new RegExp(`^ {2}PASS\\s+receipt\\.key\\s+.*key ${rotation.kid} of ${RECEIPT} was valid at created_at ${after.receipt.created_at} `, 'm'));
    expect(verified.stdout).toMatch(new RegExp(`^ {2}PASS\\s+tree_head\\.signature\\s+`, 'm'));
  });

  it('given a restart, then the service signs with the rotated key, appends nothing more for the rotation, and the whole task still verifies', async () => {
    // given
    const eventsBefore = await principalEvents();
    await service?.stop();
    // when
    service = startService();
    await started(service);
    const third = await deniedReceipt();
    // then
    expect(third.receipt.signer_ref).toBe(rotation.kid);
    const events = await principalEvents();
    expect(events).toEqual(eventsBefore);
    expect(events.map((event) => event.event_type)).toEqual(['principal.registered', 'principal.key_added', 'principal.key_revoked']);
    expect((await writ(['export', taskId, '--out', 'bundle.json', '--force', '--wait', '60'])).code).toBe(0);
    const verified = await writ(['verify', 'bundle.json', '--json']);
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, bundle: { task_id: taskId, receipts: 3 } });
  });

  it('given a rotation signed by a principal that is not a director, then it is refused with the service code and nothing changes', async () => {
    const observerKey = join(dir, 'observer.private.json');
    const keygen = await writ(['principal', 'keygen', '--kid', 'observer-k1', '--out', observerKey]);
    const observer = uniqueName('observer');
    await registerInLog(store, { id: observer, type: 'user', roles: ['observer'], jwk: JSON.parse(keygen.stdout) as PublicEd25519Jwk });
    const eventsBefore = await principalEvents();

    const refused = await writ(['keys', 'rotate', '--service', 'receipt', '--key', observerKey, '--principal', observer]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error RECEIPT_SIGNER_NOT_ALLOWED: /);
    expect(await principalEvents()).toEqual(eventsBefore);
  });
});
