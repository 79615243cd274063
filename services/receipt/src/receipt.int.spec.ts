import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusClient, DeadLetterHeaders, durableName } from '@writ/bus';
import {
  CapabilityGrantClaims,
  ExecutionCompleted,
  IssueReceipt,
  PolicyEvaluated,
  ReceiptIssued,
  type ActionRequest,
  type EventEnvelope,
  type PolicyOutcome,
  type PrincipalRegistered,
} from '@writ/contracts';
import { KeySet, canonicalJson, generateEd25519Key, importEd25519PublicJwk, sha256Hex, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { createLogger } from '@writ/telemetry';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReceipt, verifyReceiptChain } from './application/verify-receipt.js';
import { SERVICE_NAME, createReceiptApp, type ReceiptApp } from './bootstrap.js';
import { loadReceiptConfig } from './config.js';

/**
 * The real receipt service, started in-process against the real NATS on a
 * test-unique subject root and streams (deleted afterwards). Each test seeds
 * a task stream with what ingress, policy, approval, the executor and the
 * orchestrator would have appended, publishes `receipt.issue`, and waits for
 * `receipt.issued` in the log.
 */

const MiB = 1024 ** 2;
const root = uniqueName('t');
const streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };

let nc: NatsConnection;
let store: EventStore;
let bus: BusClient;
let service: ReceiptApp;
let keyDir: string;

interface Attempt {
  readonly taskId: string;
  readonly stepId: string;
  readonly attemptId: string;
  readonly policyResultId: string;
  readonly grantId: string;
  readonly approvalId: string;
  readonly request: ActionRequest;
}

function newAttempt(taskId = uniqueName('task')): Attempt {
  return {
    taskId,
    stepId: uniqueName('step'),
    attemptId: uniqueName('att'),
    policyResultId: uniqueName('pr'),
    grantId: uniqueName('gnt'),
    approvalId: uniqueName('apr'),
    request: {
      action_request_id: uniqueName('ar'),
      task_id: taskId,
      action_class: 'execute_command',
      target_resources: ['src'],
      params: { argv: ['make', 'test'], cwd: 'src' },
      expected_effects: ['test report'],
      reversibility_hint: 'reversible',
      reason: 'run the tests',
      proposed_by: 'agent-1',
      proposed_at: new Date().toISOString(),
    },
  };
}

function draft(attempt: Attempt, eventType: string, entity: { type: EventEnvelope['entity_type']; id: string }, payload: object) {
  return {
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: eventType,
    entity_type: entity.type,
    entity_id: entity.id,
    step_id: attempt.stepId,
    attempt_id: attempt.attemptId,
    occurred_at: new Date().toISOString(),
    actor_type: 'service' as const,
    actor_id: 'test',
    payload: payload as Record<string, unknown>,
    causation_id: null,
    correlation_id: attempt.taskId,
  };
}

const at = () => new Date().toISOString();
const hex = (text: string) => sha256Hex(text);

function awaitingPolicy(attempt: Attempt) {
  return draft(attempt, 'attempt.awaiting_policy', { type: 'attempt', id: attempt.attemptId }, { action_request: attempt.request, at: at() });
}

function policyEvaluated(attempt: Attempt, outcome: PolicyOutcome) {
  const now = at();
  const payload = PolicyEvaluated.parse({
    policy_result: {
      policy_result_id: attempt.policyResultId,
      task_id: attempt.taskId,
      step_id: attempt.stepId,
      attempt_id: attempt.attemptId,
      action_request_id: attempt.request.action_request_id,
      outcome,
      action_class: 'execute_command',
      risk_band: 'moderate',
      action_summary: 'execute_command: make test',
      risk_summary: 'runs tests in the cell',
      policy_profile_ref: 'policy:local_edit_allowed',
      policy_version: 'v1',
      affected_resources: ['src'],
      reasoning_summary: outcome === 'deny' ? 'make is not on the allowlist' : 'tests are allowed',
      matched_rules: ['commands'],
      witness_required: false,
      revalidation_conditions: [],
      evaluated_at: now,
      evaluated_by: 'writ-policy',
    },
    decision: {
      decision_id: uniqueName('dec'),
      task_id: attempt.taskId,
      step_id: attempt.stepId,
      attempt_id: attempt.attemptId,
      decision_type: 'execution',
      summary: `policy ${outcome}`,
      rationale: 'profile rules',
      evidence_refs: [],
      risk_level: 'moderate',
      decided_by: 'writ-policy',
      reversible: true,
      created_at: now,
    },
  });
  return draft(attempt, 'policy.evaluated', { type: 'policy', id: attempt.policyResultId }, payload);
}

