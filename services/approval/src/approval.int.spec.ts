import { lstat, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { BusClient, DeadLetterHeaders, durableName } from '@writ/bus';
import {
  CapabilityGrantClaims,
  IssueGrant,
  PolicyEvaluated,
  RequestApproval,
  hasErrorCode,
  type ActionRequest,
  type ApprovalResolution,
  type EventEnvelope,
  type PolicyOutcome,
  type PolicyProfileRecord,
  type PrincipalRegistered,
  type PrincipalRole,
} from '@writ/contracts';
import { KeySet, canonicalJson, generateEd25519Key, importEd25519PublicJwk, sha256Hex, signJws, verifyClaims, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { createLogger } from '@writ/telemetry';
import { packetHashOfRef } from '@writ/runtime';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResolveApprovalHandler } from './application/resolve-approval.handler.js';
import { SERVICE_NAME, createApprovalApp, type ApprovalApp } from './bootstrap.js';
import { loadApprovalConfig, type ApprovalConfig } from './config.js';

/**
 * The real approval service, started in-process against the real NATS on a
 * test-unique subject root and streams (deleted afterwards). Each test seeds
 * its own task stream with what the upstream services would have appended,
 * publishes the command, and waits for the resulting event in the log.
 */

const MiB = 1024 ** 2;
const root = uniqueName('t');
const streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
const buckets = { artifacts: uniqueName('ART'), policy: uniqueName('POL') };
const POLICY_ENGINE = 'writ-policy';
/** The version of the test profile that the seeded policy results were evaluated under, and the bucket holds. */
const PROFILE = { id: 'local_edit_allowed', version: `sha256:${'1'.repeat(64)}` };
/** What each expiry timer delivery came to, by approval id (the timer runs for every requested approval). */
const timerOutcomes = new Map<string, string[]>();

let nc: NatsConnection;
let store: EventStore;
let bus: BusClient;
let service: ApprovalApp;
let config: ApprovalConfig;
let keyDir: string;
/** The service's clock; tests move it forward to cross an expiry. */
let now = new Date();

interface User {
  readonly id: string;
  readonly key: Ed25519SigningKey;
}

let director: User;
let secondDirector: User;
let observer: User;
/** The agent proposing actions; it also holds the director role, and still may not approve its own action. */
let agent: User;

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

interface Attempt {
  readonly taskId: string;
  readonly stepId: string;
  readonly attemptId: string;
  readonly approvalId: string;
  readonly policyResultId: string;
  readonly request: ActionRequest;
}

function actionRequest(taskId: string): ActionRequest {
  return {
    action_request_id: uniqueName('ar'),
    task_id: taskId,
    action_class: 'execute_command',
    target_resources: ['src/build', 'https://registry.example.org/pkg'],
    params: { argv: ['make', 'build'], cwd: 'src' },
    expected_effects: ['build output in src/build'],
    reversibility_hint: 'reversible',
    reason: 'build the project',
    proposed_by: agent.id,
    proposed_at: new Date().toISOString(),
  };
}

function seedDraft(attempt: Attempt, eventType: string, payload: Record<string, unknown>) {
  return {
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: eventType,
    entity_type: eventType.startsWith('policy.') ? ('policy' as const) : ('attempt' as const),
    entity_id: eventType.startsWith('policy.') ? attempt.policyResultId : attempt.attemptId,
    step_id: attempt.stepId,
    attempt_id: attempt.attemptId,
    occurred_at: new Date().toISOString(),
    actor_type: 'service' as const,
    actor_id: 'test',
    payload,
    causation_id: null,
    correlation_id: attempt.taskId,
  };
}

function policyEvaluated(attempt: Attempt, outcome: PolicyOutcome, witnessRequired = false): PolicyEvaluated {
  const at = new Date().toISOString();
  return PolicyEvaluated.parse({
    policy_result: {
      policy_result_id: attempt.policyResultId,
      task_id: attempt.taskId,
      step_id: attempt.stepId,
      attempt_id: attempt.attemptId,
      action_request_id: attempt.request.action_request_id,
      outcome,
      action_class: attempt.request.action_class,
      risk_band: 'moderate',
      action_summary: 'execute_command: make build',
      risk_summary: 'runs a build in the cell',
      policy_profile_ref: `${PROFILE.id}@${PROFILE.version}`,
      policy_version: PROFILE.version,
      affected_resources: attempt.request.target_resources,
      reasoning_summary: 'commands need a director',
      matched_rules: ['execute_command_requires_approval'],
      witness_required: witnessRequired,
      revalidation_conditions: [],
      ...(outcome === 'require_approval' ? { approver_roles: ['director'] } : {}),
      evaluated_at: at,
      evaluated_by: POLICY_ENGINE,
    },
    decision: {
      decision_id: uniqueName('dec'),
      task_id: attempt.taskId,
      step_id: attempt.stepId,
      attempt_id: attempt.attemptId,
      decision_type: 'execution',
      summary: `policy ${outcome}`,
      rationale: 'commands need a director',
      evidence_refs: [],
      risk_level: 'moderate',
      decided_by: POLICY_ENGINE,
      reversible: true,
      created_at: at,
    },
  });
}

/** A task whose attempt waits for policy, and policy's verdict on it: what ingress and policy would have appended. */
async function seedAttempt(outcome: PolicyOutcome = 'require_approval', witnessRequired = false): Promise<Attempt> {
  const taskId = uniqueName('task');
  const attempt: Attempt = {
    taskId,
    stepId: uniqueName('step'),
    attemptId: uniqueName('att'),
    approvalId: uniqueName('apr'),
    policyResultId: uniqueName('pr'),
    request: actionRequest(taskId),
  };
  const at = new Date().toISOString();
  await store.append(
    taskId,
    [
      seedDraft(attempt, 'attempt.awaiting_policy', { action_request: attempt.request, at }),
      seedDraft(attempt, 'policy.evaluated', policyEvaluated(attempt, outcome, witnessRequired)),
    ],
    0,
  );
  return attempt;
}

async function taskEvents(taskId: string): Promise<EventEnvelope[]> {
  return (await store.read(taskId)).map((stored) => stored.event);
}

async function waitForEvent(taskId: string, eventType: string): Promise<EventEnvelope> {
  return waitFor(async () => (await taskEvents(taskId)).find((event) => event.event_type === eventType), { what: `${eventType} on ${taskId}` });
}

function requestCommand(attempt: Attempt): RequestApproval {
  return RequestApproval.parse({
    task_id: attempt.taskId,
    step_id: attempt.stepId,
    attempt_id: attempt.attemptId,
    approval_id: attempt.approvalId,
    policy_result_id: attempt.policyResultId,
    action_request: attempt.request,
    requested_by: agent.id,
    risk_band: 'moderate',
    reason: 'commands need a director',
  });
}

/** The packet hash each requested approval shows (what a director signs), by approval id. */
const packetHashes = new Map<string, string>();
/** A packet hash no approval shows. */
const OTHER_PACKET = `sha256:${'0'.repeat(64)}`;

async function requestApproval(attempt: Attempt): Promise<EventEnvelope> {
  await bus.publish(service.subjects.request, requestCommand(attempt), { msgId: `${attempt.approvalId}:request` });
  const requested = await waitForEvent(attempt.taskId, 'approval.requested');
  packetHashes.set(attempt.approvalId, packetHashOfRef(String(requested.payload['approval_packet_ref'])) ?? OTHER_PACKET);
  return requested;
}

async function resolutionJws(user: User, approvalId: string, decision: ApprovalResolution['decision'], signer: Ed25519SigningKey = user.key): Promise<string> {
  const resolution: ApprovalResolution = {
    approval_id: approvalId,
    decision,
    packet_hash: packetHashes.get(approvalId) ?? OTHER_PACKET,
    resolved_by: user.id,
    resolved_at: new Date().toISOString(),
    note: `${decision} by ${user.id}`,
  };
  return signJws(canonicalJson(resolution), signer);
}

async function resolve(attempt: Attempt, jws: string): Promise<{ status: string; resolved_by: string; event_id: string }> {
  return bus.request(service.subjects.resolve, { approval_id: attempt.approvalId, task_id: attempt.taskId, resolution_jws: jws });
}

async function resolveError(attempt: Attempt, jws: string): Promise<unknown> {
  return resolve(attempt, jws).then(
    () => new Error('the resolution was accepted'),
    (error: unknown) => error,
  );
}

function issueGrantCommand(attempt: Attempt, approvalId: string | null): IssueGrant {
  return IssueGrant.parse({
    task_id: attempt.taskId,
    step_id: attempt.stepId,
    attempt_id: attempt.attemptId,
    action_request: attempt.request,
    policy_result_id: attempt.policyResultId,
    approval_id: approvalId,
    issued_to: 'writ-executor-1',
  });
}

/** The approval service's public keys as the log describes them (what the executor trusts). */
async function approvalKeys(): Promise<KeySet> {
  const events = await store.readEntity('principal', service.principalId);
  const registered = events.find((stored) => stored.event.event_type === 'principal.registered')?.event.payload as PrincipalRegistered | undefined;
  return KeySet.of(await Promise.all((registered?.keys ?? []).map((jwk) => importEd25519PublicJwk(jwk))));
}

/** Waits until the issue-grant consumer has acked everything up to `seq`. */
async function waitHandled(seq: number): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const durable = durableName(SERVICE_NAME, service.subjects.issueGrant);
  await waitFor(
    async () => {
      const info = await jsm.consumers.info(streams.commands, durable);
      return info.ack_floor.stream_seq >= seq && info.num_ack_pending === 0 && info.num_pending === 0 ? true : undefined;
    },
    { what: `issue-grant consumer to settle at ${seq}` },
  );
}

