import { COMMANDS_STREAM, DLQ_STREAM, EVENTS_STREAM, INGRESS_STREAM } from '@writ/contracts';
import { z } from 'zod';
import { writSubjects, type WritSubjects } from './subject-root.js';

const GiB = 1024 ** 3;

/** Dot-separated subject tokens, no wildcards: `writ`, `t_1a2b3c`, `staging.writ`. */
export const SubjectRoot = z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be dot-separated subject tokens without wildcards');
/** Exactly one subject token: `writ`, `t_1a2b3c`. */
export const SubjectToken = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be one NATS subject token (A-Z, a-z, 0-9, "_", "-")');
export const StreamName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"');
/** An environment value read as a whole number within bounds (values arrive as strings). */
export const envInt = (min: number, max: number = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);

export interface ServiceEnvironmentOptions {
  /** `WRIT_HTTP_PORT`'s default (projection 8080, ingress 8081, orchestrator 8082, policy 8083, approval 8084, executor 8085, receipt 8086). */
  readonly httpPort: number;
}

function commonShape(httpPort: number) {
  return {
    /** NATS server(s), comma-separated. */
    WRIT_NATS_URL: z.string().min(1).default('nats://127.0.0.1:4223'),
    /** Loopback unless configured wider (a container sets 0.0.0.0; docker-compose.yml does). */
    WRIT_HTTP_HOST: z.string().min(1).default('127.0.0.1'),
    /** Port of `/healthz`, `/readyz` and `/metrics` (and of the projection's API); 0 picks a free port (tests). */
    WRIT_HTTP_PORT: envInt(0, 65_535).default(httpPort),
    /** Replaces the leading `writ` of every subject (`<root>.cmd.policy.evaluate`, `<root>.evt.task.<id>`). */
    WRIT_SUBJECT_ROOT: SubjectRoot.default('writ'),
    /** JetStream stream of the event log: every task's events. */
    WRIT_EVENTS_STREAM: StreamName.default(EVENTS_STREAM),
    /** Subject prefix of the event log; default `<root>.evt`. */
    WRIT_EVENTS_PREFIX: SubjectRoot.optional(),
    /** Bus stream capturing `<root>.ingress.>`: agents' signed requests, recorded before ingress handles them. */
    WRIT_INGRESS_STREAM: StreamName.default(INGRESS_STREAM),
    /** Bus stream capturing `<root>.cmd.>`: the durable commands one service sends another (and their timers). */
    WRIT_COMMANDS_STREAM: StreamName.default(COMMANDS_STREAM),
    /** Bus stream capturing `<root>.dlq.>`: what a consumer gave up on, kept for inspection. */
    WRIT_DLQ_STREAM: StreamName.default(DLQ_STREAM),
    /** Byte bound of the event log (the server reserves it; docs/operations.md). */
    WRIT_EVENTS_MAX_BYTES: envInt(1).default(10 * GiB),
    /** Verified events each process keeps in memory so that re-reading a task fetches only what was appended since (0: off). */
    WRIT_EVENTS_READ_CACHE: envInt(0).default(50_000),
    /** JetStream replicas of the event log and the bus streams: 1 on one server, 3 in a cluster. */
    WRIT_STREAM_REPLICAS: envInt(1, 5).default(1),
    /** A durable consumer with work waiting whose ack floor has not moved for this long is stalled: `/readyz` fails (docs/operations.md). */
    WRIT_CONSUMER_STALL_SECONDS: envInt(1).default(120),
    /** How often the service samples its consumers for stalls. */
    WRIT_CONSUMER_STALL_CHECK_MS: envInt(100).default(5_000),
    /** Byte bound of each bus stream (ingress, commands, dead letters). */
    WRIT_BUS_MAX_BYTES: envInt(1).default(GiB),
    /** Former name of WRIT_BUS_MAX_BYTES (executor, ingress, projection): refused rather than read, so the bus streams are never bounded half one way. */
    WRIT_BUS_STREAMS_MAX_BYTES: renamedVariable('WRIT_BUS_STREAMS_MAX_BYTES', 'WRIT_BUS_MAX_BYTES', 'the name every service reads'),
  };
}

/**
 * A variable's former name, declared so that setting it fails the start (`loadConfig` names it with the
 * message) instead of being ignored: a deployment is never configured half under each name.
 */
export function renamedVariable(former: string, current: string, why: string) {
  return z
    .string()
    .optional()
    .refine((value) => value === undefined, `was renamed ${current} (${why}): set that instead and unset ${former}`);
}

/**
 * The zod schema of the variables every Writ service reads (keys are the
 * variable names; `loadConfig` lists every offending one at boot). A service's
 * `config.ts` extends it with its own variables:
 *
 * ```ts
 * export const PolicyEnv = serviceEnvironment({ httpPort: 8083 }).extend({ WRIT_POLICY_PRINCIPAL_ID: Id.default('writ-policy') });
 * ```
 *
 * A service never declares a copy of one of these: where it needs a stricter bound
 * it narrows the shared declaration (`atLeast`), with its reason in the JSDoc, so
 * each variable keeps one default and one description in every service.
 * Unknown variables are ignored (one environment may serve several services).
 */
export function serviceEnvironment(options: ServiceEnvironmentOptions) {
  return z.object(commonShape(options.httpPort));
}

/** What `serviceEnvironment` yields. */
export type ServiceEnvironment = z.output<ReturnType<typeof serviceEnvironment>>;

/**
 * A shared numeric variable narrowed for one service to at least `min`, its shared default
 * kept (the service's JSDoc above the variable says why it needs the stricter bound):
 * `WRIT_EVENTS_MAX_BYTES: atLeast(common.shape.WRIT_EVENTS_MAX_BYTES, MiB)`.
 */
