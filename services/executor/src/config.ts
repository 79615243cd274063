import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { COMMANDS, executorHostSubject, Id } from '@writ/contracts';
import { CELL_POLICY_DEFAULTS, CellPolicy, type CellPolicyInput } from '@writ/kernel';
import { StreamName, artifactVariables, busConsumerVariables, envInt as int, loadConfig, renamedVariable, serviceEnvironment } from '@writ/runtime';
import { z } from 'zod';
import { ExecutorError } from './application/executor-errors.js';

const MiB = 1024 ** 2;
const DAY = 24 * 60 * 60 * 1000;

/** 192 KiB: `WRIT_EXECUTOR_PREIMAGE_MAX_BYTES` unless set. */
export const PREIMAGE_MAX_BYTES_DEFAULT = 192 * 1024;

/** Largest `WRIT_EXECUTOR_EXTRA_CA_FILE`: the bundle travels in an exec argument (one argument holds at most 128 KiB on Linux). */
export const EXTRA_CA_MAX_BYTES = 64 * 1024;

/** The extra trust roots of https network actions, as read at start. */
export interface ExtraCaBundle {
  readonly file: string;
  /** Only the certificates, re-encoded: comments and anything else in the file never reach a cell. */
  readonly pem: string;
  readonly certificates: number;
}

/**
 * `WRIT_EXECUTOR_EXTRA_CA_FILE`, read once: a PEM file of one or more certificates, nothing but
 * certificates (a private key in a trust bundle is a mistake that must not travel to cells).
 * Throws with the reason, for the config's issue list.
 */
export function readExtraCaBundle(file: string): ExtraCaBundle {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new Error(`cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): give the path of a PEM bundle the executor may read`);
  }
  if (bytes.byteLength > EXTRA_CA_MAX_BYTES) throw new Error(`is ${bytes.byteLength} bytes; at most ${EXTRA_CA_MAX_BYTES} bytes of PEM certificates are handed to a cell`);
  const text = bytes.toString('utf8');
  const blocks = [...text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g)];
  const other = blocks.find((block) => block[1] !== 'CERTIFICATE');
  if (other !== undefined) throw new Error(`holds a ${other[1]} block: a trust bundle holds certificates only`);
  if (blocks.length === 0) throw new Error('holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  const certificates = blocks.map((block, index) => {
    try {
      return new X509Certificate(block[0]).toString().trim();
    } catch {
      throw new Error(`certificate ${index + 1} of ${blocks.length} is not a valid X.509 certificate`);
    }
  });
  return { file, pem: `${certificates.join('\n')}\n`, certificates: certificates.length };
}

/** A host id is a subject token (`<root>.cmd.executor.run.host.<host_id>`) and part of durable names. */
export const HostId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-" (a subject token)');

/**
 * The shared consumer tuning the executor's durables read. Not the ack wait (a RunAction's follows the action
 * timeout, `runAckWaitMs`) nor the first backoff (the bus's).
 */
const { WRIT_BUS_MAX_DELIVER, WRIT_BUS_PULL_EXPIRES_MS } = busConsumerVariables;

/** `executor-<hostname>`, made a valid Id (the hostname may hold dots). */
export function defaultExecutorId(host: string = hostname()): string {
  const token = host.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '');
  return `executor-${token || 'host'}`.slice(0, 128);
}

/**
 * The executor's environment, with every default documented here (README →
 * Configuration): the variables every service reads (`@writ/runtime`'s
 * `serviceEnvironment`, HTTP port 8085; `WRIT_STREAM_REPLICAS` also sizes the
 * artifact bucket), the consumer tuning its durables read and its own. Keys
 * are the variable names, so `loadConfig` lists the offending variables when
 * one is wrong and the service refuses to start.
 */
