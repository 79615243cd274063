import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusClient, DeadLetterHeaders, durableName } from '@writ/bus';
import {
  IssueGrant,
  PolicyEvaluated,
  hasErrorCode,
  type ActionRequest,
  type EventEnvelope,
  type GrantRevocation,
  type KeyRotation,
  type PrincipalRegistered,
  type PrincipalRole,
  type RevokeGrantReply,
  type RotateKeyReply,
} from '@writ/contracts';
import { KeySet, canonicalJson, generateEd25519Key, signJws, verifyClaims, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { keyLifecycles } from '@writ/runtime';
import { createLogger } from '@writ/telemetry';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_NAME, createApprovalApp, type ApprovalApp } from './bootstrap.js';
import { foldGrant } from './application/task-history.js';
import { loadApprovalConfig, type ApprovalConfig } from './config.js';

/**
 * Grant revocation and signing-key rotation on the real approval service,
 * started in-process against the real NATS on a test-unique subject root and
 * streams (deleted afterwards), with its keyring in a temporary directory.
 * The service's clock is the test's: a retirement is reached by moving it
 * forward, and the service's own retirement check (every second here) appends
 * the revocation, which the test waits for in the log.
 */

const MiB = 1024 ** 2;
const GRANT_TTL_SECONDS = 120;
const SKEW_SECONDS = 30;
const root = uniqueName('t');
const streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
const buckets = { artifacts: uniqueName('ART'), policy: uniqueName('POL') };

let nc: NatsConnection;
let store: EventStore;
let bus: BusClient;
let service: ApprovalApp;
let config: ApprovalConfig;
let keyDir: string;
/** The service's clock. */
let now = new Date();

interface User {
  readonly id: string;
  readonly key: Ed25519SigningKey;
}
let director: User;
let observer: User;
let agent: User;
/** A director who proposes the actions of these tests: the proposer may not revoke its own grant. */
let proposer: User;

async function registerUser(roles: PrincipalRole[], principalType: PrincipalRegistered['principal_type'] = 'user'): Promise<User> {
  const id = uniqueName('user');
  const key = await generateEd25519Key({ kid: `${id}-k1` });
  const at = new Date().toISOString();
  const payload: PrincipalRegistered = { principal_id: id, principal_type: principalType, display_name: id, roles, keys: [key.publicJwk], registered_by: 'test', at };
  await store.appendToEntity(
    'principal',
    id,
    [
      {
        event_id: uniqueName('evt'),
        schema_version: 1,
        event_type: 'principal.registered',
        entity_type: 'principal',
        entity_id: id,
        occurred_at: at,
        actor_type: 'system',
        actor_id: 'test',
        payload,
        causation_id: null,
        correlation_id: id,
      },
    ],
    0,
  );
  return { id, key };
}

const taskEvents = async (taskId: string): Promise<EventEnvelope[]> => (await store.read(taskId)).map((stored) => stored.event);
const principalEvents = async (): Promise<EventEnvelope[]> => (await store.readEntity('principal', service.principalId)).map((stored) => stored.event);

interface Granted {
  readonly taskId: string;
  readonly grantId: string;
  readonly jws: string;
  /** The issue-grant command that minted it (a renewal is the same command with `renewal`). */
  readonly command: IssueGrant;
}

