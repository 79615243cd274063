import {
  artifactVariables,
  busConsumerSettings,
  busConsumerVariables,
  envInt,
  loadConfig,
  renamedVariable,
  serviceEnvironment,
  serviceHttp,
  serviceStreams,
  serviceSubjects,
  SubjectToken,
  type ServiceHttp,
  type ServiceStreams,
} from '@writ/runtime';
import { z } from 'zod';

/** `writ.cmd.policy.evaluate` → `<root>.cmd.policy.evaluate` (`@writ/runtime`'s `rooted`, under the name this service has exported). */
export { rooted as underRoot } from '@writ/runtime';

/** The bus service name: names the durable consumer, the dead-letter subjects and the NATS connection. */
export const SERVICE_NAME = 'projection';

const PgSchema = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lowercase Postgres identifier (a-z, 0-9, "_", at most 63 characters)');
const positiveInt = (fallback: number) => envInt(1).default(fallback);

/**
 * The environment the projection service reads, with every default written
 * down (docs: services/projection/README.md). Keys are the variable names: the
 * variables every service reads (`@writ/runtime`'s `serviceEnvironment`, HTTP
 * port 8080), the tuning of the projector's durable (`busConsumerVariables`)
 * and its own.
 */
export const ProjectionEnv = serviceEnvironment({ httpPort: 8080 }).extend({
  /** First token of every subject (exactly one token): `<root>.evt.>`, `<root>.cmd.…`, `<root>.proj.…`, `<root>.dlq.>`. */
  WRIT_SUBJECT_ROOT: SubjectToken.default('writ'),
  ...busConsumerVariables,
  /** 100 by default, not 10: a dead letter here only delays the view (the gap is refilled from the log), so an event is given longer to get through an outage. */
  WRIT_BUS_MAX_DELIVER: busConsumerVariables.WRIT_BUS_MAX_DELIVER.unwrap().default(100),
  /** Former name of WRIT_BUS_MAX_DELIVER in the projection: refused rather than read, so its durable is never tuned half under each name. */
  WRIT_PROJECTOR_MAX_DELIVER: renamedVariable('WRIT_PROJECTOR_MAX_DELIVER', 'WRIT_BUS_MAX_DELIVER', 'the name every service reads'),
  /** Former name of WRIT_BUS_BACKOFF_INITIAL_MS in the projection: refused rather than read, so its durable is never tuned half under each name. */
  WRIT_PROJECTOR_BACKOFF_MS: renamedVariable('WRIT_PROJECTOR_BACKOFF_MS', 'WRIT_BUS_BACKOFF_INITIAL_MS', 'the name every service reads'),
  /** Host, port, database and role; no password (a URL with one is refused, without echoing it): that is WRIT_PG_PASSWORD_FILE's. */
  WRIT_PG_URL: z
    .string()
    .min(1)
    .default('postgres://postgres@127.0.0.1:5432/writ')
    .refine((url) => !/^[a-z]+:\/\/[^/@]*:[^/@]*@/i.test(url), 'must not carry a password: put it in the file WRIT_PG_PASSWORD_FILE names'),
  /** The role's password, in a 0600 file (`writ init` writes `<WRIT_HOME>/pg/projection.password`); read on each new connection. */
  WRIT_PG_PASSWORD_FILE: z.string().min(1).optional(),
  /** The Postgres schema of the read models, created if missing; rebuilds make sibling `<schema>_rebuild_*` schemas. */
  WRIT_PG_SCHEMA: PgSchema.default('writ'),
  /** Connections this instance's pool opens at most. */
  WRIT_PG_POOL_SIZE: positiveInt(10),
  /** How long a forwarded request (POST /v1/actions, approval resolution) waits for ingress or approval. */
  WRIT_UPSTREAM_TIMEOUT_MS: positiveInt(5_000),
  /** How long a rebuild's swap waits for a lock (the projector's transaction, a reader of a swapped table) before it gives up, swapping nothing. */
  WRIT_REBUILD_SWAP_LOCK_TIMEOUT_MS: positiveInt(30_000),
  /** The file naming the first operator (`writ init`): it reads the API with its anchor key even before the log holds it. */
  WRIT_TRUST_ANCHOR: z.string().min(1).optional(),
  /** `GET /v1/changes/stream`: a heartbeat event this often while nothing changes (keeps proxies from closing an idle stream). */
  WRIT_SSE_HEARTBEAT_MS: positiveInt(15_000),
  /** A stream whose socket does not take what was written within this long is a slow reader: it is sent `closing` and dropped (it resumes by Last-Event-ID). */
  WRIT_SSE_DRAIN_TIMEOUT_MS: positiveInt(10_000),
  /** How often open streams look at the checkpoint for changes another instance committed (this instance's own commits wake them at once). */
  WRIT_SSE_POLL_MS: positiveInt(1_000),
  /** At most this many open streams per instance; more are refused 503 PROJECTION_STREAMS_EXHAUSTED (each reads Postgres). */
  WRIT_SSE_MAX_STREAMS: positiveInt(200),
  /** Context packs are read from it (`GET /v1/attempts/<id>/context`); the projection never creates it, so it reads no byte bound. */
  WRIT_ARTIFACTS_BUCKET: artifactVariables.WRIT_ARTIFACTS_BUCKET,
  /** The supervision console at `/console/` (apps/console): `off` serves nothing there. */
  WRIT_CONSOLE: z.enum(['on', 'off']).default('on'),
  /** Where the built console is; default the `dist/public` of the installed `@writ/console` package. */
  WRIT_CONSOLE_DIR: z.string().min(1).optional(),
});
export type ProjectionEnv = z.input<typeof ProjectionEnv>;

