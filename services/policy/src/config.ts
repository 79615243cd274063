import { Id } from '@writ/contracts';
import { StreamName, busConsumerVariables, envInt, loadConfig, serviceEnvironment, serviceSubjects } from '@writ/runtime';
import type { z } from 'zod';

/**
 * The policy service's configuration, read from the environment (variable
 * names are the keys): the variables every service reads (`@writ/runtime`'s
 * `serviceEnvironment`, HTTP port 8083) and its own. Every subject derives
 * from `WRIT_SUBJECT_ROOT`.
 */
export const PolicyEnv = serviceEnvironment({ httpPort: 8083 }).extend({
  /** The policy engine's principal: `evaluated_by` of results, `decided_by` of decisions, `actor_id` of events. */
  WRIT_POLICY_PRINCIPAL_ID: Id.default('writ-policy'),
  /** Commands evaluated at once by one process (each task's appends stay ordered by the log's guard). */
  WRIT_POLICY_CONCURRENCY: envInt(1, 64).default(4),
  /** The KV bucket holding the current record of every profile (stream `KV_<bucket>`); replicas follow WRIT_STREAM_REPLICAS. */
  WRIT_POLICY_BUCKET: StreamName.default('WRIT_POLICY'),
  /** Revisions the bucket keeps per profile (the log keeps them all). */
  WRIT_POLICY_BUCKET_HISTORY: envInt(16, 64).default(16),
  /** Byte bound of the bucket. */
  WRIT_POLICY_BUCKET_MAX_BYTES: envInt(1024 * 1024).default(64 * 1024 * 1024),
  /** How far a signed profile application's applied_at may be from the service's clock, in seconds. */
  WRIT_POLICY_APPLY_FRESHNESS_SECONDS: envInt(1, 3_600).default(300),
  ...busConsumerVariables,
});
export type PolicyEnv = z.output<typeof PolicyEnv>;

export interface PolicySubjects {
  readonly root: string;
  readonly events: string;
  /** What the service consumes. */
  readonly policyEvaluate: string;
  /** Request/reply: a director's signed profile application. */
  readonly applyProfile: string;
  /** Request/reply: evaluation without a record (simulation, benchmarks). */
  readonly evaluateDryRun: string;
  readonly ingressAll: string;
  readonly commandsAll: string;
  readonly dlqAll: string;
  readonly deadLetter: string;
}

export interface PolicyConfig {
  readonly env: PolicyEnv;
  readonly subjects: PolicySubjects;
}

export function policySubjects(env: PolicyEnv): PolicySubjects {
  const subjects = serviceSubjects(env);
  return Object.freeze({
    root: subjects.root,
    events: subjects.events,
    policyEvaluate: subjects.commands.policyEvaluate,
    applyProfile: subjects.commands.policyApplyProfile,
    evaluateDryRun: subjects.commands.policyEvaluateDryRun,
    ingressAll: subjects.streams.ingress,
    commandsAll: subjects.streams.commands,
    dlqAll: subjects.streams.dlq,
    deadLetter: subjects.deadLetter('policy', 'evaluate'),
  });
}

/** Reads and validates the environment; fails fast (RUNTIME_CONFIG_INVALID) listing every bad variable. */
export function loadPolicyConfig(env: Record<string, string | undefined> = process.env): PolicyConfig {
  const parsed = loadConfig('policy', PolicyEnv, env);
  return Object.freeze({ env: parsed, subjects: policySubjects(parsed) });
}