/**
 * A stand-in for the executor on `<root>.qry.executor.observe` (services never import each
 * other): it fingerprints a real directory per task on this host the way the executor's
 * observation does for files (`sha256:<hex>`), directories (`dir:<hash of the listing>`),
 * missing paths (`absent`) and URLs (`unobservable`). `silent` lets requests time out, as
 * an executor that is down would.
 */
interface TestObserver {
  readonly sub: Subscription;
  readonly root: string;
  silent: boolean;
  requests: number;
}
let executorStandIn: TestObserver;

async function fingerprint(path: string): Promise<string> {
  const stat = await lstat(path).catch(() => undefined);
  if (stat === undefined) return 'absent';
  if (stat.isDirectory()) {
    const names = (await readdir(path)).sort();
    return `dir:${sha256Hex(JSON.stringify(await Promise.all(names.map(async (name) => [name, await fingerprint(join(path, name))]))))}`;
  }
  return `sha256:${sha256Hex(await readFile(path))}`;
}

function startObserver(root: string): TestObserver {
  const sub = nc.subscribe(`${config.subjectRoot}.qry.executor.observe`);
  const state: TestObserver = { sub, root, silent: false, requests: 0 };
  void (async () => {
    for await (const msg of sub) {
      state.requests += 1;
      if (state.silent) continue;
      const { task_id: taskId, resources } = msg.json<{ task_id: string; resources: string[] }>();
      const fingerprints: Record<string, string> = {};
      for (const resource of resources) {
        fingerprints[resource] = /^[a-z]+:/i.test(resource) ? 'unobservable' : await fingerprint(join(root, taskId, resource));
      }
      msg.respond(JSON.stringify({ fingerprints, observed_at: new Date().toISOString() }));
    }
  })();
  return state;
}