function grantIssued(attempt: Attempt) {
  const iat = Math.floor(Date.now() / 1000);
  const claims = CapabilityGrantClaims.parse({
    iss: 'writ-approval',
    sub: 'writ-executor-1',
    aud: 'writ-executor',
    jti: attempt.grantId,
    iat,
    exp: iat + 300,
    task_id: attempt.taskId,
    step_id: attempt.stepId,
    attempt_id: attempt.attemptId,
    action_class: 'execute_command',
    resource_scope: { paths: ['src'], hosts: [] },
    max_uses: 1,
    issued_by_principal_id: 'writ-policy',
    policy_result_ref: `policy_result:${attempt.policyResultId}`,
  });
  return draft(attempt, 'grant.issued', { type: 'grant', id: attempt.grantId }, { claims, jws: 'eyJhbGciOiJFZERTQSJ9.e30.c2ln', at: at() });
}

function executionCompleted(attempt: Attempt, outcome: ExecutionCompleted['outcome'], exitCode: number | null) {
  const stdout = hex(`stdout of ${attempt.attemptId}`);
  const payload = ExecutionCompleted.parse({
    grant_id: attempt.grantId,
    use_no: 1,
    executor_id: 'writ-executor-1',
    outcome,
    exit_code: exitCode,
    timed_out: false,
    duration_ms: 42,
    stdout_sha256: stdout,
    stderr_sha256: hex(''),
    changed_files: [{ path: 'src/report.txt', change: 'added', before_sha256: null, after_sha256: hex('report') }],
    artifacts: [
      {
        artifact_id: `art-${attempt.attemptId}`,
        class: 'evidence',
        kind: 'command.transcript',
        uri: `cas://sha256/${stdout}`,
        content_hash: stdout,
        media_type: 'text/plain',
        byte_size: 12,
        created_at: at(),
        producer: 'writ-executor-1',
        retention_class: 'task',
        trust_tier: 'observed',
        sensitivity_class: 'internal',
      },
    ],
    environment:
      outcome === 'unknown'
        ? null
        : {
            image: 'writ/cell:latest',
            image_id: 'sha256:abc',
            network_mode: 'none',
            readonly_rootfs: true,
            cap_drop: ['ALL'],
            user: '10001:10001',
            memory_bytes: 268_435_456,
            pids_limit: 128,
            mounts: [{ destination: '/workspace', read_only: false }],
          },
    at: at(),
  });
  return draft(attempt, 'execution.completed', { type: 'task', id: attempt.taskId }, payload);
}

function receiptPending(attempt: Attempt, result: 'succeeded' | 'failed') {
  return draft(attempt, 'attempt.receipt_pending', { type: 'attempt', id: attempt.attemptId }, { result_code: result, evidence_refs: [], at: at() });
}

/** An attempt that ran: allowed, granted, executed (exit 0), settled. */
function settledAttempt(attempt: Attempt) {
  return [awaitingPolicy(attempt), policyEvaluated(attempt, 'allow'), grantIssued(attempt), executionCompleted(attempt, 'completed', 0), receiptPending(attempt, 'succeeded')];
}

/** The director who resolves approvals in these tests (registered in `beforeAll`). */
const DIRECTOR = 'director-1';
let directorKey: Ed25519SigningKey;
const PACKET_REF = `sha256:${'b'.repeat(64)}`;