export const ExecutorEnv = serviceEnvironment({ httpPort: 8085 }).extend({
  /** The executor's former name of WRIT_STREAM_REPLICAS: refused rather than read, so a cluster is never configured half one way. */
  WRIT_REPLICAS: renamedVariable('WRIT_REPLICAS', 'WRIT_STREAM_REPLICAS', 'the name every service reads'),
  WRIT_BUS_MAX_DELIVER,
  WRIT_BUS_PULL_EXPIRES_MS,

  /** This process, as recorded in `execution.completed.executor_id`; default `executor-<hostname>`. */
  WRIT_EXECUTOR_ID: Id.default(() => defaultExecutorId()),
  /**
   * The host this executor's cells live on, as the cell events record their holder (README → Several
   * hosts). Executors sharing a Docker engine and a cells root are one host and must share it. Unset:
   * derived at start from the Docker engine's id and `WRIT_CELLS_ROOT` (`host-<16 hex>`).
   */
  WRIT_EXECUTOR_HOST_ID: HostId.optional(),
  /** How long an observation relayed to the host holding the cell may take; keep it below the approval's WRIT_APPROVAL_OBSERVE_TIMEOUT_MS. */
  WRIT_EXECUTOR_OBSERVE_RELAY_TIMEOUT_MS: int(100, 120_000).default(5_000),
  /** The executor service principal: `actor_id` of its events and `producer` of its artifacts (the name the orchestrator and every reader's authorship check read too). */
  WRIT_EXECUTOR_PRINCIPAL_ID: Id.default('writ-executor'),
  /** The executor's former name of WRIT_EXECUTOR_PRINCIPAL_ID: refused rather than read, so the executor never writes as a principal the other services do not expect. */
  WRIT_EXECUTOR_PRINCIPAL: renamedVariable('WRIT_EXECUTOR_PRINCIPAL', 'WRIT_EXECUTOR_PRINCIPAL_ID', 'the name the orchestrator and the authorship checks read'),
  /** The durable shared by every executor process (competing consumers). */
  WRIT_EXECUTOR_DURABLE: StreamName.default('executor'),
  /** RunAction commands handled at once by this process. */
  WRIT_EXECUTOR_CONCURRENCY: int(1, 64).default(2),

  /** Principal whose keys (from the log) must have signed the grant; also its required `iss`. */
  WRIT_GRANT_ISSUER: Id.default('writ-approval'),
  /**
   * The deployment's trust anchor (`<WRIT_HOME>/trust-anchor.json`, from `writ init`): a grant is
   * trusted only under an issuer key whose registration chains to it. Unset: every grant is refused.
   */
  WRIT_TRUST_ANCHOR: z.string().min(1).optional(),
  /** Required `aud` of a grant. */
  WRIT_GRANT_AUDIENCE: z.string().min(1).max(128).default('writ-executor'),

  /** Wall-clock limit of one action unless the grant sets its own (`constraints.timeout_ms`). */
  WRIT_ACTION_TIMEOUT_MS: int(1, 24 * 60 * 60 * 1000).default(60_000),
  /** Bytes kept of stdout and, separately, of stderr. */
  WRIT_OUTPUT_CAP_BYTES: int(0, 64 * MiB).default(MiB),
  /**
   * Slack past an action's own deadline (timeout + the cell's host grace) during which a
   * use claimed by another process may still complete; after it, the use's outcome is unknown.
   */
  WRIT_CLAIM_GRACE_MS: int(0).default(60_000),
  /** How often a delivery waiting on another process's claim re-reads the log. */
  WRIT_CLAIM_POLL_MS: int(10, 60_000).default(1_000),

  ...artifactVariables,
  /** Largest changed file whose content is kept as an artifact. */
  WRIT_ARTIFACT_FILE_MAX_BYTES: int(0, 64 * MiB).default(MiB),
  /** Most changed files kept as artifacts per execution (the diff lists them all). */
  WRIT_ARTIFACT_FILES_MAX: int(0, 200).default(64),
  /**
   * Largest file whose current content is kept (a `file.preimage` artifact) before a write_local,
   * delete_local or rollback changes it: what lets its receipt name a rollback. 0: none are kept.
   * At most WRIT_ARTIFACT_FILES_MAX pre-images per execution.
   */
  WRIT_EXECUTOR_PREIMAGE_MAX_BYTES: int(0, 64 * MiB).default(PREIMAGE_MAX_BYTES_DEFAULT),

  /** Image every cell container runs, built offline by scripts/build-cell-image.sh (no registry is reachable). */
  WRIT_CELL_IMAGE: z.string().min(1).default('writ/cell:latest'),
  /** Host directory holding each cell's `<task_id>/workspace` (and this executor's use journal); part of the derived host id. */
  WRIT_CELLS_ROOT: z.string().startsWith('/').default('/var/lib/writ/cells'),
  /** The Docker Engine socket the cells are created through. */
  WRIT_DOCKER_SOCKET: z.string().min(1).default('/var/run/docker.sock'),
  /**
   * PEM certificates trusted by https network actions besides the cell image's public bundle (an
   * internal CA). Read here, at start: unreadable, too large, not PEM, or holding anything but
   * certificates refuses the start. Unset: the public bundle only.
   */
  WRIT_EXECUTOR_EXTRA_CA_FILE: z
    .string()
    .startsWith('/')
    .optional()
    .transform((file, context) => {
      if (file === undefined) return undefined;
      try {
        return readExtraCaBundle(file);
      } catch (error) {
        context.addIssue({ code: 'custom', message: `${file} ${error instanceof Error ? error.message : String(error)}` });
        return z.NEVER;
      }
    }),
  /** One file per secret handle (mode 0600, owned by the executor); unset: no handle can be resolved (EXECUTOR_SECRET_UNAVAILABLE). */
  WRIT_SECRETS_DIR: z.string().startsWith('/').optional(),
  /** Warm pool: hardened cells started ahead of time for new tasks (0 disables it). */
  WRIT_CELL_POOL_SIZE: int(0, 32).default(2),
  /**
   * Disk quota of each cell workspace in bytes (a loop-mounted sparse ext4 image per cell; needs
   * root, mkfs.ext4 and mount). 0 or unset: no quota. At least 16 MiB when set.
   */
  WRIT_CELL_DISK_QUOTA_BYTES: int(0)
    .refine((value) => value === 0 || value >= 16 * MiB, 'must be 0 (no quota) or at least 16 MiB (16777216)')
    .default(0),
  /**
   * Actions without stdin or secret environment run through an in-cell supervisor (one long-lived
   * exec per cell and user, README → The in-cell supervisor) instead of a Docker exec each; `false`: every action is its own exec.
   */
  WRIT_CELL_SUPERVISOR: z.enum(['true', 'false']).default('true'),

  // Lazarus cells (README → Cells): the WRIT_CELL_*_MS below make the policy each new cell is created
  // with (recorded in its first event, so a change applies to new cells only).
  /** An invitation to a cell not accepted within this long is revoked. */
  WRIT_CELL_INVITATION_TTL_MS: int(1_000, DAY).default(CELL_POLICY_DEFAULTS.invitation_ttl_ms),
  /** Length of a cell's activation window, from its spawn or resurrection. */
  WRIT_CELL_ACTIVE_TTL_MS: int(1_000, DAY).default(CELL_POLICY_DEFAULTS.active_ttl_ms),
  /** How long a director may extend the activation window to by renewals, from activation (at most 24 h). */
  WRIT_CELL_ACTIVE_TTL_MAX_MS: int(1_000, DAY).default(CELL_POLICY_DEFAULTS.active_ttl_max_ms),
  /** A closed cell stays in its graveyard (resurrectable) this long, then a sweep scrubs it. */
  WRIT_CELL_CLOSED_GRACE_MS: int(1_000, 30 * DAY).default(CELL_POLICY_DEFAULTS.closed_grace_ms),
  /** How long an archived cell's checkpoints stay in the artifact bucket before a sweep purges them. */
  WRIT_CELL_ARCHIVE_RETENTION_MS: int(1_000, 3_650 * DAY).default(CELL_POLICY_DEFAULTS.archive_retention_ms),
  /** A running seat without a heartbeat for this long goes DOWNED. */
  WRIT_CELL_HEARTBEAT_TIMEOUT_MS: int(1_000, 60 * 60 * 1000).default(CELL_POLICY_DEFAULTS.heartbeat_timeout_ms),
  /** `true`: another principal's action in a DOWNED cell takes it over as a substitute (Lazarus 3.1: off unless enabled). */
  WRIT_CELL_ALLOW_SUBSTITUTE: z.enum(['true', 'false']).default('false'),
  /** How often this executor sweeps the cells: heartbeats of those it hosts, due transitions, scrubs. 0: no timer. Below half the heartbeat timeout. */
  WRIT_CELL_SWEEP_INTERVAL_MS: int(0, 60 * 60 * 1000).default(15_000),
  /** A hosting executor checkpoints an ACTIVE cell this long after its last checkpoint; 0: only the final checkpoint at close. */
  WRIT_CELL_CHECKPOINT_INTERVAL_MS: int(0).default(0),
  /** Largest checkpoint tarball (captured over the exec stream, at most 64 MiB); a larger one fails (EXECUTOR_CHECKPOINT_FAILED). */
  WRIT_CELL_CHECKPOINT_MAX_BYTES: int(1_024, 64 * MiB).default(64 * MiB),
  /** Wall clock of one checkpoint capture or restore inside the cell. */
  WRIT_CELL_CHECKPOINT_TIMEOUT_MS: int(1_000, DAY).default(120_000),

  /** State-witness observation (`<root>.qry.executor.observe`): entries one walk visits at most; past it a directory is `dir-partial:`. */
  WRIT_OBSERVE_MAX_ENTRIES: int(1, 1_000_000).default(10_000),
  /** Directory levels below a resource that a walk descends; deeper directories are fingerprinted by their metadata (`dir-partial:`). */
  WRIT_OBSERVE_MAX_DEPTH: int(0, 256).default(32),
  /** File bytes one walk hashes at most; a file past the budget is fingerprinted by its metadata (`stat:`). */
  WRIT_OBSERVE_MAX_BYTES: int(0).default(256 * MiB),
  /** Walks of the resources until two consecutive ones agree; none agreeing is EXECUTOR_OBSERVE_UNSTABLE. */
  WRIT_OBSERVE_MAX_PASSES: int(2, 16).default(4),
}).superRefine((env, report) => {
  const policy = CellPolicy.safeParse(cellPolicyInput(env));
  if (!policy.success) {
    for (const issue of policy.error.issues) report.addIssue({ code: 'custom', path: ['WRIT_CELL_ACTIVE_TTL_MS'], message: `the cell policy is invalid: ${issue.path.join('.')}: ${issue.message}` });
  }
  if (env.WRIT_CELL_SWEEP_INTERVAL_MS > 0 && env.WRIT_CELL_SWEEP_INTERVAL_MS * 2 > env.WRIT_CELL_HEARTBEAT_TIMEOUT_MS) {
    report.addIssue({ code: 'custom', path: ['WRIT_CELL_SWEEP_INTERVAL_MS'], message: 'must be at most half of WRIT_CELL_HEARTBEAT_TIMEOUT_MS, or the cells this executor hosts go DOWNED between its sweeps' });
  }
});
export type ExecutorEnv = z.output<typeof ExecutorEnv>;