export interface ProjectionConfig {
  readonly nats: { readonly url: string };
  readonly http: ServiceHttp;
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
    /** `<root>.qry.approval.revoke-grant` (request/reply, core NATS). */
    readonly revokeGrant: string;
    /** `<root>.qry.orchestrator.claim-done|claim-blocked|claim-correction` (request/reply, core NATS). */
    readonly claims: { readonly done: string; readonly blocked: string; readonly correction: string };
    /** `<root>.qry.orchestrator.revise-working-state|change-belief` (request/reply, core NATS). */
    readonly knowledge: { readonly working_state: string; readonly belief: string };
    /** `<root>.qry.ingress.submit-message` (POST /v1/messages). */
    readonly submitMessage: string;
    /** `<root>.qry.projection.rebuild` and `.rebuild-status` (request/reply, core NATS): served here. */
    readonly rebuild: string;
    readonly rebuildStatus: string;
    /** `<root>.proj` (+ `.<view>.<id>`). */
    readonly projections: string;
    /** `<root>.dlq` (+ `.<service>.<pattern token>`). */
    readonly deadLetters: string;
  };
  /** The log and the bus streams (ensured at start: the consumer's dead letters need WRIT_DLQ). */
  readonly streams: ServiceStreams;
  /** The tuning of the projector's durable (`WRIT_BUS_*`). */
  readonly projector: ReturnType<typeof busConsumerSettings>;
  readonly pg: { readonly url: string; readonly passwordFile?: string; readonly schema: string; readonly poolSize: number };
  readonly upstreamTimeoutMs: number;
  /** The artifact bucket context packs are read from. */
  readonly artifactsBucket: string;
  readonly rebuild: { readonly swapLockTimeoutMs: number };
  /** The changes stream (`GET /v1/changes/stream`, Server-Sent Events). */
  readonly sse: { readonly heartbeatMs: number; readonly drainTimeoutMs: number; readonly pollMs: number; readonly maxStreams: number };
  /** `WRIT_TRUST_ANCHOR`: read at start; its operator's bearer tokens verify with the anchor's keys. */
  readonly trustAnchorFile?: string | undefined;
  /** `WRIT_CONSOLE`, `WRIT_CONSOLE_DIR`: the console's static files at `/console/`. */
  readonly console: { readonly enabled: boolean; readonly dir: string | undefined };
}

export function toProjectionConfig(env: z.output<typeof ProjectionEnv>): ProjectionConfig {
  const subjects = serviceSubjects(env);
  return {
    nats: { url: env.WRIT_NATS_URL },
    http: serviceHttp(env),
    subjects: {
      root: subjects.root,
      eventsPrefix: subjects.events,
      projectorPattern: subjects.allEvents,
      submitAction: subjects.commands.ingressSubmitAction,
      resolveApproval: subjects.commands.approvalResolve,
      revokeGrant: subjects.commands.approvalRevokeGrant,
      claims: { done: subjects.commands.orchestratorClaimDone, blocked: subjects.commands.orchestratorClaimBlocked, correction: subjects.commands.orchestratorClaimCorrection },
      knowledge: { working_state: subjects.commands.orchestratorReviseWorkingState, belief: subjects.commands.orchestratorChangeBelief },
      submitMessage: subjects.commands.ingressSubmitMessage,
      rebuild: subjects.commands.projectionRebuild,
      rebuildStatus: subjects.commands.projectionRebuildStatus,
      projections: subjects.projections,
      deadLetters: subjects.deadLetters,
    },
    streams: serviceStreams(env),
    projector: busConsumerSettings(env),
    pg: {
      url: env.WRIT_PG_URL,
      ...(env.WRIT_PG_PASSWORD_FILE === undefined ? {} : { passwordFile: env.WRIT_PG_PASSWORD_FILE }),
      schema: env.WRIT_PG_SCHEMA,
      poolSize: env.WRIT_PG_POOL_SIZE,
    },
    upstreamTimeoutMs: env.WRIT_UPSTREAM_TIMEOUT_MS,
    artifactsBucket: env.WRIT_ARTIFACTS_BUCKET,
    rebuild: { swapLockTimeoutMs: env.WRIT_REBUILD_SWAP_LOCK_TIMEOUT_MS },
    sse: { heartbeatMs: env.WRIT_SSE_HEARTBEAT_MS, drainTimeoutMs: env.WRIT_SSE_DRAIN_TIMEOUT_MS, pollMs: env.WRIT_SSE_POLL_MS, maxStreams: env.WRIT_SSE_MAX_STREAMS },
    trustAnchorFile: env.WRIT_TRUST_ANCHOR,
    console: { enabled: env.WRIT_CONSOLE === 'on', dir: env.WRIT_CONSOLE_DIR },
  };
}

/** Reads and validates the environment; fails fast (`RUNTIME_CONFIG_INVALID`) listing every bad variable. */
export function loadProjectionConfig(env: Record<string, string | undefined> = process.env): ProjectionConfig {
  return toProjectionConfig(loadConfig(SERVICE_NAME, ProjectionEnv, env));
}