/** A task whose attempt policy allowed directly (what ingress and policy append), and the grant the service mints for it. */
async function grantedAttempt(): Promise<Granted> {
  const taskId = uniqueName('task');
  const stepId = uniqueName('step');
  const attemptId = uniqueName('att');
  const policyResultId = uniqueName('pr');
  const request: ActionRequest = {
    action_request_id: uniqueName('ar'),
    task_id: taskId,
    action_class: 'execute_command',
    target_resources: ['out.txt'],
    params: { argv: ['sh', '-c', 'echo hello > out.txt'] },
    expected_effects: ['out.txt holds hello'],
    reversibility_hint: 'reversible',
    reason: 'revocation test',
    proposed_by: proposer.id,
    proposed_at: new Date().toISOString(),
  };
  const at = new Date().toISOString();
  const evaluated = PolicyEvaluated.parse({
    policy_result: {
      policy_result_id: policyResultId,
      task_id: taskId,
      step_id: stepId,
      attempt_id: attemptId,
      action_request_id: request.action_request_id,
      outcome: 'allow',
      action_class: 'execute_command',
      risk_band: 'low',
      action_summary: 'execute_command: sh',
      risk_summary: 'writes one file in the workspace',
      policy_profile_ref: 'policy:local_edit_allowed',
      policy_version: 'v1',
      affected_resources: request.target_resources,
      reasoning_summary: 'local edits are allowed',
      matched_rules: ['local_edit_allowed'],
      witness_required: false,
      revalidation_conditions: [],
      evaluated_at: at,
      evaluated_by: 'writ-policy',
    },
    decision: {
      decision_id: uniqueName('dec'),
      task_id: taskId,
      step_id: stepId,
      attempt_id: attemptId,
      decision_type: 'execution',
      summary: 'policy allow',
      rationale: 'local edits are allowed',
      evidence_refs: [],
      risk_level: 'low',
      decided_by: 'writ-policy',
      reversible: true,
      created_at: at,
    },
  });
  const draft = (eventType: string, entityType: 'attempt' | 'policy', entityId: string, payload: Record<string, unknown>) => ({
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: eventType,
    entity_type: entityType,
    entity_id: entityId,
    step_id: stepId,
    attempt_id: attemptId,
    occurred_at: at,
    actor_type: 'service' as const,
    actor_id: 'test',
    payload,
    causation_id: null,
    correlation_id: taskId,
  });
  await store.append(
    taskId,
    [draft('attempt.awaiting_policy', 'attempt', attemptId, { action_request: request, at }), draft('policy.evaluated', 'policy', policyResultId, evaluated)],
    0,
  );
  const command = IssueGrant.parse({ task_id: taskId, step_id: stepId, attempt_id: attemptId, action_request: request, policy_result_id: policyResultId, approval_id: null, issued_to: 'writ-executor-1' });
  await bus.publish(service.subjects.issueGrant, command, { msgId: `${attemptId}:issue-grant` });
  const issued = await waitFor(async () => (await taskEvents(taskId)).find((event) => event.event_type === 'grant.issued'), { what: `grant.issued on ${taskId}` });
  const payload = issued.payload as { claims: { jti: string }; jws: string };
  return { taskId, grantId: payload.claims.jti, jws: payload.jws, command };
}

async function revocationJws(user: User, grant: Granted, overrides: Partial<GrantRevocation> = {}, signer: Ed25519SigningKey = user.key): Promise<string> {
  const revocation: GrantRevocation = { grant_id: grant.grantId, task_id: grant.taskId, reason: 'no longer needed', revoked_by: user.id, revoked_at: now.toISOString(), ...overrides };
  return signJws(canonicalJson(revocation), signer);
}

const revoke = (grant: Granted, jws: string, target: Partial<{ grant_id: string; task_id: string }> = {}): Promise<RevokeGrantReply> =>
  bus.request(service.subjects.revokeGrant, { grant_id: grant.grantId, task_id: grant.taskId, ...target, revocation_jws: jws });

async function rotationJws(user: User, overrides: Partial<KeyRotation> = {}): Promise<string> {
  const rotation: KeyRotation = { service: 'approval', requested_by: user.id, requested_at: now.toISOString(), reason: 'scheduled rotation', ...overrides };
  return signJws(canonicalJson(rotation), user.key);
}

const rotate = (jws: string, app: ApprovalApp = service): Promise<RotateKeyReply> => bus.request(app.subjects.rotateKey, { rotation_jws: jws });

/** The request is refused with `code` (the code is what a caller branches on, never the message). */
async function expectRefused(code: string, pending: Promise<unknown>): Promise<void> {
  const error = await pending.then(
    () => new Error('the request was accepted'),
    (failure: unknown) => failure,
  );
  expect(hasErrorCode(error, code), `expected ${code}, got ${String(error)}`).toBe(true);
}

