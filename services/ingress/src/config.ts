import { readFileSync } from 'node:fs';
import { COMMANDS, Id, MAX_INGRESS_BYTES, toContractIssues } from '@writ/contracts';
import { durableName, patternToken } from '@writ/bus';
import { ParticipantCeilings, type LocalInstall } from '@writ/kernel';
import {
  RuntimeError,
  artifactVariables,
  atLeast,
  busConsumerSettings,
  busConsumerVariables,
  envInt,
  loadConfig,
  renamedVariable,
  rooted,
  serviceEnvironment,
  serviceHttp,
  serviceStreams,
  serviceSubjects,
  type BusStreamSubjects,
  type ServiceHttp,
  type ServiceStreams,
} from '@writ/runtime';
import { z } from 'zod';

const MiB = 1024 ** 2;

const common = serviceEnvironment({ httpPort: 8081 });

/**
 * The environment ingress reads, with its defaults (docs in the service README):
 * the variables every service reads (`@writ/runtime`'s `serviceEnvironment`,
 * HTTP port 8081), the consumer tuning of its durables (`busConsumerVariables`)
 * and its own. Every subject derives from `WRIT_SUBJECT_ROOT`, every stream
 * name is overridable, so a test runs a real ingress on its own streams and
 * subjects.
 */
export const IngressEnv = common.extend({
  /** At least 1 MiB, one message at the log's size limit: ingress records each request it receives whole (raw and normalized text), so a smaller bound could refuse its largest. */
  WRIT_EVENTS_MAX_BYTES: atLeast(common.shape.WRIT_EVENTS_MAX_BYTES, MiB),
  /** At least 1 MiB, one message at the bus streams' size limit: the ingress stream holds each signed request whole until ingress has recorded it. */
  WRIT_BUS_MAX_BYTES: atLeast(common.shape.WRIT_BUS_MAX_BYTES, MiB),
  ...busConsumerVariables,
  /** How far `proposed_at` may lie from the time ingress received the request. */
  WRIT_INGRESS_FRESHNESS_SECONDS: envInt(1, 86_400).default(300),
  /** Largest signed request accepted, in bytes; at most the contract's MAX_INGRESS_BYTES. */
  WRIT_INGRESS_MAX_BYTES: envInt(1, MAX_INGRESS_BYTES).default(MAX_INGRESS_BYTES),
  /** The principal id ingress appends as (`actor_id` of its events). */
  WRIT_INGRESS_PRINCIPAL_ID: Id.default('ingress'),
  /** `max_attempts` of the step each action opens (retries are new attempts, by the orchestrator). */
  WRIT_STEP_MAX_ATTEMPTS: envInt(1, 100).default(3),
  /** Former name of WRIT_BUS_MAX_DELIVER in ingress: refused rather than read, so its consumer is never tuned half under each name. */
  WRIT_INGRESS_MAX_DELIVER: renamedVariable('WRIT_INGRESS_MAX_DELIVER', 'WRIT_BUS_MAX_DELIVER', 'the name every service reads'),
  /** Former name of WRIT_BUS_ACK_WAIT_MS in ingress: refused rather than read, so its consumer is never tuned half under each name. */
  WRIT_INGRESS_ACK_WAIT_MS: renamedVariable('WRIT_INGRESS_ACK_WAIT_MS', 'WRIT_BUS_ACK_WAIT_MS', 'the name every service reads'),
  /** This installation's id: a spawn manifest's `lineage.install_id` must equal it (docs/spawn-retire.md). */
  WRIT_INSTALL_ID: Id.default('writ-local'),
  /** This installation's genesis fingerprint: a spawn manifest's `lineage.genesis_fingerprint` must equal it. */
  WRIT_GENESIS_FINGERPRINT: z
    .string()
    .regex(/^[^\s\x00-\x1f\x7f]{1,256}$/, 'must be 1-256 characters without whitespace')
    .default('genesis:writ-local'),
  /** The local ceilings of participant manifests, as JSON (ParticipantCeilings); exclusive with WRIT_PARTICIPANT_CEILINGS_FILE. */
  WRIT_PARTICIPANT_CEILINGS: z.string().min(2).optional(),
  /** A JSON file holding the ceilings; exclusive with WRIT_PARTICIPANT_CEILINGS. Neither: the documented defaults. */
  WRIT_PARTICIPANT_CEILINGS_FILE: z.string().min(1).optional(),
  /** How far a seed document's own times (created_at, retired_at) may lie ahead of the service's clock. */
  WRIT_PARTICIPANT_CLOCK_SKEW_SECONDS: envInt(0, 3_600).default(300),
  /** The participant TTL timer (`<root>.cmd.ingress.participant-expire`) is held at most this long per message, then re-published (below the commands stream's max age). */
  WRIT_PARTICIPANT_EXPIRY_REFRESH_SECONDS: envInt(60, 23 * 3_600).default(12 * 3_600),
  ...artifactVariables,
  /**
   * The deployment's trust anchor (`<WRIT_HOME>/trust-anchor.json`, from `writ init`): the
   * first operator and its public keys. Without it only operators already in the log can
   * register principals (on a new deployment: nobody).
   */
  WRIT_TRUST_ANCHOR: z.string().min(1).optional(),
  /** At least 1 MiB, one message at the bus streams' size limit: ingress stores each Last Will artifact and message text whole. */
  WRIT_ARTIFACTS_MAX_BYTES: atLeast(artifactVariables.WRIT_ARTIFACTS_MAX_BYTES, MiB),
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
    /** Operator-signed principal registrations: `<root>.qry.ingress.register-principal`. */
    readonly registerPrincipal: string;
    /** Operator-signed key revocations: `<root>.qry.ingress.revoke-principal`. */
    readonly revokePrincipal: string;
    /** Free-form messages (writ say), recorded then bound: `<root>.qry.ingress.submit-message`. */
    readonly submitMessage: string;
    readonly deadLetter: string;
  };
  /** The log and the bus streams, with the subjects the bus streams capture. */
  readonly streams: ServiceStreams & { readonly subjects: BusStreamSubjects };
  readonly freshnessSeconds: number;
  readonly maxIngressBytes: number;
  readonly principalId: string;
  /** `WRIT_TRUST_ANCHOR`: the file naming the first operator (read at start). */
  readonly trustAnchorFile: string | undefined;
  readonly stepMaxAttempts: number;
  /** The tuning of its durables (`WRIT_BUS_*`): the ingress action consumer's. */
  readonly consumer: ReturnType<typeof busConsumerSettings>;
  /** Spawn, heartbeat, retire and crash verification of participants (seed 002; docs/spawn-retire.md). */
  readonly seeds: SeedsConfig;
}

