import { COMMANDS, COMMANDS_STREAM, DLQ_STREAM, EVENTS_STREAM, INGRESS_STREAM, MAX_INGRESS_BYTES } from '@writ/contracts';
import { patternToken } from '@writ/bus';
import { loadConfig } from '@writ/runtime';
import { z } from 'zod';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/** Dot-separated subject tokens, no wildcards: `writ`, `t_1a2b3c`, `tenant.a.writ`. */
const SubjectRoot = z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be dot-separated subject tokens without wildcards');
const StreamName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"');
const PrincipalId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be a principal id (1-128 characters of A-Z, a-z, 0-9, "_" or "-")');
const int = (min: number, max: number = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);

/**
 * The environment ingress reads, with its defaults (docs in the service README).
 * Every subject derives from `WRIT_SUBJECT_ROOT`, every stream name is
 * overridable, so a test runs a real ingress on its own streams and subjects.
 */
export const IngressEnv = z.object({
  WRIT_NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  WRIT_HTTP_HOST: z.string().min(1).default('0.0.0.0'),
  /** 0 picks a free port (tests). */
  WRIT_HTTP_PORT: int(0, 65_535).default(8081),
  WRIT_SUBJECT_ROOT: SubjectRoot.default('writ'),
  WRIT_EVENTS_STREAM: StreamName.default(EVENTS_STREAM),
  /** Default `<root>.evt`. */
  WRIT_EVENTS_PREFIX: SubjectRoot.optional(),
  WRIT_EVENTS_MAX_BYTES: int(MiB).default(10 * GiB),
  WRIT_INGRESS_STREAM: StreamName.default(INGRESS_STREAM),
  WRIT_COMMANDS_STREAM: StreamName.default(COMMANDS_STREAM),
  WRIT_DLQ_STREAM: StreamName.default(DLQ_STREAM),
  WRIT_BUS_STREAMS_MAX_BYTES: int(MiB).default(GiB),
  /** Replicas of the event log and the bus streams (3 in a cluster). */
  WRIT_STREAM_REPLICAS: int(1, 5).default(1),
  /** How far `proposed_at` may lie from the time ingress received the request. */
  WRIT_INGRESS_FRESHNESS_SECONDS: int(1, 86_400).default(300),
  /** Largest signed request accepted, in bytes; at most the contract's MAX_INGRESS_BYTES. */
  WRIT_INGRESS_MAX_BYTES: int(1, MAX_INGRESS_BYTES).default(MAX_INGRESS_BYTES),
  /** The principal id ingress appends as (`actor_id` of its events). */
  WRIT_INGRESS_PRINCIPAL_ID: PrincipalId.default('ingress'),
  /** `max_attempts` of the step each action opens (retries are new attempts, by the orchestrator). */
  WRIT_STEP_MAX_ATTEMPTS: int(1, 100).default(3),
  /** Handled deliveries of one ingress message before it is dead-lettered (infrastructure failures only). */
  WRIT_INGRESS_MAX_DELIVER: int(1, 100).default(5),
  /** Ack wait of the ingress consumer; a handler in flight extends it. */
  WRIT_INGRESS_ACK_WAIT_MS: int(1_000).default(30_000),
});
export type IngressEnv = z.input<typeof IngressEnv>;

export interface IngressConfig {
  readonly natsUrl: string;
  readonly http: { readonly host: string; readonly port: number };
  readonly subjectRoot: string;
  readonly subjects: {
    /** Durable consumer filter: `<root>.ingress.action.*` (the last token is the principal id). */
    readonly ingressActions: string;
    /** Where agents publish: `<root>.ingress.action.<principal_id>`. */
    readonly ingressAction: (principalId: string) => string;
    /** Request/reply subject answered with `SubmitAction`: `<root>.qry.ingress.submit-action` (core NATS, no stream captures it). */
    readonly submitAction: string;
    readonly deadLetter: string;
  };
  readonly streams: {
    readonly events: string;
    readonly eventsPrefix: string;
    readonly eventsMaxBytes: number;
    readonly names: { readonly ingress: string; readonly commands: string; readonly dlq: string };
    readonly subjects: { readonly ingress: string; readonly commands: string; readonly dlq: string };
    readonly busMaxBytes: number;
    readonly replicas: number;
  };
  readonly freshnessSeconds: number;
  readonly maxIngressBytes: number;
  readonly principalId: string;
  readonly stepMaxAttempts: number;
  readonly consumer: { readonly maxDeliver: number; readonly ackWaitMs: number };
}

/** `writ.qry.ingress.submit-action` → `<root>.qry.ingress.submit-action`. */
export function underRoot(root: string, subject: string): string {
  return subject.startsWith('writ.') ? `${root}.${subject.slice('writ.'.length)}` : subject;
}

/** Reads the environment (or `env`), failing fast with every offending variable (RUNTIME_CONFIG_INVALID). */
export function loadIngressConfig(env: Record<string, string | undefined> = process.env): IngressConfig {
  const e = loadConfig('ingress', IngressEnv, env);
  const root = e.WRIT_SUBJECT_ROOT;
  const ingressActions = `${root}.ingress.action.*`;
  return {
    natsUrl: e.WRIT_NATS_URL,
    http: { host: e.WRIT_HTTP_HOST, port: e.WRIT_HTTP_PORT },
    subjectRoot: root,
    subjects: {
      ingressActions,
      ingressAction: (principalId) => `${root}.ingress.action.${principalId}`,
      submitAction: underRoot(root, COMMANDS.ingressSubmitAction),
      deadLetter: `${root}.dlq.ingress.${patternToken(ingressActions)}`,
    },
    streams: {
      events: e.WRIT_EVENTS_STREAM,
      eventsPrefix: e.WRIT_EVENTS_PREFIX ?? `${root}.evt`,
      eventsMaxBytes: e.WRIT_EVENTS_MAX_BYTES,
      names: { ingress: e.WRIT_INGRESS_STREAM, commands: e.WRIT_COMMANDS_STREAM, dlq: e.WRIT_DLQ_STREAM },
      subjects: { ingress: `${root}.ingress.>`, commands: `${root}.cmd.>`, dlq: `${root}.dlq.>` },
      busMaxBytes: e.WRIT_BUS_STREAMS_MAX_BYTES,
      replicas: e.WRIT_STREAM_REPLICAS,
    },
    freshnessSeconds: e.WRIT_INGRESS_FRESHNESS_SECONDS,
    maxIngressBytes: e.WRIT_INGRESS_MAX_BYTES,
    principalId: e.WRIT_INGRESS_PRINCIPAL_ID,
    stepMaxAttempts: e.WRIT_STEP_MAX_ATTEMPTS,
    consumer: { maxDeliver: e.WRIT_INGRESS_MAX_DELIVER, ackWaitMs: e.WRIT_INGRESS_ACK_WAIT_MS },
  };
}