async function jwksOf(app: ApprovalApp = service): Promise<{ keys: { kid: string; alg: string; use: string; kty: string }[] }> {
  const response = await fetch(`${app.url}/.well-known/jwks.json`);
  expect(response.status).toBe(200);
  return (await response.json()) as { keys: { kid: string; alg: string; use: string; kty: string }[] };
}

const kidOf = (jws: string): string => (JSON.parse(Buffer.from(jws.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid: string }).kid;

function serviceConfig(): ApprovalConfig {
  return loadApprovalConfig({
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
    WRIT_APPROVAL_KEY_FILE: join(keyDir, 'approval.jwk.json'),
    WRIT_GRANT_TTL_SECONDS: String(GRANT_TTL_SECONDS),
    WRIT_APPROVAL_KEY_RETIRE_SKEW_SECONDS: String(SKEW_SECONDS),
    WRIT_APPROVAL_KEY_CHECK_SECONDS: '1',
    WRIT_ARTIFACTS_BUCKET: buckets.artifacts,
    WRIT_ARTIFACTS_MAX_BYTES: String(16 * MiB),
    WRIT_POLICY_BUCKET: buckets.policy,
  });
}

const startService = (): Promise<ApprovalApp> => createApprovalApp(config, { clock: () => now, logger: createLogger('approval-test', { level: 'silent' }), pullExpiresMs: 1_000 });

beforeAll(async () => {
  nc = await connectTestNats('approval-grant-keys-int');
  keyDir = await mkdtemp(join(tmpdir(), 'writ-approval-keys-'));
  config = serviceConfig();
  service = await startService();
  store = await EventStore.open(nc, { stream: streams.events, subjectPrefix: config.streams.eventsPrefix, maxBytes: 64 * MiB });
  bus = new BusClient(nc);
  [director, observer, agent, proposer] = await Promise.all([registerUser(['director']), registerUser(['observer']), registerUser(['director'], 'agent'), registerUser(['director'])]);
});

afterAll(async () => {
  await service?.close();
  await bus?.close();
  if (nc !== undefined) {
    await deleteStreams(nc, streams.events, streams.ingress, streams.commands, streams.dlq, `OBJ_${buckets.artifacts}`, `KV_${buckets.policy}`);
    await nc.close();
  }
  await rm(keyDir, { recursive: true, force: true });
});

describe('approval service: revoke-grant', () => {
  it("given an issued grant, when a director's signed revocation arrives, then grant.revoked is appended and the kernel folds the grant as revoked", async () => {
    now = new Date();
    const grant = await grantedAttempt();
    const reply = await revoke(grant, await revocationJws(director, grant));
    expect(reply).toMatchObject({ grant_id: grant.grantId, task_id: grant.taskId, status: 'revoked', revoked_by: director.id, revoked_at: now.toISOString() });
    const events = await taskEvents(grant.taskId);
    const revoked = events.filter((event) => event.event_type === 'grant.revoked');
    expect(revoked).toHaveLength(1);
    expect(revoked[0]).toMatchObject({
      event_id: reply.event_id,
      entity_type: 'grant',
      entity_id: grant.grantId,
      actor_id: service.principalId,
      payload: { revoked_by: director.id, reason: 'no longer needed', at: now.toISOString() },
    });
    expect(foldGrant(events, grant.grantId).status).toBe('revoked');
  });

  it('given a revoked grant, when it is revoked again, then the reply is already_revoked with the standing revocation and nothing is appended', async () => {
    now = new Date();
    const grant = await grantedAttempt();
    const first = await revoke(grant, await revocationJws(director, grant));
    const second = await revoke(grant, await revocationJws(director, grant, { reason: 'again' }));
    expect(second).toEqual({ ...first, status: 'already_revoked' });
    expect((await taskEvents(grant.taskId)).filter((event) => event.event_type === 'grant.revoked')).toHaveLength(1);
  });

  it('refuses an observer, an agent (even with the director role) and the proposer of the action, appending nothing', async () => {
    now = new Date();
    const grant = await grantedAttempt();
    const before = (await taskEvents(grant.taskId)).length;
    for (const user of [observer, agent, proposer]) {
      await expectRefused('APPROVAL_SIGNER_NOT_ALLOWED', revoke(grant, await revocationJws(user, grant)));
    }
    expect(await taskEvents(grant.taskId)).toHaveLength(before);
  });

  it("refuses a revocation forged under a director's name and kid, a stale one, one signed for another grant, and an unknown grant, appending nothing", async () => {
    now = new Date();
    const grant = await grantedAttempt();
    const other = await grantedAttempt();
    const before = (await taskEvents(grant.taskId)).length;
    const forger = await generateEd25519Key({ kid: director.key.kid });
    await expectRefused('APPROVAL_SIGNATURE_INVALID', revoke(grant, await revocationJws(director, grant, {}, forger)));
    await expectRefused('APPROVAL_SIGNATURE_INVALID', revoke(grant, 'not-a-jws'));
    await expectRefused('APPROVAL_SIGNED_REQUEST_STALE', revoke(grant, await revocationJws(director, grant, { revoked_at: new Date(now.getTime() - 301_000).toISOString() })));
    await expectRefused('APPROVAL_SIGNED_REQUEST_STALE', revoke(grant, await revocationJws(director, grant, { revoked_at: new Date(now.getTime() + 301_000).toISOString() })));
    await expectRefused('APPROVAL_SIGNED_REQUEST_MISMATCH', revoke(grant, await revocationJws(director, other)));
    await expectRefused('APPROVAL_GRANT_NOT_FOUND', revoke(grant, await revocationJws(director, grant, { grant_id: 'gnt-unknown' }), { grant_id: 'gnt-unknown' }));
    await expectRefused('CONTRACT_INVALID', bus.request(service.subjects.revokeGrant, { grant_id: grant.grantId, revocation_jws: 'x' }));
    expect(await taskEvents(grant.taskId)).toHaveLength(before);
    expect((await taskEvents(other.taskId)).some((event) => event.event_type === 'grant.revoked')).toBe(false);
  });
});

describe('approval service: renewal of a grant that expired with nothing run under it (issue 13)', () => {
  const grantsOf = async (taskId: string) => (await taskEvents(taskId)).filter((event) => event.event_type === 'grant.issued');
  const claimsOf = (event: EventEnvelope | undefined) => (event?.payload as { claims: { jti: string; iat: number; exp: number; issued_by_principal_id: string; policy_result_ref?: string } }).claims;
  const renew = (grant: Granted, renewal: number, msgId = `${grant.command.attempt_id}:issue-grant:renewal:${renewal}`) =>
    bus.publish(service.subjects.issueGrant, { ...grant.command, renewal }, { msgId });
  /** A clock reading past the grant's expiry (the service minted it at the clock's reading then: now). */
  const pastExpiry = () => new Date(Date.now() + (GRANT_TTL_SECONDS + 1) * 1000);

  /** The dead letter of the issue-grant message at `seq`. */
  async function deadLetter(seq: number) {
    const jsm = await jetstreamManager(nc);
    return waitFor(
      async () => {
        const message = await jsm.streams.getMessage(streams.dlq, { last_by_subj: `${root}.dlq.approval.issue-grant` }).catch(() => null);
        return message?.header.get(DeadLetterHeaders.STREAM_SEQ) === String(seq) ? message : undefined;
      },
      { what: `the dead letter of issue-grant ${seq}` },
    );
  }

  it('given a grant past its expiry with no use, when renewal 1 is asked, then a new grant is minted on the same authority, living twice as long, once', async () => {
    // given
    now = new Date();
    const grant = await grantedAttempt();
    const [first] = await grantsOf(grant.taskId);
    now = pastExpiry();
    // when (twice: a redelivery)
    await renew(grant, 1, 'renewal-a');
    const second = await renew(grant, 1, 'renewal-b');
    // then
    const grants = await waitFor(async () => ((await grantsOf(grant.taskId)).length === 2 ? grantsOf(grant.taskId) : undefined), { what: 'the renewed grant' });
    const renewed = claimsOf(grants[1]);
    expect(renewed.jti).not.toBe(grant.grantId);
    expect(renewed.iat).toBe(Math.floor(now.getTime() / 1000));
    expect(renewed.exp).toBe(renewed.iat + 2 * GRANT_TTL_SECONDS); // a renewal lives twice as long as the grant it renews
    expect(renewed.issued_by_principal_id).toBe(claimsOf(first).issued_by_principal_id);
    expect(renewed.policy_result_ref).toBe(claimsOf(first).policy_result_ref);
    const jsm = await jetstreamManager(nc);
    await waitFor(async () => ((await jsm.consumers.info(streams.commands, durableName(SERVICE_NAME, service.subjects.issueGrant))).ack_floor.stream_seq >= second.seq ? true : undefined), {
      what: 'the redelivered renewal handled',
    });
    expect(await grantsOf(grant.taskId)).toHaveLength(2);
    now = new Date();
  });

  /** What the executor appends for use 1 of the grant: its claim, then, when `released`, its release (proven never started) with a not_run completion. */
  async function claimedUse(grant: Granted, released: boolean): Promise<void> {
    const at = new Date().toISOString();
    const useId = uniqueName('use');
    const event = (eventType: string, entityType: 'grant' | 'attempt', entityId: string, payload: Record<string, unknown>) => ({
      event_id: uniqueName('evt'),
      schema_version: 1,
      event_type: eventType,
      entity_type: entityType,
      entity_id: entityId,
      step_id: grant.command.step_id,
      attempt_id: grant.command.attempt_id,
      occurred_at: at,
      actor_type: 'service' as const,
      actor_id: 'test',
      payload,
      causation_id: null,
      correlation_id: grant.taskId,
    });
    const claimed = event('grant.use_claimed', 'grant', grant.grantId, { use_id: useId, use_no: 1, task_id: grant.taskId, attempt_id: grant.command.attempt_id, action_class: 'execute_command', at });
    const release = [
      event('grant.use_released', 'grant', grant.grantId, { use_id: useId, use_no: 1, reason_code: 'CELL_USE_FENCED', reason: 'its claimer stopped before the task cell existed; it never ran', at }),
      event('execution.completed', 'attempt', grant.command.attempt_id, {
        grant_id: grant.grantId,
        use_no: 1,
        executor_id: 'executor-test',
        outcome: 'not_run',
        exit_code: null,
        timed_out: false,
        duration_ms: 0,
        stdout_sha256: 'e'.repeat(64),
        stderr_sha256: 'e'.repeat(64),
        changed_files: [],
        artifacts: [],
        environment: null,
        error: { code: 'CELL_USE_FENCED', message: 'never started' },
        at,
      }),
    ];
    await store.append(grant.taskId, [claimed, ...(released ? release : [])], (await store.read(grant.taskId)).length);
  }

  it('given a grant whose only use was proven never started (claimed, then released not_run), past its expiry, when renewal 1 is asked, then it is minted on the same authority (issue 13: nothing ran under it)', async () => {
    // given
    now = new Date();
    const grant = await grantedAttempt();
    await claimedUse(grant, true);
    now = pastExpiry();
    // when
    await renew(grant, 1);
    // then
    const grants = await waitFor(async () => ((await grantsOf(grant.taskId)).length === 2 ? grantsOf(grant.taskId) : undefined), { what: 'the renewal' });
    expect(claimsOf(grants[1]).issued_by_principal_id).toBe(claimsOf(grants[0]).issued_by_principal_id);
    now = new Date();
  });

  it('given a grant whose use was claimed and never proven not run (it may have run), past its expiry, when its renewal is asked, then nothing is minted: dead-lettered APPROVAL_RENEWAL_REFUSED', async () => {
    now = new Date();
    const grant = await grantedAttempt();
    await claimedUse(grant, false);
    now = pastExpiry();
    const ack = await renew(grant, 1);
    expect((await deadLetter(ack.seq)).header.get(DeadLetterHeaders.ERROR_CODE)).toBe('APPROVAL_RENEWAL_REFUSED');
    expect(await grantsOf(grant.taskId)).toHaveLength(1);
    now = new Date();
  });

  it('given a revoked grant past its expiry, when its renewal is asked, then nothing is minted and the command is dead-lettered APPROVAL_RENEWAL_REFUSED', async () => {
    now = new Date();
    const grant = await grantedAttempt();
    await revoke(grant, await revocationJws(director, grant));
    now = pastExpiry();
    const ack = await renew(grant, 1);
    const letter = await deadLetter(ack.seq);
    expect(letter.header.get(DeadLetterHeaders.ERROR_CODE)).toBe('APPROVAL_RENEWAL_REFUSED');
    expect(letter.header.get(DeadLetterHeaders.REASON)).toBe('terminal');
    expect(await grantsOf(grant.taskId)).toHaveLength(1);
    now = new Date();
  });

  it('given no renewal 1, when renewal 2 is asked (a skipped link), then it is refused APPROVAL_RENEWAL_REFUSED', async () => {
    now = new Date();
    const grant = await grantedAttempt();
    now = pastExpiry();
    const ack = await renew(grant, 2);
    expect((await deadLetter(ack.seq)).header.get(DeadLetterHeaders.ERROR_CODE)).toBe('APPROVAL_RENEWAL_REFUSED');
    expect(await grantsOf(grant.taskId)).toHaveLength(1);
    now = new Date();
  });

  it('given a grant still live that no executor refused, when its renewal is asked, then nothing is minted while it lives; once it expired the retried command mints the renewal', async () => {
    // given
    now = new Date();
    const grant = await grantedAttempt();
    // when
    await renew(grant, 1);
    // then: refused for now (APPROVAL_GRANT_STILL_LIVE) and kept for a retry
    const jsm = await jetstreamManager(nc);
    const durable = durableName(SERVICE_NAME, service.subjects.issueGrant);
    await waitFor(async () => ((await jsm.consumers.info(streams.commands, durable)).num_redelivered > 0 ? true : undefined), { what: 'the renewal to be retried' });
    expect(await grantsOf(grant.taskId)).toHaveLength(1);
    // and once the clock passes its expiry
    now = pastExpiry();
    await waitFor(async () => ((await grantsOf(grant.taskId)).length === 2 ? true : undefined), { what: 'the renewal minted on a retry', timeoutMs: 60_000 });
    now = new Date();
  });
});

describe('approval service: key rotation and JWKS', () => {
  it('serves its unretired public keys at /.well-known/jwks.json', async () => {
    const jwks = await jwksOf();
    expect(jwks.keys).toEqual([expect.objectContaining({ kid: service.activeKid(), kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' })]);
    expect(JSON.stringify(jwks)).not.toContain('"d"');
  });

  it('refuses a rotation by an observer or an agent, a stale one and one signed for another service, appending nothing', async () => {
    now = new Date();
    const before = (await principalEvents()).length;
    await expectRefused('APPROVAL_SIGNER_NOT_ALLOWED', rotate(await rotationJws(observer)));
    await expectRefused('APPROVAL_SIGNER_NOT_ALLOWED', rotate(await rotationJws(agent)));
    await expectRefused('APPROVAL_SIGNED_REQUEST_STALE', rotate(await rotationJws(director, { requested_at: new Date(now.getTime() - 600_000).toISOString() })));
    await expectRefused('APPROVAL_SIGNED_REQUEST_MISMATCH', rotate(await rotationJws(director, { service: 'receipt' })));
    expect(await principalEvents()).toHaveLength(before);
  });

  it('rotates: key_added first, new grants carry the new kid, the JWKS lists both, a grant minted before still verifies; at retire_after key_revoked is appended and the JWKS drops the old key', async () => {
    // given a grant minted with the current key
    now = new Date();
    const oldKid = service.activeKid();
    const before = await grantedAttempt();
    expect(kidOf(before.jws)).toBe(oldKid);

    // when a director rotates the key
    const jws = await rotationJws(director);
    const reply = await rotate(jws);

    // then the log holds the new key, replacing the old one until now + grant TTL + skew
    const retireAfter = new Date(now.getTime() + (GRANT_TTL_SECONDS + SKEW_SECONDS) * 1000).toISOString();
    expect(reply).toMatchObject({ principal_id: service.principalId, status: 'rotated', previous_kid: oldKid, retire_after: retireAfter });
    expect(reply.kid).not.toBe(oldKid);
    const added = (await principalEvents()).filter((event) => event.event_type === 'principal.key_added');
    expect(added.map((event) => event.payload)).toEqual([expect.objectContaining({ key: expect.objectContaining({ kid: reply.kid }), added_by: director.id, replaces: { kid: oldKid, retire_after: retireAfter } })]);
    // and a repeat of the same signed request rotates nothing more
    expect(await rotate(jws)).toMatchObject({ status: 'already_rotated', kid: reply.kid, previous_kid: oldKid });
    expect((await principalEvents()).filter((event) => event.event_type === 'principal.key_added')).toHaveLength(1);

    // and new grants are signed with the new key
    expect(service.activeKid()).toBe(reply.kid);
    const after = await grantedAttempt();
    expect(kidOf(after.jws)).toBe(reply.kid);

    // and the JWKS lists both; both grants verify against it
    const jwks = await jwksOf();
    expect(jwks.keys.map((key) => key.kid).sort()).toEqual([oldKid, reply.kid].sort());
    const keys = await KeySet.fromJwks(jwks);
    for (const grant of [before, after]) {
      await expect(verifyClaims(grant.jws, keys, { issuer: service.principalId, audience: 'writ-executor', typ: 'writ-grant+jwt', now })).resolves.toBeDefined();
    }
    expect((await principalEvents()).some((event) => event.event_type === 'principal.key_revoked')).toBe(false);

    // when the clock passes retire_after, then the service's check appends key_revoked (rotated)
    now = new Date(Date.parse(retireAfter) + 1_000);
    const revoked = await waitFor(async () => (await principalEvents()).find((event) => event.event_type === 'principal.key_revoked'), { what: 'principal.key_revoked' });
    expect(revoked.payload).toMatchObject({ kid: oldKid, reason: 'rotated', revoked_by: service.principalId });
    // and the JWKS no longer lists it, while the log keeps its history
    expect((await jwksOf()).keys.map((key) => key.kid)).toEqual([reply.kid]);
    expect(keyLifecycles(await principalEvents()).map((key) => [key.kid, key.status])).toEqual([
      [oldKid, 'retired'],
      [reply.kid, 'active'],
    ]);
  });

  it('given a restart inside the retirement window, then the second process still retires the replaced key on time', async () => {
    // given a rotation, then the service stops before the old key is due
    now = new Date(now.getTime() + 1_000);
    const replaced = service.activeKid();
    const reply = await rotate(await rotationJws(director));
    expect(reply).toMatchObject({ status: 'rotated', previous_kid: replaced });
    await service.close();

    // when a new process starts on the same key directory, still inside the window
    service = await startService();

    // then it signs with the new key, and the replaced key is still valid
    expect(service.activeKid()).toBe(reply.kid);
    expect((await jwksOf()).keys.map((key) => key.kid).sort()).toEqual([replaced, reply.kid].sort());
    const isRevoked = async () => (await principalEvents()).some((event) => event.event_type === 'principal.key_revoked' && (event.payload as { kid: string }).kid === replaced);
    expect(await isRevoked()).toBe(false);

    // when its retire_after passes, then the new process retires it
    now = new Date(Date.parse(reply.retire_after) + 1_000);
    await waitFor(async () => ((await isRevoked()) ? true : undefined), { what: `principal.key_revoked of ${replaced}` });
    expect((await jwksOf()).keys.map((key) => key.kid)).toEqual([reply.kid]);
  });
});
