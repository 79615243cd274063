import { COMMANDS, COMMANDS_STREAM, DLQ_STREAM, EVENTS_STREAM, INGRESS_STREAM } from '@writ/contracts';
import { loadConfig, renamedVariable } from '@writ/runtime';
import { z } from 'zod';

const GiB = 1024 ** 3;

/** Dot-separated subject tokens, no wildcards: `writ`, `t_1a2b3c`, `staging.writ`. */
const SubjectRoot = z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be dot-separated subject tokens without wildcards');
const StreamName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"');
const PrincipalId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be a principal id (1-128 characters of A-Z, a-z, 0-9, "_" or "-")');
const int = (min: number) => z.coerce.number().int().min(min);

/**
 * The orchestrator's configuration, read from the environment (variable
 * names are the keys). Every subject derives from `WRIT_SUBJECT_ROOT`, so a
 * test (or a second deployment on the same NATS) can run beside the real one.
 */
export const OrchestratorEnv = z.object({
  /** NATS server(s), comma-separated. */
  WRIT_NATS_URL: z.string().min(1).default('nats://127.0.0.1:4223'),
  /** Port of `/healthz`, `/readyz` and `/metrics`; 0 picks a free port (tests). */
  WRIT_HTTP_PORT: int(0).max(65_535).default(8082),
  /** Loopback unless configured wider (a container sets 0.0.0.0). */
    WRIT_HTTP_HOST: z.string().min(1).default('127.0.0.1'),
  /** Replaces the leading `writ` of every subject (`<root>.evt.task.>`, `<root>.cmd.policy.evaluate`). */
  WRIT_SUBJECT_ROOT: SubjectRoot.default('writ'),
  /** JetStream stream of the event log. */
  WRIT_EVENTS_STREAM: StreamName.default(EVENTS_STREAM),
  /** Subject prefix of the event log; default `<root>.evt`. */
  WRIT_EVENTS_PREFIX: SubjectRoot.optional(),
  /** Bus stream of `<root>.ingress.>` (ensured at start with the others). */
  WRIT_INGRESS_STREAM: StreamName.default(INGRESS_STREAM),
  /** Bus stream of `<root>.cmd.>`: the commands the orchestrator issues to the other services. */
  WRIT_COMMANDS_STREAM: StreamName.default(COMMANDS_STREAM),
  /** Bus stream of `<root>.dlq.>`: where undeliverable task events go. */
  WRIT_DLQ_STREAM: StreamName.default(DLQ_STREAM),
  /** Byte bound of the event log (the server reserves it). */
  WRIT_EVENTS_MAX_BYTES: int(1).default(10 * GiB),
  /** Byte bound of each bus stream (ingress, commands, dead letters). */
  WRIT_BUS_MAX_BYTES: int(1).default(GiB),
  /** Former name of WRIT_BUS_MAX_BYTES (executor, ingress, projection): refused rather than read, so the bus streams are never bounded half one way. */
  WRIT_BUS_STREAMS_MAX_BYTES: renamedVariable('WRIT_BUS_STREAMS_MAX_BYTES', 'WRIT_BUS_MAX_BYTES', 'the name every service reads'),
  /** The shared, content-addressed artifact bucket each attempt's context pack is stored in (`sha256-<hex>`; opened on first use). */
  WRIT_ARTIFACTS_BUCKET: StreamName.default('WRIT_ARTIFACTS'),
  /** Byte bound of the artifact bucket if the orchestrator is the one creating it (the executor's default). */
  WRIT_ARTIFACTS_MAX_BYTES: int(1).default(10 * GiB),
  /** 1 on a single server, 3 in a cluster. */
  WRIT_STREAM_REPLICAS: int(1).max(5).default(1),
  /** Who the orchestrator's events are attributed to (`actor_id`). */
  WRIT_ORCHESTRATOR_PRINCIPAL_ID: PrincipalId.default('writ-orchestrator'),
  /** The deployment's trust anchor (writ init's trust-anchor.json): each director's registration must chain to it. */
  WRIT_TRUST_ANCHOR: z.string().min(1).optional(),
  /** The executor fleet principal grants are issued to. */
  WRIT_EXECUTOR_PRINCIPAL_ID: PrincipalId.default('writ-executor'),
  /** Handled attempts of one task event before it is dead-lettered. */
  WRIT_BUS_MAX_DELIVER: int(1).default(10),
  /** Delay before the first retry of a failed event; each further retry doubles it. */
  WRIT_BUS_BACKOFF_INITIAL_MS: int(0).default(1_000),
  /** How long one pull waits on the server; bounds how long a graceful stop waits when idle. */
  WRIT_BUS_PULL_EXPIRES_MS: int(1_000).default(5_000),
  /** How long the server waits for an ack before it redelivers; extended while a handler is still running. */
  WRIT_BUS_ACK_WAIT_MS: int(1_000).default(30_000),
  /**
   * Task events handled at once by one process: events of different tasks run alongside
   * (each handler mostly waits on NATS round trips), one task's events one at a time in
   * arrival order. 1 handles every event of every task in turn.
   */
  WRIT_ORCHESTRATOR_CONCURRENCY: int(1).max(256).default(16),
  /** ±seconds around the orchestrator's clock a signed claim's `claimed_at` must lie in (docs/task-claims.md). */
  WRIT_CLAIM_FRESHNESS_SECONDS: int(1).max(86_400).default(300),
  /** A durable with work waiting whose ack floor has not moved for this long is stalled: `/readyz` fails (docs/operations.md). */
  WRIT_CONSUMER_STALL_SECONDS: int(1).default(120),
  /** How often the durables are sampled for stalls. */
  WRIT_CONSUMER_STALL_CHECK_MS: int(100).default(5_000),
});
export type OrchestratorEnv = z.output<typeof OrchestratorEnv>;