export function atLeast<T extends z.ZodCoercedNumber>(variable: z.ZodDefault<T>, min: number): z.ZodDefault<T> {
  return variable.unwrap().min(min).default(variable.def.defaultValue);
}

/**
 * The deployment's shared, content-addressed artifact bucket (spread into `.extend(...)` by
 * each service that stores or reads artifacts: approval packets, workspace snapshots and
 * checkpoints, Last Will artifacts, context packs, message texts). A service that only reads
 * takes the bucket by name (`const { WRIT_ARTIFACTS_BUCKET } = artifactVariables`).
 */
export const artifactVariables = {
  /** NATS Object Store bucket of the deployment's content-addressed artifacts (objects `sha256-<hex>`; the stream is `OBJ_<bucket>`). */
  WRIT_ARTIFACTS_BUCKET: StreamName.default('WRIT_ARTIFACTS'),
  /** Byte bound of the artifact bucket, set by whichever service creates it first (the server reserves it); an existing bucket is used as it is. */
  WRIT_ARTIFACTS_MAX_BYTES: envInt(1).default(10 * GiB),
};

/**
 * The consumer tuning variables of a service whose handlers share them
 * (spread into `.extend(...)`): handled deliveries before a dead letter, first
 * backoff delay (doubling), how long one pull waits (bounds an idle graceful
 * stop), ack wait (extended while a handler runs). A service that reads only
 * some takes them by name (`const { WRIT_BUS_MAX_DELIVER } = busConsumerVariables`,
 * then `{ WRIT_BUS_MAX_DELIVER }` in its schema); one whose consumer needs another
 * default keeps the bound (`busConsumerVariables.WRIT_BUS_MAX_DELIVER.unwrap().default(100)`)
 * and says why in its JSDoc.
 */
export const busConsumerVariables = {
  /** Handled deliveries of one message before it is dead-lettered. */
  WRIT_BUS_MAX_DELIVER: envInt(1).default(10),
  /** Delay before the first retry of a failed message; each further retry doubles it (at most 60 s). */
  WRIT_BUS_BACKOFF_INITIAL_MS: envInt(0).default(1_000),
  /** How long one pull waits on the server for messages; bounds how long a graceful stop waits when idle. */
  WRIT_BUS_PULL_EXPIRES_MS: envInt(1_000).default(5_000),
  /** How long the server waits for an ack before it redelivers; extended while a handler is still running. */
  WRIT_BUS_ACK_WAIT_MS: envInt(1_000).default(30_000),
};

export interface BusConsumerEnvironment {
  readonly WRIT_BUS_MAX_DELIVER: number;
  readonly WRIT_BUS_BACKOFF_INITIAL_MS: number;
  readonly WRIT_BUS_PULL_EXPIRES_MS: number;
  readonly WRIT_BUS_ACK_WAIT_MS: number;
}

/** The `busOptions(...)` fields the consumer tuning variables set. */
export function busConsumerSettings(env: BusConsumerEnvironment) {
  return {
    maxDeliver: env.WRIT_BUS_MAX_DELIVER,
    ackWaitMs: env.WRIT_BUS_ACK_WAIT_MS,
    backoff: { initialMs: env.WRIT_BUS_BACKOFF_INITIAL_MS },
    pullExpiresMs: env.WRIT_BUS_PULL_EXPIRES_MS,
  };
}

/** Where the log and the bus streams live, and their limits (what `ServiceRuntime.start` opens). */
export interface ServiceStreams {
  readonly events: string;
  /** Subject prefix of the event log (`<root>.evt`). */
  readonly eventsPrefix: string;
  readonly ingress: string;
  readonly commands: string;
  readonly dlq: string;
  readonly replicas: number;
  readonly eventsMaxBytes: number;
  /** Events kept by the event store's read cache (`WRIT_EVENTS_READ_CACHE`). */
  readonly eventsReadCache: number;
  readonly busMaxBytes: number;
  /** A consumer with work and no progress for this long is stalled (`WRIT_CONSUMER_STALL_SECONDS`; default 120 s). */
  readonly consumerStallMs?: number;
  /** How often consumers are sampled for stalls (`WRIT_CONSUMER_STALL_CHECK_MS`; default 5 s). */
  readonly consumerStallCheckMs?: number;
}

export function serviceStreams(env: ServiceEnvironment): ServiceStreams {
  return Object.freeze({
    events: env.WRIT_EVENTS_STREAM,
    eventsPrefix: env.WRIT_EVENTS_PREFIX ?? `${env.WRIT_SUBJECT_ROOT}.evt`,
    ingress: env.WRIT_INGRESS_STREAM,
    commands: env.WRIT_COMMANDS_STREAM,
    dlq: env.WRIT_DLQ_STREAM,
    replicas: env.WRIT_STREAM_REPLICAS,
    eventsMaxBytes: env.WRIT_EVENTS_MAX_BYTES,
    eventsReadCache: env.WRIT_EVENTS_READ_CACHE,
    busMaxBytes: env.WRIT_BUS_MAX_BYTES,
    consumerStallMs: env.WRIT_CONSUMER_STALL_SECONDS * 1000,
    consumerStallCheckMs: env.WRIT_CONSUMER_STALL_CHECK_MS,
  });
}

/** The governed path's subjects under the configured root (and events prefix). */
export function serviceSubjects(env: ServiceEnvironment): WritSubjects {
  return writSubjects(env.WRIT_SUBJECT_ROOT, env.WRIT_EVENTS_PREFIX);
}

export interface ServiceHttp {
  readonly host: string;
  readonly port: number;
}

export function serviceHttp(env: ServiceEnvironment): ServiceHttp {
  return Object.freeze({ host: env.WRIT_HTTP_HOST, port: env.WRIT_HTTP_PORT });
}
