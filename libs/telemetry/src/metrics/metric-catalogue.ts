/**
 * Every metric Writ exports, defined once: the services record them through
 * `writMetrics()` (the instruments are made from these definitions), the
 * Grafana dashboard and the Prometheus alert rules in `deploy/observability/`
 * may name only these (a test parses their PromQL), and docs/operations.md
 * ("Metrics") explains each.
 *
 * Names are Prometheus names (`writ_` prefix, the unit in the name, `_total`
 * on counters); the OTel instrument carries the same name, so OTLP and
 * Prometheus agree. Labels are closed, low-cardinality sets: never a task,
 * attempt, grant or principal id, never anything docs/security.md redacts.
 * Every series also carries `service_name` (the OTel resource's
 * `service.name`), added by the exporter.
 */

export type MetricKind = 'counter' | 'gauge' | 'histogram';

/** The service processes (what `services/` holds); `all` in a definition means every one of them. */
export const WRIT_SERVICE_NAMES = ['ingress', 'orchestrator', 'policy', 'approval', 'executor', 'receipt', 'projection'] as const;
export type WritServiceName = (typeof WRIT_SERVICE_NAMES)[number];

export interface MetricDefinition<K extends MetricKind = MetricKind, L extends string = string> {
  /** The Prometheus name (and the OTel instrument's). */
  readonly name: string;
  readonly kind: K;
  /** `# HELP`: what one sample means. */
  readonly help: string;
  /** UCUM unit of the OTel instrument (`s`, `{message}`); also in the name. */
  readonly unit: string;
  readonly labels: readonly L[];
  /** Who exports it. */
  readonly services: 'all' | readonly WritServiceName[];
  /** Histogram bucket upper bounds, in the metric's unit. */
  readonly buckets?: readonly number[];
  /**
   * When a series exists only under a condition (what the process holds), the condition;
   * absent: every exporting service shows it once the thing it counts has happened.
   */
  readonly when?: string;
}

const define = <K extends MetricKind, const L extends string = never>(definition: MetricDefinition<K, L>): MetricDefinition<K, L> => Object.freeze(definition);

