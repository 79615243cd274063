import { Id, MAX_INGRESS_BYTES } from '@writ/contracts';
import { patternToken } from '@writ/bus';
import { envInt, loadConfig, serviceEnvironment, serviceHttp, serviceStreams, serviceSubjects, type BusStreamSubjects, type ServiceHttp, type ServiceStreams } from '@writ/runtime';
import type { z } from 'zod';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/**
 * The environment ingress reads, with its defaults (docs in the service README):
 * the variables every service reads (`@writ/runtime`'s `serviceEnvironment`,
 * HTTP port 8081, the bus streams' bound in `WRIT_BUS_STREAMS_MAX_BYTES`) and
 * its own. Every subject derives from `WRIT_SUBJECT_ROOT`, every stream name is
 * overridable, so a test runs a real ingress on its own streams and subjects.
 */
export const IngressEnv = serviceEnvironment({ httpPort: 8081, busMaxBytesVariable: 'WRIT_BUS_STREAMS_MAX_BYTES' }).extend({
  /** Ingress refuses byte bounds under 1 MiB (its largest message). */
  WRIT_EVENTS_MAX_BYTES: envInt(MiB).default(10 * GiB),
  WRIT_BUS_STREAMS_MAX_BYTES: envInt(MiB).default(GiB),
  /** How far `proposed_at` may lie from the time ingress received the request. */
  WRIT_INGRESS_FRESHNESS_SECONDS: envInt(1, 86_400).default(300),
  /** Largest signed request accepted, in bytes; at most the contract's MAX_INGRESS_BYTES. */
  WRIT_INGRESS_MAX_BYTES: envInt(1, MAX_INGRESS_BYTES).default(MAX_INGRESS_BYTES),
  /** The principal id ingress appends as (`actor_id` of its events). */
  WRIT_INGRESS_PRINCIPAL_ID: Id.default('ingress'),
  /** `max_attempts` of the step each action opens (retries are new attempts, by the orchestrator). */
  WRIT_STEP_MAX_ATTEMPTS: envInt(1, 100).default(3),
  /** Handled deliveries of one ingress message before it is dead-lettered (infrastructure failures only). */
  WRIT_INGRESS_MAX_DELIVER: envInt(1, 100).default(5),
  /** Ack wait of the ingress consumer; a handler in flight extends it. */
  WRIT_INGRESS_ACK_WAIT_MS: envInt(1_000).default(30_000),
});
export type IngressEnv = z.input<typeof IngressEnv>;

export interface IngressConfig {
  readonly natsUrl: string;
  readonly http: ServiceHttp;
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
  /** The log and the bus streams, with the subjects the bus streams capture. */
  readonly streams: ServiceStreams & { readonly subjects: BusStreamSubjects };
  readonly freshnessSeconds: number;
  readonly maxIngressBytes: number;
  readonly principalId: string;
  readonly stepMaxAttempts: number;
  readonly consumer: { readonly maxDeliver: number; readonly ackWaitMs: number };
}

/** Reads the environment (or `env`), failing fast with every offending variable (RUNTIME_CONFIG_INVALID). */
export function loadIngressConfig(env: Record<string, string | undefined> = process.env): IngressConfig {
  const e = loadConfig('ingress', IngressEnv, env);
  const subjects = serviceSubjects(e);
  return {
    natsUrl: e.WRIT_NATS_URL,
    http: serviceHttp(e),
    subjectRoot: subjects.root,
    subjects: {
      ingressActions: subjects.ingressActions,
      ingressAction: subjects.ingressAction,
      submitAction: subjects.commands.ingressSubmitAction,
      deadLetter: subjects.deadLetter('ingress', patternToken(subjects.ingressActions)),
    },
    streams: { ...serviceStreams(e), subjects: subjects.streams },
    freshnessSeconds: e.WRIT_INGRESS_FRESHNESS_SECONDS,
    maxIngressBytes: e.WRIT_INGRESS_MAX_BYTES,
    principalId: e.WRIT_INGRESS_PRINCIPAL_ID,
    stepMaxAttempts: e.WRIT_STEP_MAX_ATTEMPTS,
    consumer: { maxDeliver: e.WRIT_INGRESS_MAX_DELIVER, ackWaitMs: e.WRIT_INGRESS_ACK_WAIT_MS },
  };
}