/** Writes a file into the task's observed workspace. */
async function writeWorkspaceFile(taskId: string, path: string, content: string): Promise<void> {
  const file = join(executorStandIn.root, taskId, path);
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, content);
}

beforeAll(async () => {
  nc = await connectTestNats('approval-int');
  keyDir = await mkdtemp(join(tmpdir(), 'writ-approval-'));
  config = loadApprovalConfig({
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
    WRIT_APPROVAL_OBSERVE_TIMEOUT_MS: '500',
    WRIT_ARTIFACTS_BUCKET: buckets.artifacts,
    WRIT_ARTIFACTS_MAX_BYTES: String(16 * MiB),
    WRIT_POLICY_BUCKET: buckets.policy,
  });
  // What the policy service would have stored: the profile the seeded policy results name, at their version.
  const kv = await new Kvm(nc).create(buckets.policy, { max_bytes: MiB });
  const record: PolicyProfileRecord = { profile_id: PROFILE.id, version: PROFILE.version, document: {}, applied_by: POLICY_ENGINE, applied_at: new Date().toISOString(), previous_version: null };
  await kv.put(PROFILE.id, canonicalJson(record));
  executorStandIn = startObserver(join(keyDir, 'workspaces'));
  service = await createApprovalApp(config, {
    clock: () => now,
    logger: createLogger('approval-test', { level: 'silent' }),
    pullExpiresMs: 1_000,
    onExpiryOutcome: (outcome) => {
      if (outcome.approval_id !== undefined) timerOutcomes.set(outcome.approval_id, [...(timerOutcomes.get(outcome.approval_id) ?? []), outcome.kind]);
    },
  });
  store = await EventStore.open(nc, { stream: streams.events, subjectPrefix: config.streams.eventsPrefix, maxBytes: 64 * MiB });
  bus = new BusClient(nc);
  [director, secondDirector, observer, agent] = await Promise.all([registerUser(['director']), registerUser(['director']), registerUser(['observer']), registerUser(['director'], 'agent')]);
});

