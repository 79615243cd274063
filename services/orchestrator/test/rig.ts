import { jetstreamManager, type JetStreamManager, type MsgRequest } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { hasErrorCode, type EventDraft, type EventEnvelope } from '@writ/contracts';
import { EventStore } from '@writ/eventstore';
import { NatsArtifactStore, ensureWritStreams, loadOperatorSigner, signedPrincipalRegistration } from '@writ/runtime';
import { createLogger } from '@writ/telemetry';
import { connectTestNats, NATS_URL, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { createOrchestratorApp, type OrchestratorApp } from '../src/bootstrap.js';
import { loadOrchestratorConfig, type OrchestratorConfig } from '../src/config.js';
import { DIRECTOR, DIRECTOR_REGISTERED_AT, directorJwk, directorRegisteredDraft } from './task-fixtures.js';

const MiB = 1024 ** 2;
export const quiet = createLogger('orchestrator-test', { level: 'silent' });

/** A test's own subject root and streams on the real NATS, deleted afterwards. */
export interface Rig {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly config: OrchestratorConfig;
  /** The test's writer on the same log (plays ingress, policy, approval, executor, receipt). */
  readonly store: EventStore;
  readonly apps: OrchestratorApp[];
  /** Every command publish seen on core NATS (JetStream dedupe hides repeats from the stream, not from here). */
  readonly published: Array<{ subject: string; payload: Record<string, unknown> }>;
}

export async function createRig(name: string): Promise<Rig> {
  const nc = await connectTestNats(`orchestrator-${name}`);
  const root = uniqueName('t');
  const config = loadOrchestratorConfig({
    // The NATS the tests connect to (WRIT_NATS_URL of the shell, e.g. a worktree's own), not the service default.
    WRIT_NATS_URL: NATS_URL,
    // The deployment's trust anchor (npm test sets it from writ init): each director's registration must chain to it.
    ...(process.env['WRIT_TRUST_ANCHOR'] === undefined ? {} : { WRIT_TRUST_ANCHOR: process.env['WRIT_TRUST_ANCHOR'] }),
    WRIT_SUBJECT_ROOT: root,
    WRIT_EVENTS_STREAM: uniqueName('EVT'),
    WRIT_INGRESS_STREAM: uniqueName('ING'),
    WRIT_COMMANDS_STREAM: uniqueName('CMD'),
    WRIT_DLQ_STREAM: uniqueName('DLQ'),
    WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
    WRIT_BUS_MAX_BYTES: String(64 * MiB),
    // The context packs' bucket (the shared artifact bucket in a deployment), the test's own.
    WRIT_ARTIFACTS_BUCKET: uniqueName('ART'),
    WRIT_ARTIFACTS_MAX_BYTES: String(64 * MiB),
    WRIT_HTTP_PORT: '0',
    WRIT_HTTP_HOST: '127.0.0.1',
    WRIT_BUS_PULL_EXPIRES_MS: '1000',
    WRIT_BUS_BACKOFF_INITIAL_MS: '20',
  });
  const store = await EventStore.open(nc, { stream: config.env.WRIT_EVENTS_STREAM, subjectPrefix: config.subjects.events, maxBytes: 64 * MiB });
  // The director whose signed resolutions the fixtures record (task-fixtures `approvalResolvedDraft`).
  // Registered as ingress appends `writ principal add`: signed by the operator, chaining to the trust anchor.
  const operator = await loadOperatorSigner();
  if (operator === undefined) throw new Error('WRIT_OPERATOR_KEY is not set: run the tests through npm test (writ init makes the operator)');
  const signed = await signedPrincipalRegistration(
    { principal_id: DIRECTOR, principal_type: 'user', display_name: 'Director', roles: ['director'], keys: [directorJwk()] },
    { ...operator, now: new Date(DIRECTOR_REGISTERED_AT) },
  );
  await store.appendToEntity('principal', DIRECTOR, [directorRegisteredDraft(signed)], 0);
  const published: Rig['published'] = [];
  const sub: Subscription = nc.subscribe(config.subjects.commandsAll);
  void (async () => {
    for await (const msg of sub) published.push({ subject: msg.subject, payload: msg.json() });
  })();
  return { nc, jsm: await jetstreamManager(nc), config, store, apps: [], published };
}

/** The rig's artifact bucket (where packs and Last Wills are stored), opened as a reader: the test's view of the bytes. */
export async function rigBucket(rig: Rig): Promise<NatsArtifactStore> {
  return NatsArtifactStore.open(rig.nc, {
    bucket: rig.config.env.WRIT_ARTIFACTS_BUCKET,
    maxBytes: 64 * MiB,
    replicas: 1,
    failure: (message, options) => Object.assign(new Error(message, { cause: options.cause }), { code: 'TEST_BUCKET' }),
  });
}

export async function startApp(rig: Rig): Promise<OrchestratorApp> {
  const app = await createOrchestratorApp(rig.config, { logger: quiet, nestLogger: false });
  rig.apps.push(app);
  return app;
}

export async function stopApp(rig: Rig, app: OrchestratorApp): Promise<void> {
  rig.apps.splice(rig.apps.indexOf(app), 1);
  await app.close();
}

export async function disposeRig(rig: Rig): Promise<void> {
  await Promise.all(rig.apps.map((app) => app.close()));
  const env = rig.config.env;
  await deleteStreams(rig.nc, env.WRIT_EVENTS_STREAM, env.WRIT_INGRESS_STREAM, env.WRIT_COMMANDS_STREAM, env.WRIT_DLQ_STREAM, `OBJ_${env.WRIT_ARTIFACTS_BUCKET}`);
  await rig.nc.drain();
}

/**
 * Appends as other services would: each event on its own, at the task's current head,
 * re-reading after a lost race. (One multi-event append would chain its second event to
 * its first, and the orchestrator reacts to the first within milliseconds: the second
 * then loses its guard on every retry.)
 */
export async function append(rig: Rig, taskId: string, ...drafts: EventDraft[]): Promise<void> {
  for (const draft of drafts) {
    for (let attempt = 0; ; attempt++) {
      const head = await rig.store.head(taskId);
      try {
        await rig.store.append(taskId, [draft], head.taskSeq);
        break;
      } catch (error) {
        if (!hasErrorCode(error, 'EVENTSTORE_CONFLICT') || attempt > 20) throw error;
      }
    }
  }
}

export async function events(rig: Rig, taskId: string): Promise<EventEnvelope[]> {
  return (await rig.store.read(taskId)).map((stored) => stored.event);
}

/** Waits until the task's log holds `count` events of `type`; returns them. */
export async function waitForEvents(rig: Rig, taskId: string, type: string, count = 1): Promise<EventEnvelope[]> {
  return waitFor(
    async () => {
      const found = (await events(rig, taskId)).filter((e) => e.event_type === type);
      return found.length >= count ? found : undefined;
    },
    { what: `${count} ${type} in task ${taskId}`, timeoutMs: 20_000, intervalMs: 25 },
  );
}

/** Messages stored on the commands stream under `subject`, in order. */
export async function storedCommands(rig: Rig, subject: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  let seq = 1;
  for (;;) {
    // STREAM.MSG.GET takes `next_by_subj` (the first message on the subject at or after `seq`); the client's type only lists seq and last_by_subj.
    const request = { seq, next_by_subj: subject } as unknown as MsgRequest;
    const msg = await rig.jsm.streams.getMessage(rig.config.env.WRIT_COMMANDS_STREAM, request).catch(() => null);
    if (msg === null) return out;
    out.push(msg.json());
    seq = msg.seq + 1;
  }
}

/** Waits for the stored command on `subject` about `attemptId`. */
export async function waitForCommand(rig: Rig, subject: string, attemptId: string): Promise<Record<string, unknown>> {
  return waitFor(async () => (await storedCommands(rig, subject)).find((c) => c['attempt_id'] === attemptId), {
    what: `a command on ${subject} for ${attemptId}`,
    timeoutMs: 20_000,
    intervalMs: 25,
  });
}

/** Waits for the stored command on `subject` that `matches`. */
export async function waitForCommandWhere(rig: Rig, subject: string, matches: (command: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>> {
  return waitFor(async () => (await storedCommands(rig, subject)).find(matches), { what: `${what} on ${subject}`, timeoutMs: 20_000, intervalMs: 25 });
}

/** Waits until the durable has handled everything delivered so far (nothing pending, nothing unacked). */
export async function waitForIdle(rig: Rig, durable = 'orchestrator'): Promise<void> {
  await waitFor(
    async () => {
      const info = await rig.jsm.consumers.info(rig.config.env.WRIT_EVENTS_STREAM, durable);
      return info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
    },
    { what: 'the orchestrator consumer to be idle', timeoutMs: 20_000, intervalMs: 25 },
  );
}

/** The bus streams under the rig's root, as the service would ensure them (for tests that run the handler without the app). */
export async function ensureBusStreams(rig: Rig): Promise<void> {
  const env = rig.config.env;
  await ensureWritStreams(rig.jsm, {
    names: { ingress: env.WRIT_INGRESS_STREAM, commands: env.WRIT_COMMANDS_STREAM, dlq: env.WRIT_DLQ_STREAM },
    subjects: { ingress: rig.config.subjects.ingressAll, commands: rig.config.subjects.commandsAll, dlq: rig.config.subjects.dlqAll },
    maxBytes: 64 * MiB,
  });
}
