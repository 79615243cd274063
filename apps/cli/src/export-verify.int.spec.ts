import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { CapabilityGrantClaims, ExecutionCompleted, IssueReceipt, PolicyEvaluated, PrincipalRegistered, type EventEnvelope, type PublicEd25519Jwk } from '@writ/contracts';
import { loadOperatorSigner, signServiceEnrollment, signedPrincipalRegistration } from '@writ/runtime';
import { canonicalJson, generateEd25519Key, sha256Hex, signClaims, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { receiptServiceKey, sealTestReceipt } from '../test/receipt.fixture.js';
import { ServiceProcess, operatorEnv } from '../test/service-process.fixture.js';
import { run, type CliIo } from './main.js';

/**
 * `writ export` and `writ verify` against the real NATS and the BUILT receipt
 * service (services/receipt/dist/main.js, a child process on this test's own
 * subject root, streams and transparency log; build it first:
 * `npx nx run @writ/receipt:build`). The task's events are appended as the
 * orchestrator, policy, approval and executor services append them (the
 * grant signed by an approval key registered in the log); the receipt
 * service itself builds, signs and sequences the receipts.
 */

const MiB = 1024 ** 2;
const root = uniqueName('t');
const logId = uniqueName('log');
const streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
const env = { ...operatorEnv(), WRIT_SUBJECT_ROOT: root, WRIT_EVENTS_STREAM: streams.events, WRIT_NATS_URL: NATS_URL };
const APPROVAL = 'writ-approval';

let nc: NatsConnection;
let store: EventStore;
let dir: string;
let service: ServiceProcess | undefined;
let approvalKey: Ed25519SigningKey;
/** director-1: registered with role director; signs the grant's ApprovalResolution. */
let directorKey: Ed25519SigningKey;
const taskId = uniqueName('task');

async function writ(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => new Date() };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

const at = () => new Date().toISOString();

function draft(eventType: string, entity: { type: EventEnvelope['entity_type']; id: string }, attemptId: string, payload: Record<string, unknown>, actor = 'writ-orchestrator') {
  return {
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: eventType,
    entity_type: entity.type,
    entity_id: entity.id,
    step_id: 'step-1',
    attempt_id: attemptId,
    occurred_at: at(),
    actor_type: 'service' as const,
    actor_id: actor,
    payload,
    causation_id: null,
    correlation_id: taskId,
  };
}

function request(id: string, argv: string[]) {
  return {
    action_request_id: id,
    task_id: taskId,
    action_class: 'execute_command',
    target_resources: ['build'],
    params: { argv, cwd: '.' },
    expected_effects: ['the build directory is replaced'],
    reversibility_hint: 'irreversible',
    reason: 'clean build',
    proposed_by: 'agent-1',
    proposed_at: at(),
  };
}

function policyEvaluated(attemptId: string, policyResultId: string, actionRequestId: string, outcome: 'require_approval' | 'deny') {
  const now = at();
  return PolicyEvaluated.parse({
    policy_result: {
      policy_result_id: policyResultId,
      task_id: taskId,
      step_id: 'step-1',
      attempt_id: attemptId,
      action_request_id: actionRequestId,
      outcome,
      action_class: 'execute_command',
      risk_band: 'high',
      action_summary: 'execute_command: rm -rf build',
      risk_summary: 'deletes a directory',
      policy_profile_ref: 'policy:local_edit_allowed',
      policy_version: 'v1',
      affected_resources: ['build'],
      reasoning_summary: outcome === 'deny' ? 'never in this profile' : 'destructive commands need a director',
      matched_rules: ['destructive'],
      witness_required: outcome !== 'deny',
      revalidation_conditions: [],
      evaluated_at: now,
      evaluated_by: 'writ-policy',
    },
    decision: {
      decision_id: uniqueName('dec'),
      task_id: taskId,
      step_id: 'step-1',
      attempt_id: attemptId,
      decision_type: 'execution',
      summary: `policy ${outcome}`,
      rationale: 'profile rules',
      evidence_refs: [],
      risk_level: 'high',
      decided_by: 'writ-policy',
      reversible: false,
      created_at: now,
    },
  });
}

/** Attempt 1 needs approval, is granted, runs; attempt 2 is denied by policy. */
async function seedTask(): Promise<void> {
  const first = request('ar-1', ['rm', '-rf', 'build']);
  const witnessBody = { fingerprints: { build: 'sha256:0f' }, observed_at: at() };
  const witnessRef = `sha256:${sha256Hex(canonicalJson({ task_id: taskId, ...witnessBody }))}`;
  const stateWitness = { ref: witnessRef, ...witnessBody };
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
  const packet = {
    task_id: taskId,
    step_id: 'step-1',
    attempt_id: 'att-1',
    action_request_id: 'ar-1',
    action_class: 'execute_command',
    action_summary: 'execute_command: rm -rf build',
    risk_band: 'high',
    risk_summary: 'risk high: destructive',
    decision_rationale: 'Proposed by agent-1: clean build',
    evidence_refs: [],
    expected_effects: ['the build directory is replaced'],
    impacted_resources: ['build'],
    rollback_available: false,
    expires_at: expiresAt,
    state_witness_ref: witnessRef,
    policy_result_ref: 'policy_result:pr-1',
  };
  // As the approval service stores it: `artifact:sha256:` of the RFC 8785 packet document.
  const packetRef = `artifact:sha256:${sha256Hex(canonicalJson({ format: 'writ.approval-packet/1', packet, state_witness: stateWitness }))}`;
  const iat = Math.floor(Date.now() / 1000);
  const claims = CapabilityGrantClaims.parse({
    iss: APPROVAL,
    sub: 'writ-executor-1',
    aud: 'writ-executor',
    jti: 'gnt-1',
    iat,
    exp: iat + 300,
    task_id: taskId,
    step_id: 'step-1',
    attempt_id: 'att-1',
    action_class: 'execute_command',
    resource_scope: { paths: ['build'], hosts: [] },
    max_uses: 1,
    issued_by_principal_id: 'director-1',
    approval_ref: 'approval:apr-1',
    policy_result_ref: 'policy_result:pr-1',
  });
  const grantJws = await signClaims(claims, approvalKey, {
    issuer: claims.iss,
    audience: claims.aud,
    subject: claims.sub,
    jwtId: claims.jti,
    issuedAt: new Date(claims.iat * 1000),
    expiresAt: new Date(claims.exp * 1000),
    typ: 'writ-grant+jwt',
  });
  const stdout = sha256Hex('removed build');
  const execution = ExecutionCompleted.parse({
    grant_id: 'gnt-1',
    use_no: 1,
    executor_id: 'writ-executor-1',
    outcome: 'completed',
    exit_code: 0,
    timed_out: false,
    duration_ms: 42,
    stdout_sha256: stdout,
    stderr_sha256: sha256Hex(''),
    changed_files: [{ path: 'build/marker', change: 'deleted', before_sha256: sha256Hex('marker'), after_sha256: null }],
    artifacts: [
      {
        artifact_id: 'art-1',
        class: 'evidence',
        kind: 'command.transcript',
        uri: `cas://sha256/${stdout}`,
        content_hash: stdout,
        media_type: 'text/plain',
        byte_size: 13,
        created_at: at(),
        producer: 'writ-executor-1',
        retention_class: 'task',
        trust_tier: 'observed',
        sensitivity_class: 'internal',
      },
    ],
    environment: {
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
  const second = request('ar-2', ['rm', '-rf', '/']);
  await store.append(
    taskId,
    [
      draft('task.created', { type: 'task', id: taskId }, 'att-1', { title: 'clean build', at: at() }),
      draft('attempt.awaiting_policy', { type: 'attempt', id: 'att-1' }, 'att-1', { action_request: first, at: at() }),
      draft('policy.evaluated', { type: 'policy', id: 'pr-1' }, 'att-1', policyEvaluated('att-1', 'pr-1', 'ar-1', 'require_approval'), 'writ-policy'),
      draft(
        'approval.requested',
        { type: 'approval', id: 'apr-1' },
        'att-1',
        {
          approval_id: 'apr-1',
          task_id: taskId,
          step_id: 'step-1',
          attempt_id: 'att-1',
          approval_type: 'action',
          requested_action_ref: 'action_request:ar-1',
          approval_packet_ref: packetRef,
          requested_by: 'agent-1',
          policy_result_ref: 'policy_result:pr-1',
          expires_at: expiresAt,
          state_witness: stateWitness,
          packet,
          at: at(),
        },
        APPROVAL,
      ),
      draft(
        'approval.granted',
        { type: 'approval', id: 'apr-1' },
        'att-1',
        {
          resolved_by: 'director-1',
          witness_validated: true,
          // The director's signed resolution over the packet, as the approval service records it.
          resolution_jws: await signJws(
            canonicalJson({ approval_id: 'apr-1', decision: 'grant', packet_hash: packetRef.slice('artifact:'.length), resolved_by: 'director-1', resolved_at: at() }),
            directorKey,
          ),
          at: at(),
        },
        APPROVAL,
      ),
      draft('grant.issued', { type: 'grant', id: 'gnt-1' }, 'att-1', { claims, jws: grantJws, at: at() }, APPROVAL),
      draft('execution.completed', { type: 'task', id: taskId }, 'att-1', execution, 'writ-executor-1'),
      draft('attempt.receipt_pending', { type: 'attempt', id: 'att-1' }, 'att-1', { result_code: 'succeeded', evidence_refs: [], at: at() }),
      draft('attempt.awaiting_policy', { type: 'attempt', id: 'att-2' }, 'att-2', { action_request: second, at: at() }),
      draft('policy.evaluated', { type: 'policy', id: 'pr-2' }, 'att-2', policyEvaluated('att-2', 'pr-2', 'ar-2', 'deny'), 'writ-policy'),
    ],
    0,
  );
}

/** Appends a principal's registration on its own subject (what ingress, or a service for itself, appends). */
async function appendPrincipal(registered: PrincipalRegistered): Promise<void> {
  await store.appendToEntity(
    'principal',
    registered.principal_id,
    [
      {
        event_id: uniqueName('evt'),
        schema_version: 1,
        event_type: 'principal.registered',
        entity_type: 'principal',
        entity_id: registered.principal_id,
        occurred_at: registered.at,
        actor_type: 'service',
        actor_id: registered.registered_by,
        payload: registered,
        causation_id: null,
        correlation_id: registered.principal_id,
      },
    ],
    0,
  );
}

async function issue(command: IssueReceipt, count: number): Promise<void> {
  await jetstream(nc).publish(`${root}.cmd.receipt.issue`, JSON.stringify(IssueReceipt.parse(command)), { msgID: `${command.attempt_id}:${command.cause}` });
  await waitFor(
    async () => ((await store.read(taskId)).filter(({ event }) => event.event_type === 'receipt.issued').length >= count ? true : undefined),
    { what: `${count} receipt(s) on ${taskId}`, timeoutMs: 30_000, intervalMs: 50 },
  );
}

beforeAll(async () => {
  nc = await connectTestNats('cli-export-verify');
  store = await EventStore.open(nc, { stream: streams.events, subjectPrefix: `${root}.evt`, maxBytes: 64 * MiB });
  dir = await mkdtemp(join(tmpdir(), 'writ-cli-bundle-'));
  approvalKey = await generateEd25519Key({ kid: 'writ-approval-k1' });
  directorKey = await generateEd25519Key({ kid: 'director-1-k1' });
  // Registered as the stack registers them: the approval service with the operator's enrollment, the
  // director by an operator-signed registration (writ principal add); both chain to the trust anchor.
  const operator = await loadOperatorSigner();
  if (operator === undefined) throw new Error('WRIT_OPERATOR_KEY is not set: run the tests through npm test (writ init makes the operator)');
  const registeredAt = new Date(Date.now() - 60_000);
  await appendPrincipal(
    PrincipalRegistered.parse({
      principal_id: APPROVAL,
      principal_type: 'service',
      display_name: 'Writ approval service',
      roles: [],
      keys: [approvalKey.publicJwk],
      registered_by: APPROVAL,
      at: registeredAt.toISOString(),
      authorization: await signServiceEnrollment(APPROVAL, { ...operator, now: registeredAt }),
    }),
  );
  await appendPrincipal(
    await signedPrincipalRegistration(
      { principal_id: 'director-1', principal_type: 'user', display_name: 'Director', roles: ['director'], keys: [directorKey.publicJwk as PublicEd25519Jwk] },
      { ...operator, now: registeredAt },
    ),
  );
  await seedTask();

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
  // The service creates the commands stream and registers its principal as it starts.
  const jsm = await jetstreamManager(nc);
  await waitFor(
    async () => {
      service?.assertRunning();
      const principal = await store.readEntity('principal', 'writ-receipt').catch(() => []);
      const commands = await jsm.streams.info(streams.commands).catch(() => undefined);
      return principal.length > 0 && commands !== undefined ? true : undefined;
    },
    { what: 'the receipt service started', timeoutMs: 30_000, intervalMs: 100 },
  );
  await issue({ task_id: taskId, step_id: 'step-1', attempt_id: 'att-1', cause: 'approval_resolved', approval_id: 'apr-1' }, 1);
  await issue({ task_id: taskId, step_id: 'step-1', attempt_id: 'att-1', cause: 'settled' }, 2);
  await issue({ task_id: taskId, step_id: 'step-1', attempt_id: 'att-2', cause: 'policy_denied' }, 3);
}, 120_000);

afterAll(async () => {
  await service?.stop();
  if (nc !== undefined) {
    await deleteStreams(nc, ...Object.values(streams));
    await nc.close();
  }
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('writ export', () => {
  it("given a task with three receipts, then it writes a bundle that verifies offline: every check PASSes, the keys are UNANCHORED without --trust and anchored with the log's keys", async () => {
    // when
    const exported = await writ(['export', taskId, '--out', 'bundle.json', '--wait', '60']);
    // then
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(new RegExp(`^wrote bundle\\.json: task ${taskId}, 3 receipt\\(s\\), 13 event\\(s\\), log ${logId} at \\d+ leaves, \\d+ bytes, bundle_hash [0-9a-f]{64}$`));

    // when verified with nothing but the file
    const offline = await writ(['verify', 'bundle.json']);
    expect(offline.stderr).toBe('');
    expect(offline.code).toBe(0);
    expect(offline.stdout).not.toMatch(/^ {2}(FAIL|SKIP) /m);
    expect(offline.stdout).toMatch(/^ {2}UNANCHORED\s+trust\.anchor /m);
    for (const check of ['bundle.seal', 'events.chain', 'receipt.signature', 'receipt.key', 'receipt.references', 'receipt.attestation', 'receipt.grant', 'receipt.inclusion', 'tree_head.signature']) {
      expect(offline.stdout).toMatch(new RegExp(`^ {2}PASS\\s+${check.replace('.', '\\.')} `, 'm'));
    }
    expect(offline.stdout).toContain('not asserted by this evidence:');
    expect(offline.stdout).toMatch(/^verified: \d+ checks passed, with keys taken from the evidence itself \(UNANCHORED\)/m);

    // when verified against the keys the log publishes for the signers
    const receiptPrincipal = await store.readEntity('principal', 'writ-receipt');
    const receiptKeys = (receiptPrincipal[0]?.event.payload as { keys: unknown[] }).keys;
    await writeFile(join(dir, 'jwks.json'), JSON.stringify({ keys: [...receiptKeys, approvalKey.publicJwk] }));
    const anchored = await writ(['verify', 'bundle.json', '--trust', 'jwks.json', '--json']);
    expect(anchored.code).toBe(0);
    expect(JSON.parse(anchored.stdout)).toMatchObject({ ok: true, anchored: true, bundle: { task_id: taskId, receipts: 3 } });

    // and a JWKS without the approval key does not anchor the grant
    await writeFile(join(dir, 'receipt-only.json'), JSON.stringify({ keys: receiptKeys }));
    const partial = await writ(['verify', 'bundle.json', '--trust', 'receipt-only.json']);
    expect(partial.code).toBe(1);
    expect(partial.stderr).toMatch(/^error CLI_BUNDLE_UNVERIFIED: .*trust\.anchor \(keys\) TRUST_KEY_UNTRUSTED/);
  });

  it('given one byte of the bundle flipped, when verified, then it exits 1 naming the failed checks', async () => {
    // given the bundle with one character of the first receipt's summary changed
    const text = await readFile(join(dir, 'bundle.json'), 'utf8');
    const at = text.indexOf('"result_summary":"') + '"result_summary":"'.length;
    const flipped = `${text.slice(0, at)}${text[at] === 'x' ? 'y' : 'x'}${text.slice(at + 1)}`;
    await writeFile(join(dir, 'flipped.json'), flipped);
    // when
    const result = await writ(['verify', 'flipped.json']);
    // then
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_BUNDLE_UNVERIFIED: bundle flipped\.json does not verify: bundle\.seal \(bundle\) BUNDLE_SEAL_MISMATCH/);
    expect(result.stdout).toMatch(/^ {2}FAIL\s+receipt\.event\s+BUNDLE_RECEIPT_EVENT_MISMATCH: /m);
  });

  it('given an existing file, then export keeps it unless --force; a task without receipts has no bundle', async () => {
    const kept = await writ(['export', taskId, '--out', 'bundle.json']);
    expect(kept.code).toBe(1);
    expect(kept.stderr).toMatch(/^error CLI_FILE_EXISTS: /);
    expect((await writ(['export', taskId, '--out', 'bundle.json', '--force', '--json'])).code).toBe(0);

    const bare = uniqueName('task');
    await store.append(bare, [{ ...draft('task.created', { type: 'task', id: bare }, 'att-0', { title: 'nothing yet', at: at() }), correlation_id: bare }], 0);
    const none = await writ(['export', bare]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error EVIDENCE_NO_RECEIPTS: /);
    const live = await writ(['verify', '--task', bare]);
    expect(live.code).toBe(0);
    expect(live.stdout).toContain('the task has no receipt yet');

    expect((await writ(['export', uniqueName('task')])).stderr).toMatch(/^error CLI_TASK_NOT_FOUND: /);
  });
});

describe('writ verify --live', () => {
  it("given the log grew after the export, then the live head verifies and the bundle's tree is a prefix of it", async () => {
    // given another task's receipt sequenced after the export, and a head signed over it
    const other = uniqueName('task');
    // signed with the receipt service's own key, as the service would: the log admits nothing else
    const key = await receiptServiceKey(join(dir, 'receipt.jwk.json'));
    const body = {
      receipt_id: uniqueName('rct'),
      task_id: other,
      step_id: 'step-1',
      attempt_id: 'att-1',
      receipt_class: 'command_execution',
      action_request_ref: 'action_request:ar-9',
      input_refs: [],
      environment_ref: null,
      policy_result_ref: null,
      approval_ref: null,
      capability_grant_ref: null,
      output_refs: [],
      result_code: 'refused',
      result_summary: 'refused: nothing ran',
      created_at: at(),
      verifiability: 'signed',
      prev_receipt_hash: null,
    };
    const { receipt, jws } = await sealTestReceipt(body, key);
    await store.append(other, [{ ...draft('receipt.issued', { type: 'receipt', id: body.receipt_id }, 'att-1', { receipt, jws, cause: 'refused' }, 'writ-receipt'), correlation_id: other }], 0);
    await waitFor(async () => ((await store.readEntity('transparency_log', logId)).filter(({ event }) => event.event_type === 'tlog.entry_appended').length >= 4 ? true : undefined), {
      what: 'the fourth leaf',
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    expect((await writ(['tlog', 'head'])).code).toBe(0);
    // when
    const result = await writ(['verify', 'bundle.json', '--live']);
    // then
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ {2}PASS\s+log\.head\s+signed by writ-receipt-/m);
    expect(result.stdout).toMatch(new RegExp(`^log ${logId}: 3 → 4 leaves\\n {2}PASS\\s+log\\.consistency `, 'm'));
  });

  it('given --live with --task, then it is a usage error', async () => {
    expect((await writ(['verify', '--task', taskId, '--live'])).code).toBe(2);
  });
});

describe('writ verify --task', () => {
  it('given the live task, then its whole chain, its receipts and their inclusion in the live transparency log verify', async () => {
    // when
    const result = await writ(['verify', '--task', taskId]);
    // then
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toMatch(new RegExp(`^task ${taskId} \\(live log\\): task ${taskId}, 3 receipt\\(s\\)`));
    expect(result.stdout).toMatch(/^ {2}PASS\s+events\.chain\s+13 events on /m);
    expect(result.stdout).toMatch(/^ {2}PASS\s+approval\.authority\s+approval\.granted .* signed by director-1-k1 of director-1.*its registration is authorized/m);
    // Every principal the bundle relies on chains to the deployment's trust anchor (WRIT_TRUST_ANCHOR).
    expect(result.stdout).toMatch(/^principal director-1\n {2}PASS\s+principals\.authority\s+registered by operator/m);
    expect(result.stdout).toMatch(/^principal writ-receipt\n {2}PASS\s+principals\.authority\s+a service enrolled by operator/m);
    expect(result.stdout).toMatch(/^principal writ-approval\n {2}PASS\s+principals\.authority\s+a service enrolled by operator/m);
    expect(result.stdout).not.toMatch(/^ {2}(FAIL|SKIP|UNANCHORED) +principals/m);
    expect(result.stdout).not.toMatch(/^ {2}(FAIL|SKIP) /m);
  });

  it('given a task approved by a director whose registration was appended with the operator’s bus credential but no operator’s signature, then approval.authority FAILs naming REGISTRATION_UNSIGNED and it exits 1', async () => {
    // given a "director" appended straight onto its principal subject (a bus credential can; only an operator's key authorizes)
    const rogue = uniqueName('director');
    const rogueKey = await generateEd25519Key({ kid: `${rogue}-k1` });
    const registered = await signedPrincipalRegistration(
      { principal_id: rogue, principal_type: 'user', display_name: rogue, roles: ['director'], keys: [rogueKey.publicJwk as PublicEd25519Jwk] },
      { principalId: rogue, key: rogueKey, now: new Date(Date.now() - 60_000) },
    );
    const { authorization: _selfSigned, ...unsigned } = registered;
    await appendPrincipal(PrincipalRegistered.parse(unsigned));
    const forged = uniqueName('task');
    const packetRef = `artifact:sha256:${'d'.repeat(64)}`;
    await store.append(
      forged,
      [
        { ...draft('task.created', { type: 'task', id: forged }, 'att-1', { title: 'forged director', at: at() }), correlation_id: forged },
        {
          ...draft('approval.requested', { type: 'approval', id: 'apr-r' }, 'att-1', {
            approval_id: 'apr-r',
            task_id: forged,
            step_id: 'step-1',
            attempt_id: 'att-1',
            approval_type: 'action',
            requested_action_ref: 'action_request:ar-r',
            approval_packet_ref: packetRef,
            requested_by: 'agent-1',
            expires_at: new Date(Date.now() + 3_600_000).toISOString(),
            at: at(),
          }, APPROVAL),
          correlation_id: forged,
        },
        {
          ...draft('approval.granted', { type: 'approval', id: 'apr-r' }, 'att-1', {
            resolved_by: rogue,
            witness_validated: false,
            resolution_jws: await signJws(canonicalJson({ approval_id: 'apr-r', decision: 'grant', packet_hash: packetRef.slice('artifact:'.length), resolved_by: rogue, resolved_at: at() }), rogueKey),
            at: at(),
          }, APPROVAL),
          correlation_id: forged,
        },
      ],
      0,
    );
    // when
    const result = await writ(['verify', '--task', forged, '--json']);
    // then: the signature, the role and the packet all hold; the registration does not chain to the anchor
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_BUNDLE_UNVERIFIED: .*approval\.authority \(approval apr-r\) APPROVAL_RESOLUTION_NOT_DIRECTOR/);
    const failed = (JSON.parse(result.stdout) as { checks: { check: string; status: string; code?: string; detail: string }[] }).checks.find((entry) => entry.check === 'approval.authority');
    expect(failed).toMatchObject({ status: 'fail', code: 'APPROVAL_RESOLUTION_NOT_DIRECTOR' });
    expect(failed?.detail).toContain(`the registration of ${rogue} is not authorized: REGISTRATION_UNSIGNED`);
  });

  it('given a task with an approval.granted appended with no signature (and no receipt yet), then approval.authority FAILs APPROVAL_RESOLUTION_UNSIGNED and it exits 1', async () => {
    // given a task as the incident left it: a forged grant straight on the task's subject
    const forged = uniqueName('task');
    await store.append(
      forged,
      [
        { ...draft('task.created', { type: 'task', id: forged }, 'att-1', { title: 'forged', at: at() }), correlation_id: forged },
        {
          ...draft('approval.requested', { type: 'approval', id: 'apr-f' }, 'att-1', {
            approval_id: 'apr-f',
            task_id: forged,
            step_id: 'step-1',
            attempt_id: 'att-1',
            approval_type: 'action',
            requested_action_ref: 'action_request:ar-f',
            approval_packet_ref: `artifact:sha256:${'e'.repeat(64)}`,
            requested_by: 'agent-1',
            expires_at: new Date(Date.now() + 3_600_000).toISOString(),
            at: at(),
          }, APPROVAL),
          correlation_id: forged,
        },
        { ...draft('approval.granted', { type: 'approval', id: 'apr-f' }, 'att-1', { resolved_by: 'director-1', witness_validated: false, at: at() }, APPROVAL), correlation_id: forged },
      ],
      0,
    );
    // when
    const result = await writ(['verify', '--task', forged, '--json']);
    // then
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_BUNDLE_UNVERIFIED: .*approval\.authority \(approval apr-f\) APPROVAL_RESOLUTION_UNSIGNED/);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, checks: expect.arrayContaining([expect.objectContaining({ check: 'approval.authority', status: 'fail', code: 'APPROVAL_RESOLUTION_UNSIGNED' })]) });
  });

  it('given a task whose stored chain was tampered with, then the live chain check FAILs naming where, and it exits 1', async () => {
    // given a task of two events, and a third stored straight on its subject with a hash that does not recompute
    const tampered = uniqueName('task');
    const { taskSeq, hash } = await store.append(
      tampered,
      [0, 1].map((n) => ({ ...draft('task.note_added', { type: 'task', id: tampered }, 'att-0', { note: `note ${n}` }), correlation_id: tampered })),
      0,
    );
    const forged = { ...draft('task.note_added', { type: 'task', id: tampered }, 'att-0', { note: 'rewritten' }), correlation_id: tampered, task_id: tampered, task_seq: taskSeq + 1, prev_event_hash: hash, hash: sha256Hex('not the hash') };
    await jetstream(nc).publish(`${root}.evt.task.${tampered}`, JSON.stringify(forged));
    // when
    const result = await writ(['verify', '--task', tampered]);
    // then
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^ {2}FAIL\s+events\.chain\s+BUNDLE_CHAIN_BROKEN: modified at task_seq 3 /m);
    expect(result.stderr).toMatch(/^error CLI_BUNDLE_UNVERIFIED: task \S+ \(live log\) does not verify: events\.chain /);
  });

  it('given junk stored on a task subject between its events, then the live chain passes and each junk message is listed as QUARANTINED, not as a break', async () => {
    // given a task of one event, bytes that are not JSON and JSON that is not an envelope on its subject, then one more event appended after them
    const junked = uniqueName('task');
    await store.append(junked, [{ ...draft('task.note_added', { type: 'task', id: junked }, 'att-0', { note: 'before' }), correlation_id: junked }], 0);
    const notJson = (await jetstream(nc).publish(`${root}.evt.task.${junked}`, new Uint8Array([0xff, 0xfe]))).seq;
    const notEvent = (await jetstream(nc).publish(`${root}.evt.task.${junked}`, JSON.stringify({ hello: 'world' }))).seq;
    await store.append(junked, [{ ...draft('task.note_added', { type: 'task', id: junked }, 'att-0', { note: 'after' }), correlation_id: junked }], 1);
    // when
    const result = await writ(['verify', '--task', junked]);
    // then
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ {2}PASS\s+events\.chain\s+2 events on \S+: every hash recomputes and links to its predecessor \(head task_seq 2\), 2 other message\(s\) on it quarantined$/m);
    expect(result.stdout).toMatch(new RegExp(`^ {2}QUARANTINED\\s+events\\.quarantine\\s+stream seq ${notJson}: QUARANTINE_NOT_JSON, `, 'm'));
    expect(result.stdout).toMatch(new RegExp(`^ {2}QUARANTINED\\s+events\\.quarantine\\s+stream seq ${notEvent}: QUARANTINE_NOT_ENVELOPE, `, 'm'));
    expect(result.stdout).not.toMatch(/^ {2}(FAIL|SKIP) /m);
  });

  it('given neither a file nor --task, or both, then it is a usage error', async () => {
    expect((await writ(['verify'])).code).toBe(2);
    expect((await writ(['verify', 'bundle.json', '--task', taskId])).code).toBe(2);
  });
});