type CellEnv = Pick<
  ExecutorEnv,
  | 'WRIT_CELL_INVITATION_TTL_MS'
  | 'WRIT_CELL_ACTIVE_TTL_MS'
  | 'WRIT_CELL_ACTIVE_TTL_MAX_MS'
  | 'WRIT_CELL_CLOSED_GRACE_MS'
  | 'WRIT_CELL_ARCHIVE_RETENTION_MS'
  | 'WRIT_CELL_HEARTBEAT_TIMEOUT_MS'
  | 'WRIT_CELL_ALLOW_SUBSTITUTE'
>;

/** The cell policy of the environment, as the kernel's `CellPolicy` reads it (guests stay off: every agent is an executor seat). */
function cellPolicyInput(env: CellEnv): CellPolicyInput {
  return {
    invitation_ttl_ms: env.WRIT_CELL_INVITATION_TTL_MS,
    active_ttl_ms: env.WRIT_CELL_ACTIVE_TTL_MS,
    active_ttl_max_ms: env.WRIT_CELL_ACTIVE_TTL_MAX_MS,
    closed_grace_ms: env.WRIT_CELL_CLOSED_GRACE_MS,
    archive_retention_ms: env.WRIT_CELL_ARCHIVE_RETENTION_MS,
    heartbeat_timeout_ms: env.WRIT_CELL_HEARTBEAT_TIMEOUT_MS,
    allow_guest: false,
    allow_substitute: env.WRIT_CELL_ALLOW_SUBSTITUTE === 'true',
  };
}

