import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusClient } from '@writ/bus';
import { POLICY_APPLICATION_JWS_TYPE, type EventDraft, type EventEnvelope, type PolicyProfileRecord, type PrincipalRegistered, type PrincipalRole, type PrincipalType } from '@writ/contracts';
import { generateEd25519Key, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { createLogger } from '@writ/telemetry';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { validateDocument } from '../src/application/profile-documents.js';
import { commandRequest, evaluateCommandFor, ingressDrafts, taskIds } from './task-fixtures.js';
import { createPolicyApp, type PolicyApp } from '../src/bootstrap.js';
import { loadPolicyConfig, type PolicyConfig } from '../src/config.js';

const MiB = 1024 ** 2;
export const quiet = createLogger('policy-test', { level: 'silent' });

/** A test's own subject root and streams on the real NATS, deleted afterwards. */
export interface Rig {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly config: PolicyConfig;
  /** The test's writer on the same log (plays ingress). */
  readonly store: EventStore;
  /** Plays the orchestrator: publishes EvaluatePolicy. */
  readonly bus: BusClient;
  readonly apps: PolicyApp[];
}

export async function createRig(name: string): Promise<Rig> {
  const nc = await connectTestNats(`policy-${name}`);
  const config = loadPolicyConfig({
    // The NATS the tests connect to (WRIT_NATS_URL), not the default port.
    WRIT_NATS_URL: NATS_URL,
    WRIT_SUBJECT_ROOT: uniqueName('t'),
    WRIT_EVENTS_STREAM: uniqueName('EVT'),
    WRIT_INGRESS_STREAM: uniqueName('ING'),
    WRIT_COMMANDS_STREAM: uniqueName('CMD'),
    WRIT_DLQ_STREAM: uniqueName('DLQ'),
    WRIT_POLICY_BUCKET: uniqueName('POL'),
    WRIT_POLICY_BUCKET_MAX_BYTES: String(8 * MiB),
    WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
    WRIT_BUS_MAX_BYTES: String(64 * MiB),
    WRIT_HTTP_PORT: '0',
    WRIT_HTTP_HOST: '127.0.0.1',
    WRIT_BUS_PULL_EXPIRES_MS: '1000',
    WRIT_BUS_BACKOFF_INITIAL_MS: '20',
  });
  const store = await EventStore.open(nc, { stream: config.env.WRIT_EVENTS_STREAM, subjectPrefix: config.subjects.events, maxBytes: 64 * MiB });
  return { nc, jsm: await jetstreamManager(nc), config, store, bus: new BusClient(nc), apps: [] };
}

export async function startApp(rig: Rig, options: { clock?: () => Date } = {}): Promise<PolicyApp> {
  const app = await createPolicyApp(rig.config, { logger: quiet, nestLogger: false, ...options });
  rig.apps.push(app);
  return app;
}

export async function disposeRig(rig: Rig): Promise<void> {
  await Promise.all(rig.apps.map((app) => app.close()));
  await rig.bus.close();
  const env = rig.config.env;
  await deleteStreams(rig.nc, env.WRIT_EVENTS_STREAM, env.WRIT_INGRESS_STREAM, env.WRIT_COMMANDS_STREAM, env.WRIT_DLQ_STREAM, `KV_${env.WRIT_POLICY_BUCKET}`);
  await rig.nc.drain();
}

export async function append(rig: Rig, taskId: string, ...drafts: EventDraft[]): Promise<void> {
  const head = await rig.store.head(taskId);
  await rig.store.append(taskId, drafts, head.taskSeq);
}

export async function events(rig: Rig, taskId: string): Promise<EventEnvelope[]> {
  return (await rig.store.read(taskId)).map((stored) => stored.event);
}

export async function waitForEvents(rig: Rig, taskId: string, type: string, count = 1): Promise<EventEnvelope[]> {
  return waitFor(
    async () => {
      const found = (await events(rig, taskId)).filter((e) => e.event_type === type);
      return found.length >= count ? found : undefined;
    },
    { what: `${count} ${type} in task ${taskId}`, timeoutMs: 20_000, intervalMs: 25 },
  );
}

/** Waits until the `policy` durable has handled everything delivered so far. */
export async function waitForIdle(rig: Rig, durable = 'policy'): Promise<void> {
  await waitFor(
    async () => {
      const info = await rig.jsm.consumers.info(rig.config.env.WRIT_COMMANDS_STREAM, durable);
      return info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
    },
    { what: 'the policy consumer to be idle', timeoutMs: 20_000, intervalMs: 25 },
  );
}

/** A principal registered in the test's log with one fresh key, as `writ principal add` would. */
export interface TestPrincipal {
  readonly id: string;
  readonly key: Ed25519SigningKey;
}

export async function registerPrincipal(rig: Rig, type: PrincipalType, roles: PrincipalRole[], id = uniqueName(roles[0] ?? type).replaceAll('_', '-')): Promise<TestPrincipal> {
  const key = await generateEd25519Key({ kid: `${id}-k1` });
  const at = new Date().toISOString();
  const payload: PrincipalRegistered = {
    principal_id: id,
    principal_type: type,
    display_name: id,
    roles,
    keys: [key.publicJwk as PrincipalRegistered['keys'][number]],
    registered_by: 'operator',
    at,
  };
  await rig.store.appendToEntity(
    'principal',
    id,
    [
      {
        event_id: `reg-${id}`,
        schema_version: 1,
        event_type: 'principal.registered',
        entity_type: 'principal',
        entity_id: id,
        occurred_at: at,
        actor_type: 'user',
        actor_id: 'operator',
        payload,
        causation_id: null,
        correlation_id: id,
        idempotency_key: `principal.registered:${id}`,
      },
    ],
    0,
  );
  return { id, key };
}

/** A signed PolicyProfileApplication, as `writ policy apply` sends it. */
export async function signApplication(
  signer: { id: string; key: Ed25519SigningKey },
  document: unknown,
  options: { appliedAt?: Date; appliedBy?: string; typ?: string } = {},
): Promise<string> {
  const application = { document, applied_by: options.appliedBy ?? signer.id, applied_at: (options.appliedAt ?? new Date()).toISOString() };
  return signJws(JSON.stringify(application), signer.key, { typ: options.typ ?? POLICY_APPLICATION_JWS_TYPE });
}

/** The record the policy service makes of an application it accepted (the signed document's content, the JWS kept), for tests that write it around the service. */
export async function signedRecord(
  signer: { id: string; key: Ed25519SigningKey },
  document: unknown,
  options: { appliedAt?: Date; previousVersion?: string | null } = {},
): Promise<PolicyProfileRecord> {
  const appliedAt = options.appliedAt ?? new Date();
  const { document: parsed, version } = validateDocument(document);
  return {
    profile_id: parsed.id,
    version,
    document: parsed as Record<string, unknown>,
    applied_by: signer.id,
    applied_at: appliedAt.toISOString(),
    previous_version: options.previousVersion ?? null,
    application_jws: await signApplication(signer, document, { appliedAt }),
  };
}

/** Appends a new task under `profile` asking to run `argv` (as ingress would), sends EvaluatePolicy (as the orchestrator would), returns the PolicyResult. */
export async function evaluateUnder(rig: Rig, profile: string, argv: string[]) {
  const ids = taskIds(uniqueName('t'));
  const request = commandRequest(ids, argv, profile);
  await append(rig, ids.task_id, ...ingressDrafts(ids, request));
  await rig.bus.publish(rig.config.subjects.policyEvaluate, evaluateCommandFor(ids, request), { msgId: `${ids.attempt_id}:cmd:policy.evaluate:1` });
  const [evaluated] = await waitForEvents(rig, ids.task_id, 'policy.evaluated');
  return (evaluated!.payload as { policy_result: { outcome: string; policy_version: string; policy_profile_ref: string; matched_rules: string[] } }).policy_result;
}
