import { COMMANDS, COMMANDS_STREAM, DLQ_STREAM, EVENTS_STREAM, INGRESS_STREAM } from '@writ/contracts';
import { loadConfig } from '@writ/runtime';
import { z } from 'zod';

const GiB = 1024 ** 3;

const SubjectRoot = z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be dot-separated subject tokens without wildcards');
const StreamName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"');
const PrincipalId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be a principal id (1-128 characters of A-Z, a-z, 0-9, "_" or "-")');
const int = (min: number) => z.coerce.number().int().min(min);

/**
 * The policy service's configuration, read from the environment (variable
 * names are the keys). Every subject derives from `WRIT_SUBJECT_ROOT`.
 */
export const PolicyEnv = z.object({
  WRIT_NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  WRIT_HTTP_PORT: int(0).max(65_535).default(8083),
  WRIT_HTTP_HOST: z.string().min(1).default('0.0.0.0'),
  /** Replaces the leading `writ` of every subject (`<root>.cmd.policy.evaluate`, `<root>.evt`). */
  WRIT_SUBJECT_ROOT: SubjectRoot.default('writ'),
  WRIT_EVENTS_STREAM: StreamName.default(EVENTS_STREAM),
  /** Subject prefix of the event log; default `<root>.evt`. */
  WRIT_EVENTS_PREFIX: SubjectRoot.optional(),
  WRIT_INGRESS_STREAM: StreamName.default(INGRESS_STREAM),
  WRIT_COMMANDS_STREAM: StreamName.default(COMMANDS_STREAM),
  WRIT_DLQ_STREAM: StreamName.default(DLQ_STREAM),
  WRIT_EVENTS_MAX_BYTES: int(1).default(10 * GiB),
  WRIT_BUS_MAX_BYTES: int(1).default(GiB),
  WRIT_STREAM_REPLICAS: int(1).max(5).default(1),
  /** The policy engine's principal: `evaluated_by` of results, `decided_by` of decisions, `actor_id` of events. */
  WRIT_POLICY_PRINCIPAL_ID: PrincipalId.default('writ-policy'),
  /** Commands evaluated at once by one process (each task's appends stay ordered by the log's guard). */
  WRIT_POLICY_CONCURRENCY: int(1).max(64).default(4),
  WRIT_BUS_MAX_DELIVER: int(1).default(5),
  WRIT_BUS_BACKOFF_INITIAL_MS: int(0).default(1_000),
  WRIT_BUS_PULL_EXPIRES_MS: int(1_000).default(5_000),
  WRIT_BUS_ACK_WAIT_MS: int(1_000).default(30_000),
});
export type PolicyEnv = z.output<typeof PolicyEnv>;

export interface PolicySubjects {
  readonly root: string;
  readonly events: string;
  /** What the service consumes. */
  readonly policyEvaluate: string;
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
  const root = env.WRIT_SUBJECT_ROOT;
  return Object.freeze({
    root,
    events: env.WRIT_EVENTS_PREFIX ?? `${root}.evt`,
    policyEvaluate: `${root}.${COMMANDS.policyEvaluate.slice('writ.'.length)}`,
    ingressAll: `${root}.ingress.>`,
    commandsAll: `${root}.cmd.>`,
    dlqAll: `${root}.dlq.>`,
    deadLetter: `${root}.dlq.policy.evaluate`,
  });
}

/** Reads and validates the environment; fails fast (RUNTIME_CONFIG_INVALID) listing every bad variable. */
export function loadPolicyConfig(env: Record<string, string | undefined> = process.env): PolicyConfig {
  const parsed = loadConfig('policy', PolicyEnv, env);
  return Object.freeze({ env: parsed, subjects: policySubjects(parsed) });
}