/** Subjects and stream names of one deployment (or one test), all derived from the root. */
export interface ExecutorSubjects {
  readonly root: string;
  readonly run: string;
  /** `<root>.cmd.executor.close-cell`. */
  readonly closeCell: string;
  /** Request/reply (core NATS, never captured by a stream): the read-only state-witness observation. */
  readonly observe: string;
  /** Request/reply: a director's resolution of an unknown outcome (`<root>.qry.executor.resolve-outcome`). */
  readonly resolveOutcome: string;
  /** Request/reply: a director's resurrection of a closed cell (`<root>.qry.executor.resurrect-cell`). */
  readonly resurrectCell: string;
  /** Request/reply: a director's renewal of a cell's active TTL (`<root>.qry.executor.renew-cell`); answered by any executor (README → Cells). */
  readonly renewCell: string;
  /** Core NATS, fire and forget: this executor's heartbeat (`<root>.hb.executor.<executor_id>`). */
  readonly heartbeatPrefix: string;
  readonly eventsPrefix: string;
  readonly ingress: string;
  readonly commands: string;
  readonly dlq: string;
  readonly runDeadLetter: string;
  readonly closeCellDeadLetter: string;
}

export interface ExecutorConfig {
  readonly natsUrl: string;
  readonly httpPort: number;
  readonly httpHost: string;
  readonly subjects: ExecutorSubjects;
  readonly streams: {
    readonly events: string;
    readonly ingress: string;
    readonly commands: string;
    readonly dlq: string;
    readonly eventsMaxBytes: number;
    readonly eventsReadCache: number;
    readonly busMaxBytes: number;
    readonly replicas: number;
  };
  readonly executorId: string;
  /**
   * `WRIT_EXECUTOR_HOST_ID`: the host holding this executor's cells. Absent (unset, or a config built
   * by hand): `createExecutorApp` derives it from the Docker engine id and the cells root.
   */
  readonly hostId?: string;
  /** Routing of a task's work to the host that holds its cell. Optional so configs built by hand stay valid. */
  readonly routing?: RoutingConfig;
  readonly principalId: string;
  readonly durable: string;
  readonly concurrency: number;
  /** `trustAnchorFile` (WRIT_TRUST_ANCHOR): the issuer's keys are trusted only when their registration chains to it; none: no grant is. */
  readonly grant: { readonly issuer: string; readonly audience: string; readonly trustAnchorFile?: string };
  readonly actionTimeoutMs: number;
  readonly outputCapBytes: number;
  readonly claimGraceMs: number;
  readonly claimPollMs: number;
  readonly artifacts: {
    readonly bucket: string;
    readonly maxBytes: number;
    readonly fileMaxBytes: number;
    readonly filesMax: number;
    /** `WRIT_EXECUTOR_PREIMAGE_MAX_BYTES`; PREIMAGE_MAX_BYTES_DEFAULT when absent (configs built by hand). */
    readonly preimageMaxBytes?: number;
  };
  readonly cells: {
    readonly image: string;
    readonly cellsRoot: string;
    readonly socketPath: string;
    readonly poolSize: number;
    /** `WRIT_CELL_DISK_QUOTA_BYTES`; 0: no quota. Optional so configs built by hand stay valid. */
    readonly diskQuotaBytes?: number;
    /** `WRIT_CELL_SUPERVISOR`; true when absent (configs built by hand). */
    readonly supervisor?: boolean;
  };
  readonly bus: { readonly pullExpiresMs: number; readonly maxDeliver: number };
  /**
   * `WRIT_CONSUMER_STALL_SECONDS` / `_CHECK_MS`: a durable with work waiting and no ack for `afterMs` is stalled and
   * `/readyz` fails, as in every service. Optional so configs built by hand stay valid (the shared defaults then apply).
   */
  readonly consumerStall?: ConsumerStallConfig;
  readonly observe: ObserveLimits;
  /** `WRIT_SECRETS_DIR`: where granted secret handles are resolved at execution time. */
  readonly secretsDir?: string;
  /** `WRIT_EXECUTOR_EXTRA_CA_FILE`, read at start: extra trust roots of https network actions. */
  readonly tls?: { readonly extraCaFile: string; readonly extraCaPem: string };
  /** `WRIT_CELL_*`: the Lazarus cell lifecycle. Optional so configs built by hand stay valid (the defaults then apply). */
  readonly cellLifecycle?: CellLifecycleConfig;
}