afterAll(async () => {
  executorStandIn?.sub.unsubscribe();
  await service?.close();
  await bus?.close();
  if (nc !== undefined) {
    await deleteStreams(nc, streams.events, streams.ingress, streams.commands, streams.dlq, `OBJ_${buckets.artifacts}`, `KV_${buckets.policy}`);
    await nc.close();
  }
  await rm(keyDir, { recursive: true, force: true });
});

describe('approval service: start-up', () => {
  it('registers its signing key as the service principal and reports ready', async () => {
    // then the log holds the approval principal with the key the service signs with
    const keys = await approvalKeys();
    expect(keys.kids()).toEqual([service.kid]);
    // and both probes answer
    const health = await fetch(`${service.url}/healthz`);
    const ready = await fetch(`${service.url}/readyz`);
    expect(health.status).toBe(200);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, checks: { nats_connected: true, streams_ensured: true, consumers_bound: true } });
  });
});

describe('approval service: request', () => {
  it('appends approval.requested with the packet an approver decides on', async () => {
    // given an attempt policy sent to approval
    now = new Date();
    const attempt = await seedAttempt();
    // when the orchestrator asks for approval
    const event = await requestApproval(attempt);
    // then the approval is pending in the task stream, with its packet
    const payload = event.payload as Record<string, unknown> & { packet: Record<string, unknown> };
    const expiresAt = new Date(now.getTime() + 3600 * 1000).toISOString();
    expect(event).toMatchObject({
      entity_type: 'approval',
      entity_id: attempt.approvalId,
      attempt_id: attempt.attemptId,
      actor_type: 'service',
      actor_id: service.principalId,
      correlation_id: attempt.taskId,
      idempotency_key: `${attempt.approvalId}:approval.requested`,
    });
    expect(payload).toMatchObject({
      approval_id: attempt.approvalId,
      approval_type: 'action',
      requested_by: agent.id,
      requested_action_ref: `action_request:${attempt.request.action_request_id}`,
      policy_result_ref: `policy_result:${attempt.policyResultId}`,
      expires_at: expiresAt,
    });
    expect(payload.packet).toMatchObject({
      action_request_id: attempt.request.action_request_id,
      action_class: 'execute_command',
      action_summary: 'execute_command: make build (in src)',
      risk_band: 'moderate',
      expected_effects: ['build output in src/build'],
      impacted_resources: attempt.request.target_resources,
      rollback_available: false,
      expires_at: expiresAt,
    });
    // and the packet is stored as an artifact, addressed by its ref
    const ref = payload['approval_packet_ref'] as string;
    expect(ref).toMatch(/^artifact:sha256:[0-9a-f]{64}$/);
    const stored = await (await new Objm(nc).open(buckets.artifacts)).getBlob(`sha256-${ref.slice('artifact:sha256:'.length)}`);
    expect(stored).not.toBeNull();
    expect(sha256Hex(stored as Uint8Array)).toBe(ref.slice('artifact:sha256:'.length));
    expect(JSON.parse(new TextDecoder().decode(stored as Uint8Array))).toEqual({ format: 'writ.approval-packet/1', packet: payload.packet });
  });

  it('appends nothing for a redelivered request', async () => {
    // given a requested approval
    now = new Date();
    const attempt = await seedAttempt();
    await requestApproval(attempt);
    // when the same command arrives again (a new message id, past the dedupe window)
    const ack = await bus.publish(service.subjects.request, requestCommand(attempt), { msgId: `${attempt.approvalId}:request:again` });
    const jsm = await jetstreamManager(nc);
    const durable = durableName(SERVICE_NAME, service.subjects.request);
    await waitFor(async () => ((await jsm.consumers.info(streams.commands, durable)).ack_floor.stream_seq >= ack.seq ? true : undefined), { what: 'redelivery handled' });
    // then the task still holds one approval.requested
    expect((await taskEvents(attempt.taskId)).filter((event) => event.event_type === 'approval.requested')).toHaveLength(1);
  });
});

