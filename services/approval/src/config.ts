import { COMMANDS, Id } from '@writ/contracts';
import { loadConfig } from '@writ/runtime';
import { z } from 'zod';

/** Dot-separated subject tokens without wildcards: `writ`, `t_1a2b.writ`. */
const SubjectRoot = z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be dot-separated subject tokens without wildcards');
const StreamName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"');
const Port = z.coerce.number().int().min(0).max(65_535);
const Bytes = z.coerce.number().int().min(1);
const Seconds = (max: number) => z.coerce.number().int().min(1).max(max);

/**
 * The approval service's environment (docs/governed-path.md, step 4). Every
 * subject derives from `WRIT_SUBJECT_ROOT`, so a test runs the real service on
 * its own subjects and streams.
 */
export const ApprovalEnvironment = z
  .object({
    WRIT_NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
    WRIT_HTTP_PORT: Port.default(8084),
    WRIT_HTTP_HOST: z.string().min(1).default('0.0.0.0'),
    /** Replaces the leading `writ` of every subject: `<root>.cmd.approval.request`, `<root>.evt.task.<id>`. */
    WRIT_SUBJECT_ROOT: SubjectRoot.default('writ'),
    WRIT_EVENTS_STREAM: StreamName.default('WRIT_EVENTS'),
    /** Default `<root>.evt`. */
    WRIT_EVENTS_PREFIX: SubjectRoot.optional(),
    WRIT_INGRESS_STREAM: StreamName.default('WRIT_INGRESS'),
    WRIT_COMMANDS_STREAM: StreamName.default('WRIT_COMMANDS'),
    WRIT_DLQ_STREAM: StreamName.default('WRIT_DLQ'),
    /** 1 on a single server; 3 in a cluster. */
    WRIT_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
    /** Byte bound of the event log; default the event store's (10 GiB). */
    WRIT_EVENTS_MAX_BYTES: Bytes.optional(),
    /** Byte bound of each bus stream; default the runtime's (1 GiB). */
    WRIT_BUS_MAX_BYTES: Bytes.optional(),
    WRIT_APPROVAL_PRINCIPAL_ID: Id.default('writ-approval'),
    /** Private Ed25519 JWK (mode 0600), generated on first start. */
    WRIT_APPROVAL_KEY_FILE: z.string().min(1).default('/var/lib/writ/keys/approval.jwk.json'),
    /** How long an approval request stays open. */
    WRIT_APPROVAL_TTL_SECONDS: Seconds(30 * 24 * 3600).default(3600),
    /** How long a minted grant is valid. */
    WRIT_GRANT_TTL_SECONDS: Seconds(24 * 3600).default(300),
    /** The executor pool that must accept the grants (`aud`). */
    WRIT_GRANT_AUDIENCE: z.string().regex(/^[a-z][a-z0-9_]*(?:[.-][a-z0-9_]+)*$/).default('writ-executor'),
    /** How long one state-witness observation (`<root>.qry.executor.observe`) may take before the executor counts as unavailable. */
    WRIT_APPROVAL_OBSERVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  })
  .transform((env) => {
    const root = env.WRIT_SUBJECT_ROOT;
    return {
      natsUrl: env.WRIT_NATS_URL,
      http: { port: env.WRIT_HTTP_PORT, host: env.WRIT_HTTP_HOST },
      subjectRoot: root,
      streams: {
        events: env.WRIT_EVENTS_STREAM,
        eventsPrefix: env.WRIT_EVENTS_PREFIX ?? `${root}.evt`,
        ingress: env.WRIT_INGRESS_STREAM,
        commands: env.WRIT_COMMANDS_STREAM,
        dlq: env.WRIT_DLQ_STREAM,
        replicas: env.WRIT_STREAM_REPLICAS,
        eventsMaxBytes: env.WRIT_EVENTS_MAX_BYTES,
        busMaxBytes: env.WRIT_BUS_MAX_BYTES,
      },
      principalId: env.WRIT_APPROVAL_PRINCIPAL_ID,
      keyFile: env.WRIT_APPROVAL_KEY_FILE,
      approvalTtlSeconds: env.WRIT_APPROVAL_TTL_SECONDS,
      grantTtlSeconds: env.WRIT_GRANT_TTL_SECONDS,
      grantAudience: env.WRIT_GRANT_AUDIENCE,
      observeTimeoutMs: env.WRIT_APPROVAL_OBSERVE_TIMEOUT_MS,
    };
  });
export type ApprovalConfig = z.output<typeof ApprovalEnvironment>;

/** Reads the config from `env` (default `process.env`); fails fast with RUNTIME_CONFIG_INVALID listing every bad variable. */
export function loadApprovalConfig(env: Record<string, string | undefined> = process.env): ApprovalConfig {
  return loadConfig('approval', ApprovalEnvironment, env);
}

/** The subjects the service uses, derived from the root (the constants' leading `writ` replaced). */
export interface ApprovalSubjects {
  readonly request: string;
  /** Request/reply on `<root>.qry.approval.resolve`: core NATS, never captured by a stream. */
  readonly resolve: string;
  readonly issueGrant: string;
  /** The executor's read-only workspace observation (request/reply), for the state witness. */
  readonly observe: string;
  readonly ingress: string;
  readonly commands: string;
  readonly dlq: string;
  /** Dead-letter subject of one handler: `<root>.dlq.approval.<verb>`. */
  readonly deadLetter: (verb: string) => string;
}

/**
 * The executor's observation query (its README, "State-witness observation"). Not in
 * `COMMANDS` yet (proposed contracts change), so named here.
 */

/** `writ.cmd.approval.request` → `<root>.cmd.approval.request`. */
export function rooted(subject: string, root: string): string {
  return subject.startsWith('writ.') ? `${root}.${subject.slice('writ.'.length)}` : subject;
}

export function approvalSubjects(root: string): ApprovalSubjects {
  return {
    request: rooted(COMMANDS.approvalRequest, root),
    resolve: rooted(COMMANDS.approvalResolve, root),
    issueGrant: rooted(COMMANDS.approvalIssueGrant, root),
    observe: rooted(COMMANDS.executorObserve, root),
    ingress: `${root}.ingress.>`,
    commands: `${root}.cmd.>`,
    dlq: `${root}.dlq.>`,
    deadLetter: (verb) => `${root}.dlq.approval.${verb}`,
  };
}