export interface ConsumerStallConfig {
  readonly afterMs: number;
  readonly checkMs: number;
}

function consumerStall(env: Pick<ExecutorEnv, 'WRIT_CONSUMER_STALL_SECONDS' | 'WRIT_CONSUMER_STALL_CHECK_MS'>): ConsumerStallConfig {
  return { afterMs: env.WRIT_CONSUMER_STALL_SECONDS * 1000, checkMs: env.WRIT_CONSUMER_STALL_CHECK_MS };
}

/** `WRIT_CONSUMER_STALL_*` unset: the shared declarations' defaults. */
export const DEFAULT_CONSUMER_STALL: ConsumerStallConfig = Object.freeze(
  consumerStall(serviceEnvironment({ httpPort: 8085 }).parse({})),
);

/** README → Several hosts. */
export interface RoutingConfig {
  /** An observation relayed to the holder's `<observe>.host.<host_id>` fails after this long (EXECUTOR_CELL_HOST_UNAVAILABLE). */
  readonly observeRelayTimeoutMs: number;
}

/** `WRIT_EXECUTOR_OBSERVE_RELAY_TIMEOUT_MS` unset. */
export const DEFAULT_ROUTING: RoutingConfig = Object.freeze({ observeRelayTimeoutMs: 5_000 });