describe('approval service: resolve', () => {
  it("grants the approval on a director's signed resolution", async () => {
    now = new Date();
    const attempt = await seedAttempt();
    await requestApproval(attempt);
    // when a director grants it
    const reply = await resolve(attempt, await resolutionJws(director, attempt.approvalId, 'grant'));
    // then the reply and the log say granted, by that director
    expect(reply).toMatchObject({ status: 'granted', resolved_by: director.id });
    const granted = await waitForEvent(attempt.taskId, 'approval.granted');
    expect(granted).toMatchObject({ entity_id: attempt.approvalId, event_id: reply.event_id, attempt_id: attempt.attemptId });
    expect(granted.payload).toMatchObject({ resolved_by: director.id, note: `grant by ${director.id}`, witness_validated: false });
  });

  it('given a resolution recorded, when the same signed resolution is sent again, then it is answered the same and reported recorded once (writ_approvals_resolved_total)', async () => {
    now = new Date();
    const attempt = await seedAttempt();
    await requestApproval(attempt);
    const handler = service.app.get(ResolveApprovalHandler);
    const request = { approval_id: attempt.approvalId, task_id: attempt.taskId, resolution_jws: await resolutionJws(director, attempt.approvalId, 'grant') };
    const recorded: string[] = [];
    // when the director's grant is handled, then handled again (a lost reply, a resend)
    const first = await handler.resolve(request, { recorded: (reply) => recorded.push(reply.event_id) });
    const second = await handler.resolve(request, { recorded: (reply) => recorded.push(reply.event_id) });
    // then both answer the one approval.granted, and only the first recorded it
    expect(second).toEqual(first);
    expect(recorded).toEqual([first.event_id]);
    expect((await taskEvents(attempt.taskId)).filter((event) => event.event_type === 'approval.granted')).toHaveLength(1);
  });

  it('denies the approval on a signed deny', async () => {
    now = new Date();
    const attempt = await seedAttempt();
    await requestApproval(attempt);
    const reply = await resolve(attempt, await resolutionJws(director, attempt.approvalId, 'deny'));
    expect(reply).toMatchObject({ status: 'denied', resolved_by: director.id });
    expect((await waitForEvent(attempt.taskId, 'approval.denied')).payload).toMatchObject({ resolved_by: director.id });
  });

  it('refuses an observer, the requester itself and an unknown principal, appending nothing', async () => {
    now = new Date();
    const attempt = await seedAttempt();
    await requestApproval(attempt);
    const before = (await taskEvents(attempt.taskId)).length;
    const stranger = { id: uniqueName('nobody'), key: await generateEd25519Key({ kid: 'nobody-k1' }) };

    const byObserver = await resolveError(attempt, await resolutionJws(observer, attempt.approvalId, 'grant'));
    const bySelf = await resolveError(attempt, await resolutionJws(agent, attempt.approvalId, 'grant'));
    const byStranger = await resolveError(attempt, await resolutionJws(stranger, attempt.approvalId, 'grant'));

    expect(hasErrorCode(byObserver, 'APPROVAL_RESOLVER_NOT_ALLOWED')).toBe(true);
    expect(hasErrorCode(bySelf, 'APPROVAL_RESOLVER_NOT_ALLOWED')).toBe(true);
    expect(hasErrorCode(byStranger, 'APPROVAL_RESOLVER_NOT_ALLOWED')).toBe(true);
    expect(await taskEvents(attempt.taskId)).toHaveLength(before);
  });

  it("refuses a resolution forged under a director's name and kid", async () => {
    now = new Date();
    const attempt = await seedAttempt();
    await requestApproval(attempt);
    const before = (await taskEvents(attempt.taskId)).length;
    // given a key that is not the director's, claiming the director's kid
    const forger = await generateEd25519Key({ kid: director.key.kid });
    const forged = await resolutionJws(director, attempt.approvalId, 'grant', forger);
    // and a genuine signature whose payload was swapped for a grant
    const genuine = (await resolutionJws(director, attempt.approvalId, 'deny')).split('.');
    const swapped = [genuine[0], Buffer.from(JSON.stringify({ approval_id: attempt.approvalId, decision: 'grant', packet_hash: packetHashes.get(attempt.approvalId), resolved_by: director.id, resolved_at: now.toISOString() })).toString('base64url'), genuine[2]].join('.');

    expect(hasErrorCode(await resolveError(attempt, forged), 'APPROVAL_SIGNATURE_INVALID')).toBe(true);
    expect(hasErrorCode(await resolveError(attempt, swapped), 'APPROVAL_SIGNATURE_INVALID')).toBe(true);
    expect(hasErrorCode(await resolveError(attempt, 'not-a-jws'), 'APPROVAL_SIGNATURE_INVALID')).toBe(true);
    expect(await taskEvents(attempt.taskId)).toHaveLength(before);
  });

  it('refuses a second resolution: an approval is resolved once', async () => {
    now = new Date();
    const attempt = await seedAttempt();
    await requestApproval(attempt);
    await resolve(attempt, await resolutionJws(director, attempt.approvalId, 'grant'));
    const after = (await taskEvents(attempt.taskId)).length;
    // when another director denies it, or the same director grants again
    const second = await resolveError(attempt, await resolutionJws(secondDirector, attempt.approvalId, 'deny'));
    const again = await resolveError(attempt, await resolutionJws(director, attempt.approvalId, 'grant'));
    // then both are refused and the log is unchanged
    expect(hasErrorCode(second, 'APPROVAL_NOT_PENDING')).toBe(true);
    expect(hasErrorCode(again, 'APPROVAL_NOT_PENDING')).toBe(true);
    expect(await taskEvents(attempt.taskId)).toHaveLength(after);
  });

  it('refuses an approval that does not exist, and a resolution signed for another approval', async () => {
    now = new Date();
    const attempt = await seedAttempt();
    await requestApproval(attempt);
    const unknown = { ...attempt, approvalId: uniqueName('apr') };
    expect(hasErrorCode(await resolveError(unknown, await resolutionJws(director, unknown.approvalId, 'grant')), 'APPROVAL_NOT_FOUND')).toBe(true);
    expect(hasErrorCode(await resolveError(attempt, await resolutionJws(director, unknown.approvalId, 'grant')), 'APPROVAL_RESOLUTION_MISMATCH')).toBe(true);
    expect(hasErrorCode(await bus.request(service.subjects.resolve, { approval_id: attempt.approvalId }).catch((e: unknown) => e), 'CONTRACT_INVALID')).toBe(true);
  });

  it('records expiry instead of a grant once the approval has expired', async () => {
    now = new Date();
    const attempt = await seedAttempt();
    await requestApproval(attempt);
    // (the expiry timer has looked at it under the current clock, and holds it on the server)
    await waitFor(() => (timerOutcomes.get(attempt.approvalId)?.includes('deferred') ? true : undefined), { what: 'the expiry timer to hold the approval' });
    // when a director answers after expires_at
    now = new Date(now.getTime() + 3601 * 1000);
    const reply = await resolve(attempt, await resolutionJws(director, attempt.approvalId, 'grant'));
    // then the approval expired
    expect(reply.status).toBe('expired');
    await waitForEvent(attempt.taskId, 'approval.expired');
    expect((await taskEvents(attempt.taskId)).some((event) => event.event_type === 'approval.granted')).toBe(false);
  });
});