/** `approval.requested` as the approval service appends it (the packet ref in the older `sha256:` form). */
function approvalRequested(attempt: Attempt) {
  const now = Date.now();
  return draft(attempt, 'approval.requested', { type: 'approval', id: attempt.approvalId }, {
    approval_id: attempt.approvalId,
    task_id: attempt.taskId,
    step_id: attempt.stepId,
    attempt_id: attempt.attemptId,
    approval_type: 'action',
    requested_action_ref: `action_request:${attempt.request.action_request_id}`,
    approval_packet_ref: PACKET_REF,
    requested_by: 'agent-1',
    expires_at: new Date(now + 3_600_000).toISOString(),
    at: new Date(now).toISOString(),
  });
}

/** The director's resolution as the approval service records it: with the director's signed ApprovalResolution. */
async function approvalResolved(attempt: Attempt, decision: 'grant' | 'deny') {
  const resolvedAt = at();
  const jws = await signJws(canonicalJson({ approval_id: attempt.approvalId, decision, packet_hash: PACKET_REF, resolved_by: DIRECTOR, resolved_at: resolvedAt }), directorKey);
  const type = decision === 'grant' ? 'approval.granted' : 'approval.denied';
  return draft(attempt, type, { type: 'approval', id: attempt.approvalId }, { resolved_by: DIRECTOR, ...(decision === 'grant' ? { witness_validated: false } : {}), resolution_jws: jws, at: resolvedAt });
}

async function seed(taskId: string, drafts: object[]): Promise<void> {
  const head = await store.head(taskId);
  await store.append(taskId, drafts, head.taskSeq);
}

async function taskEvents(taskId: string): Promise<EventEnvelope[]> {
  return (await store.read(taskId)).map((stored) => stored.event);
}

async function issue(attempt: Attempt, cause: IssueReceipt['cause'], msgId = `${attempt.attemptId}:receipt:${cause}`): Promise<number> {
  const command = IssueReceipt.parse({ task_id: attempt.taskId, step_id: attempt.stepId, attempt_id: attempt.attemptId, cause });
  return (await bus.publish(service.subjects.issue, command, { msgId })).seq;
}

/** The receipt.issued events of the task, once there are `count` of them. */
async function receipts(taskId: string, count = 1): Promise<ReceiptIssued[]> {
  return waitFor(
    async () => {
      const issued = (await taskEvents(taskId)).filter((event) => event.event_type === 'receipt.issued').map((event) => ReceiptIssued.parse(event.payload));
      return issued.length >= count ? issued : undefined;
    },
    { what: `${count} receipt(s) on ${taskId}` },
  );
}

/** The receipt service's public keys as the log describes them (what every verifier trusts). */
async function receiptKeys(): Promise<KeySet> {
  const events = await store.readEntity('principal', service.principalId);
  const registered = events.find((stored) => stored.event.event_type === 'principal.registered')?.event.payload as PrincipalRegistered | undefined;
  return KeySet.of(await Promise.all((registered?.keys ?? []).map((jwk) => importEd25519PublicJwk(jwk))));
}

async function waitHandled(seq: number): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const durable = durableName(SERVICE_NAME, service.subjects.issue);
  await waitFor(
    async () => {
      const info = await jsm.consumers.info(streams.commands, durable);
      return info.ack_floor.stream_seq >= seq && info.num_ack_pending === 0 && info.num_pending === 0 ? true : undefined;
    },
    { what: `receipt consumer to settle at ${seq}` },
  );
}