/** The Lazarus cell lifecycle of this executor (README → Cells). */
export interface CellLifecycleConfig {
  /** The kernel's cell policy every new cell is created with. */
  readonly policy: CellPolicy;
  /** 0: no sweep timer (a test sweeps by hand). */
  readonly sweepIntervalMs: number;
  readonly checkpointIntervalMs: number;
  readonly checkpointMaxBytes: number;
  readonly checkpointTimeoutMs: number;
}

/** `WRIT_CELL_*` defaults, for a config built without them. */
export const DEFAULT_CELL_LIFECYCLE: CellLifecycleConfig = Object.freeze({
  policy: CellPolicy.parse({}),
  sweepIntervalMs: 15_000,
  checkpointIntervalMs: 0,
  checkpointMaxBytes: 64 * MiB,
  checkpointTimeoutMs: 120_000,
});

/** Bounds of one state-witness observation (see README → State-witness observation). */
export interface ObserveLimits {
  readonly maxEntries: number;
  readonly maxDepth: number;
  readonly maxBytes: number;
  readonly maxPasses: number;
}

/** The request/reply subject of the observation, as the approval service also derives it. */

/** `writ.cmd.executor.run` → `<root>.cmd.executor.run`. */
function rooted(root: string, subject: string): string {
  if (!subject.startsWith('writ.')) throw new ExecutorError('EXECUTOR_INTERNAL', `subject ${subject} does not start with writ.`);
  return `${root}.${subject.slice('writ.'.length)}`;
}

export function executorSubjects(root: string, eventsPrefix?: string): ExecutorSubjects {
  return {
    root,
    run: rooted(root, COMMANDS.executorRun),
    closeCell: rooted(root, COMMANDS.executorCloseCell),
    observe: rooted(root, COMMANDS.executorObserve),
    resolveOutcome: rooted(root, COMMANDS.executorResolveOutcome),
    resurrectCell: rooted(root, COMMANDS.executorResurrectCell),
    renewCell: rooted(root, COMMANDS.executorRenewCell),
    heartbeatPrefix: `${root}.hb.executor`,
    eventsPrefix: eventsPrefix ?? `${root}.evt`,
    ingress: `${root}.ingress.>`,
    commands: `${root}.cmd.>`,
    dlq: `${root}.dlq.>`,
    runDeadLetter: `${root}.dlq.executor.run`,
    closeCellDeadLetter: `${root}.dlq.executor.close-cell`,
  };
}

/** This host's own subjects and durables: work forwarded to it by executors that do not hold a cell (README → Several hosts). */
export interface HostRoutes {
  readonly run: string;
  readonly closeCell: string;
  readonly observe: string;
  readonly runDurable: string;
  readonly closeCellDurable: string;
}

export function hostRoutes(subjects: ExecutorSubjects, durable: string, hostId: string): HostRoutes {
  return {
    run: executorHostSubject(subjects.run, hostId),
    closeCell: executorHostSubject(subjects.closeCell, hostId),
    observe: executorHostSubject(subjects.observe, hostId),
    runDurable: `${durable}-host-${hostId}`,
    closeCellDurable: `${durable}-close-cell-host-${hostId}`,
  };
}