/** Seconds, from a fast local hop to the slowest legitimate wait (a director's approval is not timed here). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** An execution runs a command in a cell: ~90 ms warm, up to the action's timeout. */
const EXECUTION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export const METRICS = Object.freeze({
  // Every service: the bus (libs/runtime), readiness.
  serviceReady: define({
    name: 'writ_service_ready',
    kind: 'gauge',
    help: 'Whether the service passes every readiness check (/readyz 200): 1, else 0',
    unit: '1',
    // `service`: which service, also where several share one process (apps/serve) and so one service_name.
    labels: ['service'],
    services: 'all',
  }),
  consumerPending: define({
    name: 'writ_consumer_pending_messages',
    kind: 'gauge',
    help: 'Messages of a durable consumer not delivered yet (JetStream num_pending), sampled every WRIT_CONSUMER_STALL_CHECK_MS',
    unit: '{message}',
    labels: ['stream', 'durable'],
    services: 'all',
  }),
  consumerAckPending: define({
    name: 'writ_consumer_ack_pending_messages',
    kind: 'gauge',
    help: 'Messages of a durable consumer delivered and not acknowledged yet (JetStream num_ack_pending)',
    unit: '{message}',
    labels: ['stream', 'durable'],
    services: 'all',
  }),
  consumerRedelivered: define({
    name: 'writ_consumer_redelivered_messages',
    kind: 'gauge',
    help: 'Messages of a durable consumer delivered more than once and not acknowledged yet (JetStream num_redelivered)',
    unit: '{message}',
    labels: ['stream', 'durable'],
    services: 'all',
  }),
  consumerStalled: define({
    name: 'writ_consumer_stalled_seconds',
    kind: 'gauge',
    help: 'How long a durable consumer has had work waiting without its ack floor moving (0: moving or idle)',
    unit: 's',
    labels: ['stream', 'durable'],
    services: 'all',
  }),
  deadLetters: define({
    name: 'writ_dead_letters_total',
    kind: 'counter',
    help: 'Messages this process dead-lettered, by the stream they came from, its durable and the reason code',
    unit: '{message}',
    labels: ['stream', 'durable', 'reason'],
    services: 'all',
  }),
  quarantined: define({
    name: 'writ_quarantined_messages_total',
    kind: 'counter',
    help: 'Messages this service skipped as junk (invariant 10), by reason (QUARANTINE_*)',
    unit: '{message}',
    labels: ['service', 'reason'],
    services: 'all',
  }),

  // policy
  policyDecisionDuration: define({
    name: 'writ_policy_decision_duration_seconds',
    kind: 'histogram',
    help: 'From an attempt entering policy (attempt.awaiting_policy or a re-entry) to its policy.evaluated, by action class and outcome',
    unit: 's',
    labels: ['action_class', 'outcome'],
    services: ['policy'],
    buckets: LATENCY_BUCKETS,
  }),

  // approval
  approvalsResolved: define({
    name: 'writ_approvals_resolved_total',
    kind: 'counter',
    help: 'Director resolutions this process recorded in the log, by status (granted, denied); a resent resolution found already recorded is answered but not counted again',
    unit: '{approval}',
    labels: ['status'],
    services: ['approval'],
  }),
  grantsIssued: define({
    name: 'writ_grants_issued_total',
    kind: 'counter',
    help: 'Capability grants minted (grant.issued appended), by action class',
    unit: '{grant}',
    labels: ['action_class'],
    services: ['approval'],
  }),
  grantsRevoked: define({
    name: 'writ_grants_revoked_total',
    kind: 'counter',
    help: 'Capability grants revoked by a director (grant.revoked appended)',
    unit: '{grant}',
    labels: [],
    services: ['approval'],
  }),
  keyExpiry: define({
    name: 'writ_key_expiry_seconds',
    kind: 'gauge',
    help: 'Seconds until a key or credential this process holds stops being valid (negative: already past); signing keys count to their retirement after a rotation',
    unit: 's',
    labels: ['service', 'key'],
    services: 'all',
    when: 'the process holds a NATS credential with an expiry (a user JWT with exp, a TLS client certificate) or a signing key retiring after a rotation (approval, receipt)',
  }),

  // executor
  grantUses: define({
    name: 'writ_grant_uses_total',
    kind: 'counter',
    help: 'Grant uses claimed and run to a recorded end (executed or recorded unknown), by action class',
    unit: '{use}',
    labels: ['action_class'],
    services: ['executor'],
  }),
  grantsRefused: define({
    name: 'writ_grants_refused_total',
    kind: 'counter',
    help: 'Run commands the executor refused because of their grant, by reason code (GRANT_EXPIRED, GRANT_REVOKED, ...)',
    unit: '{command}',
    labels: ['reason'],
    services: ['executor'],
  }),
  executions: define({
    name: 'writ_executions_total',
    kind: 'counter',
    help: 'Executions recorded, by action class and outcome (completed, errored, not_run, unknown)',
    unit: '{execution}',
    labels: ['action_class', 'outcome'],
    services: ['executor'],
  }),
  executionDuration: define({
    name: 'writ_execution_duration_seconds',
    kind: 'histogram',
    help: 'How long an execution took in its cell, by action class and outcome',
    unit: 's',
    labels: ['action_class', 'outcome'],
    services: ['executor'],
    buckets: EXECUTION_BUCKETS,
  }),
  unknownOutcomes: define({
    name: 'writ_unknown_outcomes_total',
    kind: 'counter',
    help: 'Executions recorded with outcome unknown (a side effect may have happened; a director must resolve it), by action class',
    unit: '{execution}',
    labels: ['action_class'],
    services: ['executor'],
  }),
  cells: define({
    name: 'writ_cells',
    kind: 'gauge',
    help: "The executor's warm cell pool: its configured size, cells ready and cells being created",
    unit: '{cell}',
    labels: ['state'],
    services: ['executor'],
    when: 'the warm pool is on (WRIT_CELL_POOL_SIZE above 0)',
  }),

  // receipt
  receiptsIssued: define({
    name: 'writ_receipts_issued_total',
    kind: 'counter',
    help: 'Receipts issued (receipt.issued appended), by the action class that ran, result (succeeded, failed, unknown_outcome, refused, cancelled) and cause (settled, policy_denied, approval_denied, refused close an action; approval_resolved records a director decision)',
    unit: '{receipt}',
    labels: ['action_class', 'result', 'cause'],
    services: ['receipt'],
  }),

  // projection
  projectionLagEvents: define({
    name: 'writ_projection_lag_events',
    kind: 'gauge',
    help: "Events of the log not yet folded into the projection (the log's last stream sequence minus the checkpoint)",
    unit: '{event}',
    labels: [],
    services: ['projection'],
  }),
  projectionLagSeconds: define({
    name: 'writ_projection_lag_seconds',
    kind: 'gauge',
    help: 'How long the oldest event not yet folded into the projection has waited in the log (0 when caught up)',
    unit: 's',
    labels: [],
    services: ['projection'],
  }),
  approvalsPending: define({
    name: 'writ_approvals_pending',
    kind: 'gauge',
    help: 'Approvals waiting for a director, as the projection holds them',
    unit: '{approval}',
    labels: [],
    services: ['projection'],
  }),
  approvalsPendingOldestAge: define({
    name: 'writ_approvals_pending_oldest_age_seconds',
    kind: 'gauge',
    help: 'How long the oldest approval still waiting for a director has waited (0 when none waits)',
    unit: 's',
    labels: [],
    services: ['projection'],
  }),
} as const);

export type MetricKey = keyof typeof METRICS;

/** The catalogue as a list, in definition order. */
export const METRIC_CATALOGUE: readonly MetricDefinition[] = Object.freeze(Object.values(METRICS));

/** Whether a service exports the metric. */
export function exportedBy(definition: MetricDefinition, service: WritServiceName): boolean {
  return definition.services === 'all' || definition.services.includes(service);
}

/**
 * The series names a scrape shows for a metric: a histogram's `_bucket`,
 * `_sum` and `_count`, anything else its own name.
 */
export function seriesNames(definition: MetricDefinition): readonly string[] {
  return definition.kind === 'histogram' ? [`${definition.name}_bucket`, `${definition.name}_sum`, `${definition.name}_count`] : [definition.name];
}