beforeAll(async () => {
  nc = await connectTestNats('receipt-int');
  keyDir = await mkdtemp(join(tmpdir(), 'writ-receipt-'));
  const config = loadReceiptConfig({
    WRIT_NATS_URL: NATS_URL,
    WRIT_HTTP_PORT: '0',
    WRIT_HTTP_HOST: '127.0.0.1',
    WRIT_SUBJECT_ROOT: root,
    WRIT_EVENTS_STREAM: streams.events,
    WRIT_INGRESS_STREAM: streams.ingress,
    WRIT_COMMANDS_STREAM: streams.commands,
    WRIT_DLQ_STREAM: streams.dlq,
    WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
    WRIT_BUS_MAX_BYTES: String(64 * MiB),
    WRIT_RECEIPT_KEY_FILE: join(keyDir, 'receipt.jwk.json'),
  });
  service = await createReceiptApp(config, { logger: createLogger('receipt-test', { level: 'silent' }), pullExpiresMs: 1_000 });
  store = await EventStore.open(nc, { stream: streams.events, subjectPrefix: config.streams.eventsPrefix, maxBytes: 64 * MiB });
  bus = new BusClient(nc);
  directorKey = await generateEd25519Key({ kid: `${DIRECTOR}-k1` });
  const registeredAt = new Date(Date.now() - 60_000).toISOString();
  const registered: PrincipalRegistered = { principal_id: DIRECTOR, principal_type: 'user', display_name: DIRECTOR, roles: ['director'], keys: [directorKey.publicJwk], registered_by: 'test', at: registeredAt };
  await store.appendToEntity('principal', DIRECTOR, [
    { event_id: uniqueName('evt'), schema_version: 1, event_type: 'principal.registered', entity_type: 'principal', entity_id: DIRECTOR, occurred_at: registeredAt, actor_type: 'system', actor_id: 'test', payload: registered, causation_id: null, correlation_id: DIRECTOR },
  ], 0);
});

afterAll(async () => {
  await service?.close();
  await bus?.close();
  if (nc !== undefined) {
    await deleteStreams(nc, streams.events, streams.ingress, streams.commands, streams.dlq);
    await nc.close();
  }
  await rm(keyDir, { recursive: true, force: true });
});

