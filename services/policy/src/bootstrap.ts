import type { INestApplication, LogLevel } from '@nestjs/common';
import type { JetStreamServer } from '@writ/bus';
import { ServiceRuntime, serviceHttp, serviceStreams, type ReadinessRegistry } from '@writ/runtime';
import { startServiceApp } from '@writ/runtime/nest';
import { createLogger, type Logger } from '@writ/telemetry';
import type { Clock } from './application/ports.js';
import { ProfileAuthority, builtinRecords } from './application/profile-authority.js';
import { ProfileCatalog } from './application/profile-catalog.js';
import { ProfileSync } from './application/profile-sync.js';
import type { PolicyConfig } from './config.js';
import { EventStoreProfileLog } from './outbound/event-store-profile-log.js';
import { KvProfileBucket } from './outbound/kv-profile-bucket.js';
import { LogParticipantScopes } from './outbound/log-participant-scopes.js';
import { LogPrincipalKeyHistory } from './outbound/log-principal-keys.js';
import { PolicyModule, SERVICE_NAME, type PolicyProfileStore } from './policy.module.js';

export interface PolicyAppOptions {
  readonly logger?: Logger;
  /** Nest's own log levels (default errors and warnings); false silences it. */
  readonly nestLogger?: false | LogLevel[];
  /** Tests may pin the clock; production reads the system clock. */
  readonly clock?: Clock;
  /** Runs last at shutdown, after NATS drained (main: flush telemetry). */
  readonly onShutdown?: () => Promise<void>;
  /** The service's own environment: its bus credential, authorship, seal keys, enrollment (default `process.env`; apps/serve gives each service its own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** A running policy service: the HTTP app (health) with the JetStream listener attached. */
export interface PolicyApp {
  readonly app: INestApplication;
  readonly server: JetStreamServer;
  readonly readiness: ReadinessRegistry;
  /** The profiles evaluation uses now (kept current from the bucket). */
  readonly profiles: ProfileCatalog;
  /** Base URL of the HTTP server (`/healthz`, `/readyz`). */
  readonly url: string;
  /** Graceful: stop pulling, finish and ack in-flight events, close HTTP, drain NATS. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the policy service in-process: connects to NATS, opens the event log
 * and ensures the bus streams (commands, ingress, dead letters) under the
 * configured names and subject root; opens the profile store (the bucket
 * `WRIT_POLICY_BUCKET`, the built-ins the log has never seen recorded,
 * every profile converged to the log's latest, then the bucket watched and
 * its profiles loaded); binds the durable `policy` consumer of
 * `<root>.cmd.policy.evaluate` and the responders of
 * `<root>.qry.policy.apply-profile` and `<root>.qry.policy.evaluate`; follows
 * the participant streams (manifest scopes of spawned seeds); listens
 * on `WRIT_HTTP_PORT` (0 picks a free port). `/readyz`: NATS connected,
 * streams ensured, profiles loaded and followed, the bus connected and its
 * consumer bound.
 */
export async function createPolicyApp(config: PolicyConfig, options: PolicyAppOptions = {}): Promise<PolicyApp> {
  const env = config.env;
  const logger = options.logger ?? createLogger(SERVICE_NAME);
  const runtime = await ServiceRuntime.start({
    serviceName: SERVICE_NAME,
    natsUrl: env.WRIT_NATS_URL,
    subjectRoot: env.WRIT_SUBJECT_ROOT,
    streams: serviceStreams(env),
    logger,
    onClose: options.onShutdown,
    env: options.env,
  });
  let profiles: PolicyProfileStore | undefined;
  let participants: LogParticipantScopes | undefined;
  try {
    // Every event policy appends is sealed by its key (docs/security.md, "Authorship").
    await runtime.useSealKey({ principalId: env.WRIT_POLICY_PRINCIPAL_ID, displayName: 'Writ policy' });
    profiles = await openProfileStore(config, runtime, logger, options.clock ?? (() => new Date()));
    participants = await LogParticipantScopes.start(runtime.nc, runtime.store, { stream: runtime.store.config.stream, subjectPrefix: runtime.store.config.subjectPrefix, logger });
    const { catalog, watch } = profiles;
    runtime.readiness
      .add('policy_profiles', () => ({ ok: watch.loaded && watch.healthy, value: catalog.size }))
      // A detail, never a failure: a record written around the apply request must not take policy out of rotation.
      .add('policy_records_refused', () => ({ ok: true, value: catalog.refusals() }))
      .add('bus', runtime.bus.statusCheck())
      .add('consumers_bound', runtime.bus.durablesCheck(1));
    const service = await startServiceApp({
      serviceName: SERVICE_NAME,
      runtime,
      module: PolicyModule.register({ config, runtime, logger, clock: options.clock, profiles, participants }),
      http: serviceHttp(env),
      logger,
      nestLogger: options.nestLogger,
    });
    return { ...service, readiness: runtime.readiness, profiles: catalog };
  } catch (error) {
    await profiles?.watch.stop().catch(() => undefined);
    await participants?.stop().catch(() => undefined);
    await runtime.close();
    throw error;
  }
}

/**
 * The profile store: the bucket (created on first start), the log's profile
 * events as the truth (built-ins seeded, the bucket reconciled), and the
 * watch that loads every profile and follows each change (hot reload).
 * Resolves once the initial load is done.
 */
async function openProfileStore(config: PolicyConfig, runtime: ServiceRuntime, logger: Logger, clock: Clock): Promise<PolicyProfileStore> {
  const env = config.env;
  const principals = await runtime.startPrincipalRegistry();
  const bucket = await KvProfileBucket.open(runtime.nc, {
    bucket: env.WRIT_POLICY_BUCKET,
    history: env.WRIT_POLICY_BUCKET_HISTORY,
    replicas: env.WRIT_STREAM_REPLICAS,
    maxBytes: env.WRIT_POLICY_BUCKET_MAX_BYTES,
  });
  const log = new EventStoreProfileLog(runtime.store, runtime.jsm);
  const sync = new ProfileSync({ log, bucket, clock, principalId: env.WRIT_POLICY_PRINCIPAL_ID, logger });
  const seeded = await sync.seedBuiltins();
  if (seeded.length > 0) logger.info({ profiles: seeded }, 'built-in policy profiles recorded in the log');
  await sync.reconcile();
  const authority = new ProfileAuthority({ principals, keys: new LogPrincipalKeyHistory(runtime.store), skewSeconds: env.WRIT_POLICY_APPLY_FRESHNESS_SECONDS });
  // The built-ins shipped in this code are in force from the start; a bucket record replaces one only if trusted.
  const catalog = new ProfileCatalog({ trust: authority, builtins: builtinRecords(env.WRIT_POLICY_PRINCIPAL_ID) });
  const watch = await bucket.watch(catalog, logger);
  await watch.ready;
  logger.info({ bucket: env.WRIT_POLICY_BUCKET, profiles: catalog.versions(), refused: catalog.refusals() }, 'policy profiles loaded');
  return { catalog, log, sync, watch, principals, authority };
}