describe('approval service: issue-grant', () => {
  it('mints a grant signed by the approval principal, bound to the attempt, class, scope, expiry and one use', async () => {
    // given a granted approval
    now = new Date();
    const attempt = await seedAttempt();
    await requestApproval(attempt);
    await resolve(attempt, await resolutionJws(director, attempt.approvalId, 'grant'));
    // when the orchestrator asks for the grant
    await bus.publish(service.subjects.issueGrant, issueGrantCommand(attempt, attempt.approvalId), { msgId: `${attempt.attemptId}:issue-grant` });
    const event = await waitForEvent(attempt.taskId, 'grant.issued');
    const { claims, jws } = event.payload as { claims: CapabilityGrantClaims; jws: string; at: string };

    // then the JWS verifies with the approval principal's key from the log, as the executor will check it
    const verified = await verifyClaims(jws, await approvalKeys(), { issuer: service.principalId, audience: 'writ-executor', typ: 'writ-grant+jwt', now });
    expect(verified.kid).toBe(service.kid);
    expect(CapabilityGrantClaims.parse(verified.claims)).toEqual(claims);
    // and the claims bind the grant
    const iat = Math.floor(now.getTime() / 1000);
    expect(claims).toMatchObject({
      iss: service.principalId,
      sub: 'writ-executor-1',
      aud: 'writ-executor',
      task_id: attempt.taskId,
      step_id: attempt.stepId,
      attempt_id: attempt.attemptId,
      action_class: 'execute_command',
      resource_scope: { paths: ['src/build'], hosts: ['registry.example.org'] },
      max_uses: 1,
      iat,
      exp: iat + 300,
      issued_by_principal_id: director.id,
      approval_ref: `approval:${attempt.approvalId}`,
      policy_result_ref: `policy_result:${attempt.policyResultId}`,
      constraints: { params_sha256: sha256Hex(canonicalJson(attempt.request.params)) },
    });
    expect(claims.jti).toMatch(/^gnt-[0-9a-f]{32}$/);
    expect(event).toMatchObject({ entity_type: 'grant', entity_id: claims.jti, attempt_id: attempt.attemptId, actor_id: service.principalId });
  });

  it('mints one grant for a redelivered command', async () => {
    now = new Date();
    const attempt = await seedAttempt('allow');
    const command = issueGrantCommand(attempt, null);
    // when the same command arrives twice (distinct message ids: past the dedupe window)
    await bus.publish(service.subjects.issueGrant, command, { msgId: `${attempt.attemptId}:issue-grant:1` });
    const second = await bus.publish(service.subjects.issueGrant, command, { msgId: `${attempt.attemptId}:issue-grant:2` });
    await waitHandled(second.seq);
    // then one grant exists, minted on the policy engine's direct allow
    const grants = (await taskEvents(attempt.taskId)).filter((event) => event.event_type === 'grant.issued');
    expect(grants).toHaveLength(1);
    expect((grants[0]?.payload as { claims: CapabilityGrantClaims }).claims).toMatchObject({ issued_by_principal_id: POLICY_ENGINE });
    expect((grants[0]?.payload as { claims: CapabilityGrantClaims }).claims.approval_ref).toBeUndefined();
  });

  it('mints nothing for an approval that was not granted, and dead-letters the command with the reason', async () => {
    now = new Date();
    const attempt = await seedAttempt();
    await requestApproval(attempt);
    await resolve(attempt, await resolutionJws(director, attempt.approvalId, 'deny'));
    // when a grant is asked for anyway
    const ack = await bus.publish(service.subjects.issueGrant, issueGrantCommand(attempt, attempt.approvalId), { msgId: `${attempt.attemptId}:issue-grant` });
    await waitHandled(ack.seq);
    // then no grant exists and the dead letter says why
    expect((await taskEvents(attempt.taskId)).some((event) => event.event_type === 'grant.issued')).toBe(false);
    const jsm = await jetstreamManager(nc);
    const letter = await waitFor(
      async () => {
        const message = await jsm.streams.getMessage(streams.dlq, { last_by_subj: `${root}.dlq.approval.issue-grant` }).catch(() => null);
        return message?.header.get(DeadLetterHeaders.STREAM_SEQ) === String(ack.seq) ? message : undefined;
      },
      { what: 'the dead letter' },
    );
    expect(letter.header.get(DeadLetterHeaders.ERROR_CODE)).toBe('APPROVAL_NOT_GRANTED');
    expect(letter.header.get(DeadLetterHeaders.REASON)).toBe('terminal');
  });
});

