import { COMMANDS } from '@writ/contracts';
import { artifactVariables, busConsumerVariables, envInt, loadConfig, serviceEnvironment, serviceStreams, type ServiceStreams } from '@writ/runtime';
import { z } from 'zod';


const PrincipalId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be a principal id (1-128 characters of A-Z, a-z, 0-9, "_" or "-")');

/**
 * The orchestrator's configuration, read from the environment (variable
 * names are the keys): the variables every service reads (`@writ/runtime`'s
 * `serviceEnvironment`, HTTP port 8082), the tuning of its durable
 * (`busConsumerVariables`) and its own. Every subject derives from
 * `WRIT_SUBJECT_ROOT`, so a test (or a second deployment on the same NATS) can
 * run beside the real one.
 */
export const OrchestratorEnv = serviceEnvironment({ httpPort: 8082 }).extend({
  /** Each attempt's context pack is stored there (opened on first use). */
  ...artifactVariables,
  /** Who the orchestrator's events are attributed to (`actor_id`). */
  WRIT_ORCHESTRATOR_PRINCIPAL_ID: PrincipalId.default('writ-orchestrator'),
  /** The deployment's trust anchor (writ init's trust-anchor.json): each director's registration must chain to it. */
  WRIT_TRUST_ANCHOR: z.string().min(1).optional(),
  /** The executor fleet principal grants are issued to. */
  WRIT_EXECUTOR_PRINCIPAL_ID: PrincipalId.default('writ-executor'),
  ...busConsumerVariables,
  /**
   * Task events handled at once by one process: events of different tasks run alongside
   * (each handler mostly waits on NATS round trips), one task's events one at a time in
   * arrival order. 1 handles every event of every task in turn.
   */
  WRIT_ORCHESTRATOR_CONCURRENCY: envInt(1, 256).default(16),
  /** ±seconds around the orchestrator's clock a signed claim's `claimed_at` must lie in (docs/task-claims.md). */
  WRIT_CLAIM_FRESHNESS_SECONDS: envInt(1, 86_400).default(300),
});
export type OrchestratorEnv = z.output<typeof OrchestratorEnv>;

/** The subjects the orchestrator binds and publishes to, all under one root. */
export interface OrchestratorSubjects {
  readonly root: string;
  /** Prefix of the event log (`<root>.evt`). */
  readonly events: string;
  /** What the orchestrator consumes: every task's events. */
  readonly taskEvents: string;
  /** And every participant's (`<events>.participant.>`): a Last Will lands as beliefs (issue 17). */
  readonly participantEvents: string;
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
  /** Where undeliverable participant events go. */
  readonly participantDeadLetter: string;
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
  /** The log and the bus streams as every service configures them (names, bounds, read cache, stall watch). */
  readonly streams: ServiceStreams;
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
    participantEvents: `${events}.participant.>`,
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
    participantDeadLetter: `${root}.dlq.orchestrator.participant-events`,
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
  return Object.freeze({ env: parsed, subjects: orchestratorSubjects(parsed), streams: serviceStreams(parsed) });
}