export interface SeedsConfig {
  readonly install: LocalInstall;
  readonly subjects: {
    readonly spawnVerify: string;
    readonly heartbeatVerify: string;
    readonly retireIngest: string;
    readonly crashReport: string;
    readonly participantCheck: string;
    /** The durable TTL timer: `<root>.cmd.ingress.participant-expire` (captured by the commands stream). */
    readonly expire: string;
    readonly expireDurable: string;
    readonly expireDeadLetter: string;
  };
  readonly expiryRefreshMs: number;
  readonly artifacts: { readonly bucket: string; readonly maxBytes: number; readonly replicas: number };
}

/** The ceilings from WRIT_PARTICIPANT_CEILINGS or the file WRIT_PARTICIPANT_CEILINGS_FILE, or the defaults. */
function participantCeilings(inline: string | undefined, file: string | undefined): ParticipantCeilings {
  const fail = (path: string, message: string): never => {
    throw new RuntimeError('RUNTIME_CONFIG_INVALID', `ingress: invalid configuration in the environment: ${path}: ${message}`, {
      details: { service: 'ingress', issues: [{ path, code: 'custom', message }] },
    });
  };
  if (inline !== undefined && file !== undefined) fail('WRIT_PARTICIPANT_CEILINGS', 'set either WRIT_PARTICIPANT_CEILINGS or WRIT_PARTICIPANT_CEILINGS_FILE, not both');
  const variable = file === undefined ? 'WRIT_PARTICIPANT_CEILINGS' : 'WRIT_PARTICIPANT_CEILINGS_FILE';
  let text = inline;
  if (file !== undefined) {
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      fail(variable, `cannot read ${file}: ${(error as Error).message}`);
    }
  }
  if (text === undefined) return ParticipantCeilings.parse({});
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    fail(variable, 'is not JSON');
  }
  const parsed = ParticipantCeilings.safeParse(json);
  if (!parsed.success) fail(variable, toContractIssues(parsed.error).map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; '));
  return parsed.data as ParticipantCeilings;
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
      registerPrincipal: subjects.commands.ingressRegisterPrincipal,
      revokePrincipal: subjects.commands.ingressRevokePrincipal,
      submitMessage: subjects.commands.ingressSubmitMessage,
      deadLetter: subjects.deadLetter('ingress', patternToken(subjects.ingressActions)),
    },
    streams: { ...serviceStreams(e), subjects: subjects.streams },
    freshnessSeconds: e.WRIT_INGRESS_FRESHNESS_SECONDS,
    maxIngressBytes: e.WRIT_INGRESS_MAX_BYTES,
    principalId: e.WRIT_INGRESS_PRINCIPAL_ID,
    trustAnchorFile: e.WRIT_TRUST_ANCHOR,
    stepMaxAttempts: e.WRIT_STEP_MAX_ATTEMPTS,
    consumer: busConsumerSettings(e),
    seeds: seedsConfig(e, subjects.root),
  };
}

function seedsConfig(e: z.output<typeof IngressEnv>, root: string): SeedsConfig {
  const expire = rooted(COMMANDS.ingressParticipantExpire, root);
  return {
    install: {
      install_id: e.WRIT_INSTALL_ID,
      genesis_fingerprint: e.WRIT_GENESIS_FINGERPRINT,
      ceilings: participantCeilings(e.WRIT_PARTICIPANT_CEILINGS, e.WRIT_PARTICIPANT_CEILINGS_FILE),
      clock_skew_seconds: e.WRIT_PARTICIPANT_CLOCK_SKEW_SECONDS,
    },
    subjects: {
      spawnVerify: rooted(COMMANDS.ingressSpawnVerify, root),
      heartbeatVerify: rooted(COMMANDS.ingressHeartbeatVerify, root),
      retireIngest: rooted(COMMANDS.ingressRetireIngest, root),
      crashReport: rooted(COMMANDS.ingressCrashReport, root),
      participantCheck: rooted(COMMANDS.ingressParticipantCheck, root),
      expire,
      expireDurable: durableName('ingress', expire),
      expireDeadLetter: `${root}.dlq.ingress.participant-expire`,
    },
    expiryRefreshMs: e.WRIT_PARTICIPANT_EXPIRY_REFRESH_SECONDS * 1_000,
    artifacts: { bucket: e.WRIT_ARTIFACTS_BUCKET, maxBytes: e.WRIT_ARTIFACTS_MAX_BYTES, replicas: e.WRIT_STREAM_REPLICAS },
  };
}
