import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, type PubAck } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { BusClient, DeadLetterHeaders, durableName } from '@writ/bus';
import {
  CancelApproval,
  IssueGrant,
  PolicyEvaluated,
  RequestApproval,
  type ActionRequest,
  type ApprovalResolution,
  type EventEnvelope,
  type PolicyOutcome,
  type PolicyProfileRecord,
  type PrincipalRegistered,
  type PrincipalRole,
  type PublicEd25519Jwk,
} from '@writ/contracts';
import { canonicalJson, generateEd25519Key, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { createLogger } from '@writ/telemetry';
import { loadOperatorSigner, packetHashOfRef, signedPrincipalRegistration } from '@writ/runtime';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { SERVICE_NAME, createApprovalApp, type ApprovalApp } from '../src/bootstrap.js';
import { loadApprovalConfig, type ApprovalConfig } from '../src/config.js';
import type { TimerOutcome } from '../src/inbound/approval-expiry.timer.js';

/**
 * The real approval service in this process against the real NATS, on a test-unique subject
 * root, streams and buckets (all deleted by `stop`). Tests seed a task stream with what the
 * upstream services would have appended, publish commands, and read the log.
 */

const MiB = 1024 ** 2;
export const POLICY_ENGINE = 'writ-policy';
export const PROFILE_ID = 'local_edit_allowed';
export const PROFILE_V1 = `sha256:${'1'.repeat(64)}`;
export const PROFILE_V2 = `sha256:${'2'.repeat(64)}`;
/** A packet hash no approval shows. */
export const OTHER_PACKET = `sha256:${'0'.repeat(64)}`;

export interface User {
  readonly id: string;
  readonly key: Ed25519SigningKey;
}

export interface Attempt {
  readonly taskId: string;
  readonly stepId: string;
  readonly attemptId: string;
  readonly approvalId: string;
  readonly policyResultId: string;
  readonly request: ActionRequest;
}

export interface RigOptions {
  /** WRIT_APPROVAL_TTL_SECONDS (default 3600). */
  readonly ttlSeconds?: number;
  /** WRIT_APPROVAL_EXPIRY_REFRESH_SECONDS (default the service's). */
  readonly refreshSeconds?: number;
}

export class ApprovalRig {
  readonly root = uniqueName('t');
  readonly streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
  readonly buckets = { artifacts: uniqueName('ART'), policy: uniqueName('POL') };
  /** Every expiry timer delivery, in order. */
  readonly timerOutcomes: TimerOutcome[] = [];
  nc!: NatsConnection;
  store!: EventStore;
  bus!: BusClient;
  service!: ApprovalApp;
  config!: ApprovalConfig;
  policyKv!: KV;
  director!: User;
  secondDirector!: User;
  observer!: User;
  /** The proposing agent; it holds the director role too, and still may never approve its own action. */
  agent!: User;
  #keyDir = '';
  readonly #packetHashes = new Map<string, string>();
  #observer: Subscription | undefined;

  private constructor(private readonly options: RigOptions) {}

  static async start(options: RigOptions = {}): Promise<ApprovalRig> {
    const rig = new ApprovalRig(options);
    await rig.#start();
    return rig;
  }

  async #start(): Promise<void> {
    this.nc = await connectTestNats('approval-rig');
    this.#keyDir = await mkdtemp(join(tmpdir(), 'writ-approval-rig-'));
    this.config = loadApprovalConfig({
      WRIT_NATS_URL: NATS_URL,
      WRIT_HTTP_PORT: '0',
      WRIT_HTTP_HOST: '127.0.0.1',
      WRIT_SUBJECT_ROOT: this.root,
      WRIT_EVENTS_STREAM: this.streams.events,
      WRIT_INGRESS_STREAM: this.streams.ingress,
      WRIT_COMMANDS_STREAM: this.streams.commands,
      WRIT_DLQ_STREAM: this.streams.dlq,
      WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
      WRIT_BUS_MAX_BYTES: String(64 * MiB),
      WRIT_APPROVAL_KEY_FILE: join(this.#keyDir, 'approval.jwk.json'),
      WRIT_APPROVAL_OBSERVE_TIMEOUT_MS: '500',
      WRIT_APPROVAL_TTL_SECONDS: String(this.options.ttlSeconds ?? 3600),
      ...(this.options.refreshSeconds === undefined ? {} : { WRIT_APPROVAL_EXPIRY_REFRESH_SECONDS: String(this.options.refreshSeconds) }),
      WRIT_ARTIFACTS_BUCKET: this.buckets.artifacts,
      WRIT_ARTIFACTS_MAX_BYTES: String(16 * MiB),
      WRIT_POLICY_BUCKET: this.buckets.policy,
      // The deployment's trust anchor (npm test sets it from writ init): each director's registration must chain to it.
      ...(process.env['WRIT_TRUST_ANCHOR'] === undefined ? {} : { WRIT_TRUST_ANCHOR: process.env['WRIT_TRUST_ANCHOR'] }),
    });
    this.policyKv = await this.createPolicyBucket();
    this.#observer = this.#startObserver();
    await this.startService();
    this.store = await EventStore.open(this.nc, { stream: this.streams.events, subjectPrefix: this.config.streams.eventsPrefix, maxBytes: 64 * MiB });
    this.bus = new BusClient(this.nc);
    [this.director, this.secondDirector, this.observer, this.agent] = await Promise.all([
      this.registerUser(['director']),
      this.registerUser(['director']),
      this.registerUser(['observer']),
      this.registerUser(['director'], 'agent'),
    ]);
  }

  /** Starts (or, after `stopService`, restarts) the service on the same streams, buckets and key. */
  async startService(): Promise<void> {
    this.service = await createApprovalApp(this.config, {
      logger: createLogger('approval-rig', { level: 'silent' }),
      pullExpiresMs: 1_000,
      onExpiryOutcome: (outcome) => this.timerOutcomes.push(outcome),
    });
  }

  /** A graceful stop of the service alone (the streams and what they hold stay). */
  async stopService(): Promise<void> {
    await this.service.close();
  }

  async stop(): Promise<void> {
    this.#observer?.unsubscribe();
    await this.service?.close().catch(() => undefined);
    await this.bus?.close();
    if (this.nc !== undefined) {
      const { events, ingress, commands, dlq } = this.streams;
      await deleteStreams(this.nc, events, ingress, commands, dlq, `OBJ_${this.buckets.artifacts}`, `KV_${this.buckets.policy}`);
      await this.nc.close();
    }
    await rm(this.#keyDir, { recursive: true, force: true });
  }

  /** The policy service's bucket as the service reads it, holding the test profile at `PROFILE_V1`. */
  async createPolicyBucket(): Promise<KV> {
    this.policyKv = await new Kvm(this.nc).create(this.buckets.policy, { max_bytes: MiB });
    await this.putProfile(PROFILE_V1);
    return this.policyKv;
  }

  async deletePolicyBucket(): Promise<void> {
    await deleteStreams(this.nc, `KV_${this.buckets.policy}`);
  }

  /** What the policy service stores when a director applies a new version of the test profile. */
  async putProfile(version: string, profileId = PROFILE_ID): Promise<void> {
    const record: PolicyProfileRecord = { profile_id: profileId, version, document: {}, applied_by: POLICY_ENGINE, applied_at: new Date().toISOString(), previous_version: null };
    await this.policyKv.put(profileId, canonicalJson(record));
  }

  async deleteProfile(profileId = PROFILE_ID): Promise<void> {
    await this.policyKv.delete(profileId);
  }

  /** The artifact stored under `sha256` in the artifact bucket, parsed as JSON. */
  async artifactJson(sha256: string): Promise<unknown> {
    const bytes = await (await new Objm(this.nc).open(this.buckets.artifacts)).getBlob(`sha256-${sha256}`);
    return bytes === null ? undefined : JSON.parse(new TextDecoder().decode(bytes));
  }

  /** `unauthorized`: appended without the operator's signature, as a bus credential alone could append it (chains to no anchor). */
  async registerUser(roles: PrincipalRole[], principalType: PrincipalRegistered['principal_type'] = 'user', options: { unauthorized?: boolean } = {}): Promise<User> {
    const id = uniqueName('user');
    const key = await generateEd25519Key({ kid: `${id}-k1` });
    // Operator-signed, as ingress appends what `writ principal add` sends: it chains to the trust anchor.
    const operator = await loadOperatorSigner();
    if (operator === undefined) throw new Error('WRIT_OPERATOR_KEY is not set: run the tests through npm test (writ init makes the operator)');
    const payload: PrincipalRegistered = await signedPrincipalRegistration(
      { principal_id: id, principal_type: principalType, display_name: id, roles, keys: [key.publicJwk as PublicEd25519Jwk] },
      { ...operator, now: new Date() },
    );
    if (options.unauthorized === true) delete (payload as { authorization?: string }).authorization;
    const at = payload.at;
    const draft = {
      event_id: uniqueName('evt'),
      schema_version: 1,
      event_type: 'principal.registered',
      entity_type: 'principal' as const,
      entity_id: id,
      occurred_at: at,
      actor_type: 'system' as const,
      actor_id: 'test',
      payload,
      causation_id: null,
      correlation_id: id,
    };
    await this.store.appendToEntity('principal', id, [draft], 0);
    return { id, key };
  }

  /** A task whose attempt waits for policy, and policy's verdict on it (profile `PROFILE_ID` at `PROFILE_V1`). */
  async seedAttempt(options: { outcome?: PolicyOutcome; witnessRequired?: boolean; profileId?: string } = {}): Promise<Attempt> {
    const taskId = uniqueName('task');
    const attempt: Attempt = {
      taskId,
      stepId: uniqueName('step'),
      attemptId: uniqueName('att'),
      approvalId: uniqueName('apr'),
      policyResultId: uniqueName('pr'),
      request: {
        action_request_id: uniqueName('ar'),
        task_id: taskId,
        action_class: 'execute_command',
        target_resources: ['src/build'],
        params: { argv: ['make', 'build'], cwd: 'src' },
        expected_effects: ['build output in src/build'],
        reversibility_hint: 'reversible',
        reason: 'build the project',
        proposed_by: this.agent.id,
        proposed_at: new Date().toISOString(),
      },
    };
    const outcome = options.outcome ?? 'require_approval';
    const at = new Date().toISOString();
    const profileId = options.profileId ?? PROFILE_ID;
    const evaluated = PolicyEvaluated.parse({
      policy_result: {
        policy_result_id: attempt.policyResultId,
        task_id: taskId,
        step_id: attempt.stepId,
        attempt_id: attempt.attemptId,
        action_request_id: attempt.request.action_request_id,
        outcome,
        action_class: 'execute_command',
        risk_band: 'high',
        action_summary: 'execute_command: make build',
        risk_summary: 'runs a build in the cell',
        policy_profile_ref: `${profileId}@${PROFILE_V1}`,
        policy_version: PROFILE_V1,
        affected_resources: attempt.request.target_resources,
        reasoning_summary: 'commands need a director',
        matched_rules: ['execute_command_requires_approval'],
        witness_required: options.witnessRequired ?? false,
        revalidation_conditions: [],
        ...(outcome === 'require_approval' ? { approver_roles: ['director'] } : {}),
        evaluated_at: at,
        evaluated_by: POLICY_ENGINE,
      },
      decision: {
        decision_id: uniqueName('dec'),
        task_id: taskId,
        step_id: attempt.stepId,
        attempt_id: attempt.attemptId,
        decision_type: 'safety',
        summary: `policy ${outcome}`,
        rationale: 'commands need a director',
        evidence_refs: [],
        risk_level: 'high',
        decided_by: POLICY_ENGINE,
        reversible: true,
        created_at: at,
      },
    });
    const draft = (eventType: string, entityType: 'attempt' | 'decision', entityId: string, payload: Record<string, unknown>) => ({
      event_id: uniqueName('evt'),
      schema_version: 1,
      event_type: eventType,
      entity_type: entityType,
      entity_id: entityId,
      step_id: attempt.stepId,
      attempt_id: attempt.attemptId,
      occurred_at: at,
      actor_type: 'service' as const,
      actor_id: 'test',
      payload,
      causation_id: null,
      correlation_id: taskId,
    });
    await this.store.append(
      taskId,
      [
        draft('attempt.awaiting_policy', 'attempt', attempt.attemptId, { action_request: attempt.request, at }),
        draft('policy.evaluated', 'decision', evaluated.decision.decision_id, evaluated),
      ],
      0,
    );
    return attempt;
  }

  /**
   * Appends a resolution straight to the task's subject, as anyone able to write the log could,
   * claiming to be the approval service: what a forged `approval.granted` looks like.
   */
  async appendForged(attempt: Attempt, eventType: string, payload: Record<string, unknown>): Promise<EventEnvelope> {
    const events = await this.taskEvents(attempt.taskId);
    const at = new Date().toISOString();
    await this.store.append(
      attempt.taskId,
      [
        {
          event_id: uniqueName('evt-forged'),
          schema_version: 1,
          event_type: eventType,
          entity_type: 'approval',
          entity_id: attempt.approvalId,
          step_id: attempt.stepId,
          attempt_id: attempt.attemptId,
          occurred_at: at,
          actor_type: 'service',
          actor_id: this.service.principalId,
          payload: { at, ...payload },
          causation_id: null,
          correlation_id: attempt.taskId,
        },
      ],
      events.at(-1)?.task_seq ?? 0,
    );
    return (await this.taskEvents(attempt.taskId)).at(-1) as EventEnvelope;
  }

  /** Revokes a user's key in the log (`principal.key_revoked`), as an operator would after a compromise. */
  async revokeKey(user: User, reason = 'compromised'): Promise<void> {
    const events = await this.store.readEntity('principal', user.id);
    const at = new Date().toISOString();
    await this.store.appendToEntity(
      'principal',
      user.id,
      [
        {
          event_id: uniqueName('evt'),
          schema_version: 1,
          event_type: 'principal.key_revoked',
          entity_type: 'principal',
          entity_id: user.id,
          occurred_at: at,
          actor_type: 'system',
          actor_id: 'test',
          payload: { kid: user.key.kid, reason, revoked_by: 'test', at },
          causation_id: null,
          correlation_id: user.id,
        },
      ],
      events.length,
    );
  }

  async taskEvents(taskId: string): Promise<EventEnvelope[]> {
    return (await this.store.read(taskId)).map((stored) => stored.event);
  }

  async waitForEvent(taskId: string, eventType: string, timeoutMs = 10_000): Promise<EventEnvelope> {
    return waitFor(async () => (await this.taskEvents(taskId)).find((event) => event.event_type === eventType), { what: `${eventType} on ${taskId}`, timeoutMs });
  }

  async requestApproval(attempt: Attempt): Promise<EventEnvelope> {
    const command = RequestApproval.parse({
      task_id: attempt.taskId,
      step_id: attempt.stepId,
      attempt_id: attempt.attemptId,
      approval_id: attempt.approvalId,
      policy_result_id: attempt.policyResultId,
      action_request: attempt.request,
      requested_by: this.agent.id,
      risk_band: 'high',
      reason: 'commands need a director',
    });
    await this.bus.publish(this.service.subjects.request, command, { msgId: `${attempt.approvalId}:request` });
    const requested = await this.waitForEvent(attempt.taskId, 'approval.requested');
    this.#packetHashes.set(attempt.approvalId, packetHashOfRef(String(requested.payload['approval_packet_ref'])) ?? OTHER_PACKET);
    return requested;
  }

  /** The packet hash approval `approvalId` shows (what a director signs); a hash of no packet if it was never requested here. */
  packetHash(approvalId: string): string {
    return this.#packetHashes.get(approvalId) ?? OTHER_PACKET;
  }

  /** A director's signed ApprovalResolution, over the approval's packet unless `overrides` say otherwise. */
  async resolutionJws(user: User, approvalId: string, decision: ApprovalResolution['decision'], overrides: Partial<ApprovalResolution> & { signer?: Ed25519SigningKey } = {}): Promise<string> {
    const { signer, ...fields } = overrides;
    const resolution: ApprovalResolution = {
      approval_id: approvalId,
      decision,
      packet_hash: this.packetHash(approvalId),
      resolved_by: user.id,
      resolved_at: new Date().toISOString(),
      note: `${decision} by ${user.id}`,
      ...fields,
    };
    return signJws(canonicalJson(resolution), signer ?? user.key);
  }

  async resolve(attempt: Attempt, user: User, decision: ApprovalResolution['decision']): Promise<{ status: string; resolved_by: string; event_id: string }> {
    return this.bus.request(this.service.subjects.resolve, { approval_id: attempt.approvalId, task_id: attempt.taskId, resolution_jws: await this.resolutionJws(user, attempt.approvalId, decision) });
  }

  /** The error a resolution is refused with (an Error saying so when it was accepted). */
  async resolveError(attempt: Attempt, user: User, decision: ApprovalResolution['decision']): Promise<unknown> {
    return this.resolve(attempt, user, decision).then(
      () => new Error('the resolution was accepted'),
      (error: unknown) => error,
    );
  }

  async cancel(attempt: Attempt, cause: CancelApproval['cause'], msgSuffix = ''): Promise<PubAck> {
    const command = CancelApproval.parse({
      task_id: attempt.taskId,
      step_id: attempt.stepId,
      attempt_id: attempt.attemptId,
      approval_id: attempt.approvalId,
      cause,
      reason: cause === 'task_ended' ? 'the task was cancelled by its owner' : 'a newly bound input changed the targets',
      cancelled_by: 'writ-orchestrator',
    });
    return this.bus.publish(this.service.subjects.cancel, command, { msgId: `${attempt.approvalId}:cancel:${cause}${msgSuffix}` });
  }

  async issueGrant(attempt: Attempt, msgSuffix = ''): Promise<PubAck> {
    const command = IssueGrant.parse({
      task_id: attempt.taskId,
      step_id: attempt.stepId,
      attempt_id: attempt.attemptId,
      action_request: attempt.request,
      policy_result_id: attempt.policyResultId,
      approval_id: attempt.approvalId,
      issued_to: 'writ-executor-1',
    });
    return this.bus.publish(this.service.subjects.issueGrant, command, { msgId: `${attempt.attemptId}:issue-grant${msgSuffix}` });
  }

  /** Waits until the durable of `subject` has acknowledged everything up to `seq`. */
  async waitHandled(subject: string, seq: number): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    const durable = durableName(SERVICE_NAME, subject);
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(this.streams.commands, durable);
        return info.ack_floor.stream_seq >= seq && info.num_ack_pending === 0 && info.num_pending === 0 ? true : undefined;
      },
      { what: `${durable} to settle at ${seq}` },
    );
  }

  /** The error code of the dead letter stored for the command at `seq` on `<root>.dlq.approval.<verb>`. */
  async deadLetterCode(verb: string, seq: number): Promise<string | undefined> {
    const jsm = await jetstreamManager(this.nc);
    const letter = await waitFor(
      async () => {
        const message = await jsm.streams.getMessage(this.streams.dlq, { last_by_subj: `${this.root}.dlq.approval.${verb}` }).catch(() => null);
        return message?.header.get(DeadLetterHeaders.STREAM_SEQ) === String(seq) ? message : undefined;
      },
      { what: `the dead letter of ${verb} #${seq}` },
    );
    return letter.header.get(DeadLetterHeaders.ERROR_CODE);
  }

  /** Timer outcomes of one approval, in order. */
  outcomesOf(approvalId: string): string[] {
    return this.timerOutcomes.filter((outcome) => outcome.approval_id === approvalId).map((outcome) => outcome.kind);
  }

  /** Waits until the timer reported `kind` for the approval. */
  async waitForTimer(approvalId: string, kind: TimerOutcome['kind'], timeoutMs = 10_000): Promise<void> {
    await waitFor(() => (this.outcomesOf(approvalId).includes(kind) ? true : undefined), { what: `the expiry timer to report ${kind} for ${approvalId}`, timeoutMs });
  }

  /**
   * A stand-in for the executor's `<root>.qry.executor.observe` (services never import each
   * other): every resource has one fixed fingerprint, so a witness always revalidates.
   */
  #startObserver(): Subscription {
    const sub = this.nc.subscribe(`${this.root}.qry.executor.observe`);
    void (async () => {
      for await (const msg of sub) {
        const { resources } = msg.json<{ resources: string[] }>();
        msg.respond(JSON.stringify({ fingerprints: Object.fromEntries(resources.map((resource) => [resource, `sha256:${'a'.repeat(64)}`])), observed_at: new Date().toISOString() }));
      }
    })();
    return sub;
  }
}