describe('receipt service', () => {
  it('reports ready once its consumer is bound', async () => {
    const ready = await fetch(`${service.url}/readyz`);
    expect(ready.status).toBe(200);
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
  });

  it("receipts a settled attempt; the receipt verifies against the receipt principal's key from the log", async () => {
    // given an attempt that ran and settled
    const attempt = newAttempt();
    await seed(attempt.taskId, settledAttempt(attempt));
    // when the orchestrator asks for its receipt
    await issue(attempt, 'settled');
    const [issued] = await receipts(attempt.taskId);
    const { receipt, jws } = issued as ReceiptIssued;

    // then it verifies with the key the log publishes for the receipt principal
    const verification = await verifyReceipt(receipt, jws, await receiptKeys());
    expect(verification).toMatchObject({ ok: true, kid: service.kid });
    // and the JWS payload is the canonical body, naming the action request
    const payload = Buffer.from(jws.split('.')[1] as string, 'base64url').toString('utf8');
    expect(payload).toContain(attempt.request.action_request_id);
    expect(sha256Hex(payload)).toBe(receipt.receipt_hash);
    // and it says what was intended, authorized, ran, where, and what came out
    expect(receipt).toMatchObject({
      task_id: attempt.taskId,
      attempt_id: attempt.attemptId,
      receipt_class: 'command_execution',
      action_request_ref: `action_request:${attempt.request.action_request_id}`,
      input_refs: [`sha256:${sha256Hex(canonicalJson(attempt.request.params))}`],
      policy_result_ref: `policy_result:${attempt.policyResultId}`,
      approval_ref: null,
      capability_grant_ref: `grant:${attempt.grantId}`,
      result_code: 'succeeded',
      replay_class: 'observe_only',
      verifiability: 'signed',
      signer_ref: service.kid,
      prev_receipt_hash: null,
    });
    expect(receipt.environment_ref).toMatch(/^sha256:[0-9a-f]{64}$/);
    // and it binds the chain of authority: the request as recorded, no approval nor witness, the cell as applied
    expect(receipt.request_hash).toBe(sha256Hex(canonicalJson(attempt.request)));
    expect(receipt.policy_result_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(receipt).toMatchObject({ state_witness_ref: null, attestation: { image_id: 'sha256:abc', network_mode: 'none', pids_limit: 128 } });
    // and the file it added in a cell without network can be deleted again, if still unchanged
    expect(receipt).toMatchObject({
      rollback_supported: true,
      rollback: { method: 'compensating_local_actions', steps: [{ action_class: 'delete_local', path: 'src/report.txt', expected_sha256: hex('report') }] },
    });
    expect(receipt.not_asserted).toEqual(expect.arrayContaining([expect.stringContaining('nothing happened outside Writ')]));
    expect(receipt.output_refs).toEqual(expect.arrayContaining([`artifact:art-${attempt.attemptId}`, `sha256:${hex(`stdout of ${attempt.attemptId}`)}`]));
    expect(receipt.receipt_id).toMatch(/^rct-[0-9a-f]{32}$/);
  });

  it('chains the receipts of one task', async () => {
    // given a task whose first attempt failed and whose retry succeeded
    const first = newAttempt();
    const retry = { ...newAttempt(first.taskId), request: { ...first.request, action_request_id: uniqueName('ar') } };
    await seed(first.taskId, [awaitingPolicy(first), policyEvaluated(first, 'allow'), grantIssued(first), executionCompleted(first, 'completed', 2), receiptPending(first, 'failed')]);
    await issue(first, 'settled');
    await receipts(first.taskId, 1);
    await seed(first.taskId, settledAttempt(retry));
    // when the retry is receipted
    await issue(retry, 'settled');
    const [one, two] = await receipts(first.taskId, 2);
    // then the second receipt links to the first
    expect(one?.receipt).toMatchObject({ attempt_id: first.attemptId, result_code: 'failed', prev_receipt_hash: null });
    expect(two?.receipt).toMatchObject({ attempt_id: retry.attemptId, result_code: 'succeeded', prev_receipt_hash: one?.receipt.receipt_hash });
    expect(verifyReceiptChain([one, two].map((issued) => issued?.receipt ?? {}))).toEqual({ ok: true, length: 2 });
    const keys = await receiptKeys();
    expect((await verifyReceipt(two?.receipt, two?.jws, keys)).ok).toBe(true);
  });

  it('detects a tampered receipt', async () => {
    const attempt = newAttempt();
    await seed(attempt.taskId, settledAttempt(attempt));
    await issue(attempt, 'settled');
    const [issued] = await receipts(attempt.taskId);
    const { receipt, jws } = issued as ReceiptIssued;
    const keys = await receiptKeys();

    // a changed field, with and without a recomputed hash
    const changed = { ...receipt, result_code: 'failed' as const };
    const { receipt_hash: _hash, signature: _signature, ...body } = changed;
    const rehashed = { ...changed, receipt_hash: sha256Hex(canonicalJson(body)) };
    expect(await verifyReceipt(changed, jws, keys)).toMatchObject({ ok: false, code: 'RECEIPT_HASH_MISMATCH' });
    expect(await verifyReceipt(rehashed, jws, keys)).toMatchObject({ ok: false, code: 'RECEIPT_SIGNATURE_INVALID' });
    // and a broken chain link
    expect(verifyReceiptChain([{ ...receipt, prev_receipt_hash: hex('elsewhere') }])).toMatchObject({ ok: false, code: 'RECEIPT_CHAIN_BROKEN' });
  });

  it('receipts a policy denial: result refused, no grant, nothing ran', async () => {
    const attempt = newAttempt();
    await seed(attempt.taskId, [awaitingPolicy(attempt), policyEvaluated(attempt, 'deny')]);
    await issue(attempt, 'policy_denied');
    const [issued] = await receipts(attempt.taskId);
    expect(issued?.receipt).toMatchObject({
      receipt_class: 'command_execution',
      result_code: 'refused',
      capability_grant_ref: null,
      environment_ref: null,
      output_refs: [],
      policy_result_ref: `policy_result:${attempt.policyResultId}`,
      replay_class: 'explain_only',
    });
    expect(issued?.receipt.result_summary).toContain('make is not on the allowlist');
    expect((await verifyReceipt(issued?.receipt, issued?.jws, await receiptKeys())).ok).toBe(true);
  });

  it('receipts an approval denial as an approval resolution, without a grant', async () => {
    const attempt = newAttempt();
    await seed(attempt.taskId, [
      awaitingPolicy(attempt),
      policyEvaluated(attempt, 'require_approval'),
      approvalRequested(attempt),
      await approvalResolved(attempt, 'deny'),
    ]);
    await issue(attempt, 'approval_denied');
    const [issued] = await receipts(attempt.taskId);
    expect(issued?.receipt).toMatchObject({
      receipt_class: 'approval_resolution',
      result_code: 'refused',
      approval_ref: `approval:${attempt.approvalId}`,
      capability_grant_ref: null,
    });
    expect(issued?.receipt.result_summary).toContain('denied by director-1');
  });

  it('receipts an approval resolution on its own (approval_resolved): bound to the approval and its resolver, chained before the denial receipt, both marked with their cause', async () => {
    const attempt = newAttempt();
    await seed(attempt.taskId, [
      awaitingPolicy(attempt),
      policyEvaluated(attempt, 'require_approval'),
      approvalRequested(attempt),
      await approvalResolved(attempt, 'deny'),
    ]);
    const command = IssueReceipt.parse({ task_id: attempt.taskId, step_id: attempt.stepId, attempt_id: attempt.attemptId, cause: 'approval_resolved', approval_id: attempt.approvalId });
    await bus.publish(service.subjects.issue, command, { msgId: `${attempt.attemptId}:receipt:approval_resolved` });
    const [resolution] = await receipts(attempt.taskId);
    expect(resolution).toMatchObject({
      cause: 'approval_resolved',
      receipt: { receipt_class: 'approval_resolution', result_code: 'refused', approval_ref: `approval:${attempt.approvalId}`, capability_grant_ref: null, prev_receipt_hash: null },
    });
    expect(resolution?.receipt.input_refs).toContain(`sha256:${'b'.repeat(64)}`);
    expect(resolution?.receipt.result_summary).toContain(`approval ${attempt.approvalId} denied by director-1`);
    expect((await verifyReceipt(resolution?.receipt, resolution?.jws, await receiptKeys())).ok).toBe(true);
    // the attempt's own denial receipt follows, chained to it
    await issue(attempt, 'approval_denied');
    const [, denial] = await receipts(attempt.taskId, 2);
    expect(denial).toMatchObject({ cause: 'approval_denied', receipt: { prev_receipt_hash: resolution?.receipt.receipt_hash } });
    expect(denial?.receipt.receipt_id).not.toBe(resolution?.receipt.receipt_id);
  });

  it('given an approval.granted forged into the log with no signature, when its resolution is to be receipted, then APPROVAL_RESOLUTION_UNSIGNED is dead-lettered and no receipt is signed', async () => {
    // given
    const attempt = newAttempt();
    await seed(attempt.taskId, [
      awaitingPolicy(attempt),
      policyEvaluated(attempt, 'require_approval'),
      approvalRequested(attempt),
      draft(attempt, 'approval.granted', { type: 'approval', id: attempt.approvalId }, { resolved_by: DIRECTOR, witness_validated: false, at: at() }),
    ]);
    // when
    const command = IssueReceipt.parse({ task_id: attempt.taskId, step_id: attempt.stepId, attempt_id: attempt.attemptId, cause: 'approval_resolved', approval_id: attempt.approvalId });
    const { seq } = await bus.publish(service.subjects.issue, command, { msgId: `${attempt.attemptId}:receipt:approval_resolved` });
    await waitHandled(seq);
    // then
    const jsm = await jetstreamManager(nc);
    const letter = await waitFor(
      async () => {
        const message = await jsm.streams.getMessage(streams.dlq, { last_by_subj: `${root}.dlq.receipt.issue` }).catch(() => null);
        return message?.header.get(DeadLetterHeaders.STREAM_SEQ) === String(seq) ? message : undefined;
      },
      { what: 'the dead letter of the receipt command' },
    );
    expect(letter.header.get(DeadLetterHeaders.ERROR_CODE)).toBe('APPROVAL_RESOLUTION_UNSIGNED');
    expect((await taskEvents(attempt.taskId)).some((event) => event.event_type === 'receipt.issued')).toBe(false);
  });

  it("receipts a director's signed grant as an approval resolution that binds the signature (the resolution payload's hash)", async () => {
    // given
    const attempt = newAttempt();
    const granted = await approvalResolved(attempt, 'grant');
    await seed(attempt.taskId, [awaitingPolicy(attempt), policyEvaluated(attempt, 'require_approval'), approvalRequested(attempt), granted]);
    // when
    const command = IssueReceipt.parse({ task_id: attempt.taskId, step_id: attempt.stepId, attempt_id: attempt.attemptId, cause: 'approval_resolved', approval_id: attempt.approvalId });
    await bus.publish(service.subjects.issue, command, { msgId: `${attempt.attemptId}:receipt:approval_resolved` });
    // then
    const [resolution] = await receipts(attempt.taskId);
    expect(resolution?.receipt).toMatchObject({ result_code: 'succeeded', approval_resolution: { status: 'granted', resolved_by: DIRECTOR, resolution_hash: hex(canonicalJson(granted.payload)) } });
  });

  it('receipts an unknown outcome as such, and its later settlement with a receipt of its own', async () => {
    // given an attempt whose effect may or may not have happened
    const attempt = newAttempt();
    await seed(attempt.taskId, [awaitingPolicy(attempt), policyEvaluated(attempt, 'allow'), grantIssued(attempt), executionCompleted(attempt, 'unknown', null)]);
    await issue(attempt, 'settled', `${attempt.attemptId}:receipt:unknown`);
    const [uncertain] = await receipts(attempt.taskId);
    expect(uncertain?.receipt).toMatchObject({ result_code: 'unknown_outcome', replay_class: 'observe_only', capability_grant_ref: `grant:${attempt.grantId}`, environment_ref: null });
    // when observation settles it as succeeded and the orchestrator asks again
    await seed(attempt.taskId, [receiptPending(attempt, 'succeeded')]);
    await issue(attempt, 'settled', `${attempt.attemptId}:receipt:settled`);
    // then a second receipt records the settled result, chained to the first
    const [, settled] = await receipts(attempt.taskId, 2);
    expect(settled?.receipt).toMatchObject({ result_code: 'succeeded', prev_receipt_hash: uncertain?.receipt.receipt_hash });
    expect(settled?.receipt.receipt_id).not.toBe(uncertain?.receipt.receipt_id);
  });

  it('issues one receipt for a redelivered command', async () => {
    const attempt = newAttempt();
    await seed(attempt.taskId, settledAttempt(attempt));
    // when the command arrives twice (distinct message ids: past the dedupe window)
    await issue(attempt, 'settled', `${attempt.attemptId}:1`);
    const second = await issue(attempt, 'settled', `${attempt.attemptId}:2`);
    await waitHandled(second);
    // then the task holds one receipt
    expect((await taskEvents(attempt.taskId)).filter((event) => event.event_type === 'receipt.issued')).toHaveLength(1);
  });

  it('given an attempt receipted as settled, when the command is redelivered and would now be worded to another result (a release between the append and the ack), then the first receipt stands alone', async () => {
    const attempt = newAttempt();
    await seed(attempt.taskId, settledAttempt(attempt));
    await issue(attempt, 'settled', `${attempt.attemptId}:1`);
    const [first] = await receipts(attempt.taskId);
    expect(first?.receipt.result_code).toBe('succeeded');
    // when the log reads to another settled result and the same command arrives again
    await seed(attempt.taskId, [receiptPending(attempt, 'failed')]);
    const again = await issue(attempt, 'settled', `${attempt.attemptId}:2`);
    await waitHandled(again);
    // then no second receipt contradicts the first
    const issued = (await taskEvents(attempt.taskId)).filter((event) => event.event_type === 'receipt.issued');
    expect(issued.map((event) => event.entity_id)).toEqual([first?.receipt.receipt_id]);
  });
});