/** The subjects the orchestrator binds and publishes to, all under one root. */
export interface OrchestratorSubjects {
  readonly root: string;
  /** Prefix of the event log (`<root>.evt`). */
  readonly events: string;
  /** What the orchestrator consumes: every task's events. */
  readonly taskEvents: string;
  readonly policyEvaluate: string;
  readonly approvalRequest: string;
  readonly approvalIssueGrant: string;
  /** `<root>.cmd.approval.cancel`. */
  readonly approvalCancel: string;
  readonly executorRun: string;
  readonly receiptIssue: string;
  /** `<root>.cmd.executor.close-cell`. */
  readonly executorCloseCell: string;
  readonly ingressAll: string;
  readonly commandsAll: string;
  readonly dlqAll: string;
  /** Where undeliverable task events go. */
  readonly deadLetter: string;
  /** Request/reply: signed done, blocked and correction claims (`<root>.qry.orchestrator.claim-*`). */
  readonly claimDone: string;
  readonly claimBlocked: string;
  readonly claimCorrection: string;
  /** Request/reply: signed working state revisions and belief changes (`<root>.qry.orchestrator.revise-working-state`, `change-belief`). */
  readonly reviseWorkingState: string;
  readonly changeBelief: string;
}

export interface OrchestratorConfig {
  readonly env: OrchestratorEnv;
  readonly subjects: OrchestratorSubjects;
}

/** `writ.cmd.policy.evaluate` → `<root>.cmd.policy.evaluate`. */
export function underRoot(root: string, subject: string): string {
  return subject.startsWith('writ.') ? `${root}.${subject.slice('writ.'.length)}` : subject;
}

export function orchestratorSubjects(env: OrchestratorEnv): OrchestratorSubjects {
  const root = env.WRIT_SUBJECT_ROOT;
  const events = env.WRIT_EVENTS_PREFIX ?? `${root}.evt`;
  return Object.freeze({
    root,
    events,
    taskEvents: `${events}.task.>`,
    policyEvaluate: underRoot(root, COMMANDS.policyEvaluate),
    approvalRequest: underRoot(root, COMMANDS.approvalRequest),
    approvalIssueGrant: underRoot(root, COMMANDS.approvalIssueGrant),
    approvalCancel: underRoot(root, COMMANDS.approvalCancel),
    executorRun: underRoot(root, COMMANDS.executorRun),
    receiptIssue: underRoot(root, COMMANDS.receiptIssue),
    executorCloseCell: underRoot(root, COMMANDS.executorCloseCell),
    ingressAll: `${root}.ingress.>`,
    commandsAll: `${root}.cmd.>`,
    dlqAll: `${root}.dlq.>`,
    deadLetter: `${root}.dlq.orchestrator.task-events`,
    claimDone: underRoot(root, COMMANDS.orchestratorClaimDone),
    claimBlocked: underRoot(root, COMMANDS.orchestratorClaimBlocked),
    claimCorrection: underRoot(root, COMMANDS.orchestratorClaimCorrection),
    reviseWorkingState: underRoot(root, COMMANDS.orchestratorReviseWorkingState),
    changeBelief: underRoot(root, COMMANDS.orchestratorChangeBelief),
  });
}

/** Reads and validates the environment; fails fast (RUNTIME_CONFIG_INVALID) listing every bad variable. */
export function loadOrchestratorConfig(env: Record<string, string | undefined> = process.env): OrchestratorConfig {
  const parsed = loadConfig('orchestrator', OrchestratorEnv, env);
  return Object.freeze({ env: parsed, subjects: orchestratorSubjects(parsed) });
}