export function toExecutorConfig(env: ExecutorEnv): ExecutorConfig {
  return {
    natsUrl: env.WRIT_NATS_URL,
    httpPort: env.WRIT_HTTP_PORT,
    httpHost: env.WRIT_HTTP_HOST,
    subjects: executorSubjects(env.WRIT_SUBJECT_ROOT, env.WRIT_EVENTS_PREFIX),
    streams: {
      events: env.WRIT_EVENTS_STREAM,
      ingress: env.WRIT_INGRESS_STREAM,
      commands: env.WRIT_COMMANDS_STREAM,
      dlq: env.WRIT_DLQ_STREAM,
      eventsMaxBytes: env.WRIT_EVENTS_MAX_BYTES,
      eventsReadCache: env.WRIT_EVENTS_READ_CACHE,
      busMaxBytes: env.WRIT_BUS_MAX_BYTES,
      replicas: env.WRIT_STREAM_REPLICAS,
    },
    executorId: env.WRIT_EXECUTOR_ID,
    ...(env.WRIT_EXECUTOR_HOST_ID === undefined ? {} : { hostId: env.WRIT_EXECUTOR_HOST_ID }),
    routing: { observeRelayTimeoutMs: env.WRIT_EXECUTOR_OBSERVE_RELAY_TIMEOUT_MS },
    principalId: env.WRIT_EXECUTOR_PRINCIPAL_ID,
    durable: env.WRIT_EXECUTOR_DURABLE,
    concurrency: env.WRIT_EXECUTOR_CONCURRENCY,
    grant: { issuer: env.WRIT_GRANT_ISSUER, audience: env.WRIT_GRANT_AUDIENCE, ...(env.WRIT_TRUST_ANCHOR === undefined ? {} : { trustAnchorFile: env.WRIT_TRUST_ANCHOR }) },
    actionTimeoutMs: env.WRIT_ACTION_TIMEOUT_MS,
    outputCapBytes: env.WRIT_OUTPUT_CAP_BYTES,
    claimGraceMs: env.WRIT_CLAIM_GRACE_MS,
    claimPollMs: env.WRIT_CLAIM_POLL_MS,
    artifacts: {
      bucket: env.WRIT_ARTIFACTS_BUCKET,
      maxBytes: env.WRIT_ARTIFACTS_MAX_BYTES,
      fileMaxBytes: env.WRIT_ARTIFACT_FILE_MAX_BYTES,
      filesMax: env.WRIT_ARTIFACT_FILES_MAX,
      preimageMaxBytes: env.WRIT_EXECUTOR_PREIMAGE_MAX_BYTES,
    },
    cells: { image: env.WRIT_CELL_IMAGE, cellsRoot: env.WRIT_CELLS_ROOT, socketPath: env.WRIT_DOCKER_SOCKET, poolSize: env.WRIT_CELL_POOL_SIZE, diskQuotaBytes: env.WRIT_CELL_DISK_QUOTA_BYTES, supervisor: env.WRIT_CELL_SUPERVISOR === 'true' },
    bus: { pullExpiresMs: env.WRIT_BUS_PULL_EXPIRES_MS, maxDeliver: env.WRIT_BUS_MAX_DELIVER },
    consumerStall: consumerStall(env),
    observe: {
      maxEntries: env.WRIT_OBSERVE_MAX_ENTRIES,
      maxDepth: env.WRIT_OBSERVE_MAX_DEPTH,
      maxBytes: env.WRIT_OBSERVE_MAX_BYTES,
      maxPasses: env.WRIT_OBSERVE_MAX_PASSES,
    },
    ...(env.WRIT_SECRETS_DIR === undefined ? {} : { secretsDir: env.WRIT_SECRETS_DIR }),
    ...(env.WRIT_EXECUTOR_EXTRA_CA_FILE === undefined ? {} : { tls: { extraCaFile: env.WRIT_EXECUTOR_EXTRA_CA_FILE.file, extraCaPem: env.WRIT_EXECUTOR_EXTRA_CA_FILE.pem } }),
    cellLifecycle: {
      policy: CellPolicy.parse(cellPolicyInput(env)),
      sweepIntervalMs: env.WRIT_CELL_SWEEP_INTERVAL_MS,
      checkpointIntervalMs: env.WRIT_CELL_CHECKPOINT_INTERVAL_MS,
      checkpointMaxBytes: env.WRIT_CELL_CHECKPOINT_MAX_BYTES,
      checkpointTimeoutMs: env.WRIT_CELL_CHECKPOINT_TIMEOUT_MS,
    },
  };
}

/** Reads and validates the environment; throws RUNTIME_CONFIG_INVALID listing every bad variable. */
export function loadExecutorConfig(env: Record<string, string | undefined> = process.env): ExecutorConfig {
  return toExecutorConfig(loadConfig('executor', ExecutorEnv, env));
}
