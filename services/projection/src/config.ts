import { COMMANDS, COMMANDS_STREAM, DLQ_STREAM, EVENTS_STREAM, INGRESS_STREAM } from '@writ/contracts';
import { loadConfig } from '@writ/runtime';
import { z } from 'zod';

/** The bus service name: names the durable consumer, the dead-letter subjects and the NATS connection. */
export const SERVICE_NAME = 'projection';

const SubjectToken = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be one NATS subject token (A-Z, a-z, 0-9, "_", "-")');
const SubjectPrefix = z
  .string()
  .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be dot-separated subject tokens without wildcards');
const StreamName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"');
const PgSchema = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lowercase Postgres identifier (a-z, 0-9, "_", at most 63 characters)');
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/**
 * The environment the projection service reads, with every default written
 * down (docs: services/projection/README.md). Keys are the variable names.
 */
export const ProjectionEnv = z.object({
  /** NATS server(s), comma-separated. */
  WRIT_NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  /** HTTP API port (0: any free port, for tests). */
  WRIT_HTTP_PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  WRIT_HTTP_HOST: z.string().min(1).default('0.0.0.0'),
  /** First token of every subject: `<root>.evt.>`, `<root>.cmd.…`, `<root>.proj.…`, `<root>.dlq.>`. */
  WRIT_SUBJECT_ROOT: SubjectToken.default('writ'),
  WRIT_EVENTS_STREAM: StreamName.default(EVENTS_STREAM),
  /** Subject prefix of the event log; default `<root>.evt`. */
  WRIT_EVENTS_PREFIX: SubjectPrefix.optional(),
  /** Byte bound of the event log when this service creates it; default the event store's (10 GiB). */
  WRIT_EVENTS_MAX_BYTES: z.coerce.number().int().positive().optional(),
  WRIT_INGRESS_STREAM: StreamName.default(INGRESS_STREAM),
  WRIT_COMMANDS_STREAM: StreamName.default(COMMANDS_STREAM),
  WRIT_DLQ_STREAM: StreamName.default(DLQ_STREAM),
  /** Byte bound of each bus stream when this service creates it; default the runtime's (1 GiB). */
  WRIT_BUS_STREAMS_MAX_BYTES: z.coerce.number().int().positive().optional(),
  /** JetStream replicas of the streams this service creates (3 in a cluster). */
  WRIT_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** Handled deliveries of one event before it is dead-lettered; high, because a dead letter here only delays the view (the gap is refilled from the log). */
  WRIT_PROJECTOR_MAX_DELIVER: positiveInt(100),
  /** First retry delay of a failed event (doubling, capped at 60 s). */
  WRIT_PROJECTOR_BACKOFF_MS: positiveInt(1_000),
  /** How long one pull from the durable stays open; bounds an idle graceful stop. */
  WRIT_BUS_PULL_EXPIRES_MS: z.coerce.number().int().min(1_000).default(5_000),
  WRIT_PG_URL: z.string().min(1).default('postgres://postgres@127.0.0.1:5432/writ'),
  WRIT_PG_SCHEMA: PgSchema.default('writ'),
  WRIT_PG_POOL_SIZE: positiveInt(10),
  /** How long a forwarded request (POST /v1/actions, approval resolution) waits for ingress or approval. */
  WRIT_UPSTREAM_TIMEOUT_MS: positiveInt(5_000),
});
export type ProjectionEnv = z.input<typeof ProjectionEnv>;

export interface ProjectionConfig {
  readonly nats: { readonly url: string };
  readonly http: { readonly port: number; readonly host: string };
  readonly subjects: {
    readonly root: string;
    /** `<root>.evt` unless overridden: the event log's subject prefix. */
    readonly eventsPrefix: string;
    /** What the projector consumes: `<eventsPrefix>.>`. */
    readonly projectorPattern: string;
    /** `<root>.qry.ingress.submit-action` (request/reply, core NATS). */
    readonly submitAction: string;
    /** `<root>.qry.approval.resolve` (request/reply, core NATS). */
    readonly resolveApproval: string;
    /** `<root>.proj` (+ `.<view>.<id>`). */
    readonly projections: string;
    /** `<root>.dlq` (+ `.<service>.<pattern token>`). */
    readonly deadLetters: string;
  };
  readonly streams: {
    readonly events: string;
    readonly eventsMaxBytes: number | undefined;
    readonly ingress: string;
    readonly commands: string;
    readonly dlq: string;
    readonly busMaxBytes: number | undefined;
    readonly replicas: number;
  };
  readonly projector: { readonly maxDeliver: number; readonly backoffMs: number; readonly pullExpiresMs: number };
  readonly pg: { readonly url: string; readonly schema: string; readonly poolSize: number };
  readonly upstreamTimeoutMs: number;
}

/** `writ.cmd.policy.evaluate` → `<root>.cmd.policy.evaluate`: every subject derives from the configured root. */
export function underRoot(subject: string, root: string): string {
  return subject.startsWith('writ.') ? `${root}.${subject.slice('writ.'.length)}` : subject;
}

export function toProjectionConfig(env: z.output<typeof ProjectionEnv>): ProjectionConfig {
  const root = env.WRIT_SUBJECT_ROOT;
  const eventsPrefix = env.WRIT_EVENTS_PREFIX ?? `${root}.evt`;
  return {
    nats: { url: env.WRIT_NATS_URL },
    http: { port: env.WRIT_HTTP_PORT, host: env.WRIT_HTTP_HOST },
    subjects: {
      root,
      eventsPrefix,
      projectorPattern: `${eventsPrefix}.>`,
      submitAction: underRoot(COMMANDS.ingressSubmitAction, root),
      resolveApproval: underRoot(COMMANDS.approvalResolve, root),
      projections: `${root}.proj`,
      deadLetters: `${root}.dlq`,
    },
    streams: {
      events: env.WRIT_EVENTS_STREAM,
      eventsMaxBytes: env.WRIT_EVENTS_MAX_BYTES,
      ingress: env.WRIT_INGRESS_STREAM,
      commands: env.WRIT_COMMANDS_STREAM,
      dlq: env.WRIT_DLQ_STREAM,
      busMaxBytes: env.WRIT_BUS_STREAMS_MAX_BYTES,
      replicas: env.WRIT_STREAM_REPLICAS,
    },
    projector: {
      maxDeliver: env.WRIT_PROJECTOR_MAX_DELIVER,
      backoffMs: env.WRIT_PROJECTOR_BACKOFF_MS,
      pullExpiresMs: env.WRIT_BUS_PULL_EXPIRES_MS,
    },
    pg: { url: env.WRIT_PG_URL, schema: env.WRIT_PG_SCHEMA, poolSize: env.WRIT_PG_POOL_SIZE },
    upstreamTimeoutMs: env.WRIT_UPSTREAM_TIMEOUT_MS,
  };
}

/** Reads and validates the environment; fails fast (`RUNTIME_CONFIG_INVALID`) listing every bad variable. */
export function loadProjectionConfig(env: Record<string, string | undefined> = process.env): ProjectionConfig {
  return toProjectionConfig(loadConfig(SERVICE_NAME, ProjectionEnv, env));
}