describe('approval service: state witness (Hermit 16.8)', () => {
  async function witnessedRequest(): Promise<{ attempt: Attempt; requested: EventEnvelope }> {
    now = new Date();
    const attempt = await seedAttempt('require_approval', true);
    await writeWorkspaceFile(attempt.taskId, 'src/build/app.o', 'v1');
    const requested = await requestApproval(attempt);
    return { attempt, requested };
  }

  it('captures the fingerprints of the target resources as the state witness of approval.requested', async () => {
    const { attempt, requested } = await witnessedRequest();
    const payload = requested.payload as { state_witness: { ref: string; fingerprints: Record<string, string>; observed_at: string }; packet: { state_witness_ref?: string } };
    const dirOf = sha256Hex(JSON.stringify([['app.o', `sha256:${sha256Hex('v1')}`]]));
    expect(payload.state_witness.fingerprints).toEqual({ 'src/build': `dir:${dirOf}`, 'https://registry.example.org/pkg': 'unobservable' });
    expect(payload.state_witness.ref).toBe(
      `sha256:${sha256Hex(canonicalJson({ task_id: attempt.taskId, fingerprints: payload.state_witness.fingerprints, observed_at: payload.state_witness.observed_at }))}`,
    );
    expect(payload.packet.state_witness_ref).toBe(payload.state_witness.ref);
  });

  it('given the resources unchanged, when a director grants, then approval.granted with witness_validated true, and the grant is minted', async () => {
    const { attempt } = await witnessedRequest();
    const asked = executorStandIn.requests;
    const reply = await resolve(attempt, await resolutionJws(director, attempt.approvalId, 'grant'));
    expect(reply.status).toBe('granted');
    expect(executorStandIn.requests).toBeGreaterThan(asked);
    expect((await waitForEvent(attempt.taskId, 'approval.granted')).payload).toMatchObject({ resolved_by: director.id, witness_validated: true });

    await bus.publish(service.subjects.issueGrant, issueGrantCommand(attempt, attempt.approvalId), { msgId: `${attempt.attemptId}:issue-grant` });
    const issued = await waitForEvent(attempt.taskId, 'grant.issued');
    expect((issued.payload as { claims: CapabilityGrantClaims }).claims).toMatchObject({ approval_ref: `approval:${attempt.approvalId}`, issued_by_principal_id: director.id });
  });

  it('given a file changed between request and grant, then approval.invalidated (witness_drift) and no grant is minted', async () => {
    const { attempt } = await witnessedRequest();
    await writeWorkspaceFile(attempt.taskId, 'src/build/app.o', 'v2');

    const reply = await resolve(attempt, await resolutionJws(director, attempt.approvalId, 'grant'));
    expect(reply.status).toBe('invalidated');
    const invalidated = await waitForEvent(attempt.taskId, 'approval.invalidated');
    expect(invalidated).toMatchObject({ event_id: reply.event_id, entity_id: attempt.approvalId });
    expect(invalidated.payload).toMatchObject({ resolved_by: director.id, cause: 'witness_drift', drifted_resources: ['src/build'] });

    // when a grant is asked for anyway, nothing is minted (APPROVAL_NOT_GRANTED, dead-lettered)
    const ack = await bus.publish(service.subjects.issueGrant, issueGrantCommand(attempt, attempt.approvalId), { msgId: `${attempt.attemptId}:issue-grant` });
    await waitHandled(ack.seq);
    const types = (await taskEvents(attempt.taskId)).map((event) => event.event_type);
    expect(types).not.toContain('approval.granted');
    expect(types).not.toContain('grant.issued');
  });

  it('given a deny, then no observation is needed: approval.denied', async () => {
    const { attempt } = await witnessedRequest();
    executorStandIn.silent = true;
    try {
      expect((await resolve(attempt, await resolutionJws(director, attempt.approvalId, 'deny'))).status).toBe('denied');
    } finally {
      executorStandIn.silent = false;
    }
  });

  it('given the executor does not answer at grant time, then APPROVAL_WITNESS_UNAVAILABLE and nothing is appended', async () => {
    const { attempt } = await witnessedRequest();
    const before = (await taskEvents(attempt.taskId)).length;
    executorStandIn.silent = true;
    let error: unknown;
    try {
      error = await resolveError(attempt, await resolutionJws(director, attempt.approvalId, 'grant'));
    } finally {
      executorStandIn.silent = false;
    }
    expect(hasErrorCode(error, 'APPROVAL_WITNESS_UNAVAILABLE')).toBe(true);
    expect(await taskEvents(attempt.taskId)).toHaveLength(before);
    // and once it answers again, the same director's grant goes through
    expect((await resolve(attempt, await resolutionJws(director, attempt.approvalId, 'grant'))).status).toBe('granted');
  });

  it('given the executor does not answer at request time, then no approval is recorded until it does (the bus retries)', async () => {
    now = new Date();
    const attempt = await seedAttempt('require_approval', true);
    executorStandIn.silent = true;
    const asked = executorStandIn.requests;
    await bus.publish(service.subjects.request, requestCommand(attempt), { msgId: `${attempt.approvalId}:request` });
    await waitFor(() => (executorStandIn.requests > asked ? true : undefined), { what: 'the first observation request' });
    expect((await taskEvents(attempt.taskId)).some((event) => event.event_type === 'approval.requested')).toBe(false);
    executorStandIn.silent = false;
    const requested = await waitFor(async () => (await taskEvents(attempt.taskId)).find((event) => event.event_type === 'approval.requested'), {
      what: 'approval.requested after the retry',
      timeoutMs: 20_000,
    });
    expect((requested.payload as { state_witness?: unknown }).state_witness).toMatchObject({ fingerprints: { 'src/build': 'absent' } });
  });
});
