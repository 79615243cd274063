import { COMMANDS, Id } from '@writ/contracts';
import { StreamName, artifactVariables, envInt, loadConfig, serviceEnvironment, serviceHttp, serviceStreams } from '@writ/runtime';
import { z } from 'zod';

const Seconds = (max: number) => envInt(1, max);

/**
 * The approval service's environment (docs/governed-path.md, step 4): the
 * variables every service reads (`@writ/runtime`'s `serviceEnvironment`, HTTP
 * port 8084) and its own. Every subject derives from `WRIT_SUBJECT_ROOT`, so a
 * test runs the real service on its own subjects and streams.
 */
export const ApprovalEnvironment = serviceEnvironment({ httpPort: 8084 })
  .extend({
    /** The service's principal: registered with its signing key at start, `actor_id` of its events, `iss` of the grants it mints. */
    WRIT_APPROVAL_PRINCIPAL_ID: Id.default('writ-approval'),
    /** The deployment's trust anchor (writ init's trust-anchor.json): each director's registration must chain to it. */
    WRIT_TRUST_ANCHOR: z.string().min(1).optional(),
    /** The single private key file of older releases: migrated into the key directory on first start. */
    WRIT_APPROVAL_KEY_FILE: z.string().min(1).default('/var/lib/writ/keys/approval.jwk.json'),
    /** The rotating keyring: `<kid>.jwk.json` (0600) and `keyring.json`. Default: the key file's path without `.jwk.json` (`/var/lib/writ/keys/approval`). */
    WRIT_APPROVAL_KEY_DIR: z.string().min(1).optional(),
    /** Added to WRIT_GRANT_TTL_SECONDS to give a replaced key's last grants their full life (clock skew, the rotation itself). */
    WRIT_APPROVAL_KEY_RETIRE_SKEW_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
    /** How often replaced keys are checked for retirement (also at every start). */
    WRIT_APPROVAL_KEY_CHECK_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
    /** How far a signed revocation's `revoked_at` (or a rotation's `requested_at`) may be from the service's clock. */
    WRIT_APPROVAL_FRESHNESS_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
    /** How long an approval request stays open. */
    WRIT_APPROVAL_TTL_SECONDS: Seconds(30 * 24 * 3600).default(3600),
    /**
     * The expiry timer (`<root>.cmd.approval.expire`) is held on the server at most this long per
     * message, then re-published: below the commands stream's max age (1 day), so a timer of any
     * approval TTL outlives the stream's retention. Default 12 h.
     */
    WRIT_APPROVAL_EXPIRY_REFRESH_SECONDS: Seconds(23 * 3600).default(12 * 3600),
    ...artifactVariables,
    /** The policy service's profile KV bucket, read (never written) to compare profile versions at grant time. */
    WRIT_POLICY_BUCKET: StreamName.default('WRIT_POLICY'),
    /** How long a minted grant is valid. */
    WRIT_GRANT_TTL_SECONDS: Seconds(24 * 3600).default(300),
    /** The executor pool that must accept the grants (`aud`). */
    WRIT_GRANT_AUDIENCE: z.string().regex(/^[a-z][a-z0-9_]*(?:[.-][a-z0-9_]+)*$/).default('writ-executor'),
    /** How long one state-witness observation (`<root>.qry.executor.observe`) may take before the executor counts as unavailable. */
    WRIT_APPROVAL_OBSERVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
    /** How long a request waits for an executor to observe the workspace (one restarting) before the command fails and the bus retries it. */
    WRIT_APPROVAL_WITNESS_WAIT_SECONDS: z.coerce.number().int().min(0).max(3_600).default(300),
  })
  .transform((env) => {
    return {
      natsUrl: env.WRIT_NATS_URL,
      http: serviceHttp(env),
      subjectRoot: env.WRIT_SUBJECT_ROOT,
      streams: serviceStreams(env),
      principalId: env.WRIT_APPROVAL_PRINCIPAL_ID,
      trustAnchorFile: env.WRIT_TRUST_ANCHOR,
      keyFile: env.WRIT_APPROVAL_KEY_FILE,
      keyDir: env.WRIT_APPROVAL_KEY_DIR ?? env.WRIT_APPROVAL_KEY_FILE.replace(/(\.jwk)?\.json$/, ''),
      keyRetireSkewSeconds: env.WRIT_APPROVAL_KEY_RETIRE_SKEW_SECONDS,
      keyCheckIntervalMs: env.WRIT_APPROVAL_KEY_CHECK_SECONDS * 1000,
      freshnessSeconds: env.WRIT_APPROVAL_FRESHNESS_SECONDS,
      approvalTtlSeconds: env.WRIT_APPROVAL_TTL_SECONDS,
      expiryRefreshMs: env.WRIT_APPROVAL_EXPIRY_REFRESH_SECONDS * 1000,
      artifacts: { bucket: env.WRIT_ARTIFACTS_BUCKET, maxBytes: env.WRIT_ARTIFACTS_MAX_BYTES },
      policyBucket: env.WRIT_POLICY_BUCKET,
      grantTtlSeconds: env.WRIT_GRANT_TTL_SECONDS,
      grantAudience: env.WRIT_GRANT_AUDIENCE,
      observeTimeoutMs: env.WRIT_APPROVAL_OBSERVE_TIMEOUT_MS,
      witnessWaitMs: env.WRIT_APPROVAL_WITNESS_WAIT_SECONDS * 1000,
      consumerStall: { afterMs: env.WRIT_CONSUMER_STALL_SECONDS * 1000, checkMs: env.WRIT_CONSUMER_STALL_CHECK_MS },
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
  /** Durable: the orchestrator's cancellation of a pending approval (task ended, input drift). */
  readonly cancel: string;
  /** Durable: the service's own expiry timer, held on the server until `expires_at`. */
  readonly expire: string;
  /** Request/reply: a director's signed revocation of a grant. */
  readonly revokeGrant: string;
  /** Request/reply: a director's signed request to rotate the service's signing key. */
  readonly rotateKey: string;
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
    cancel: rooted(COMMANDS.approvalCancel, root),
    expire: rooted(COMMANDS.approvalExpire, root),
    revokeGrant: rooted(COMMANDS.approvalRevokeGrant, root),
    rotateKey: rooted(COMMANDS.approvalRotateKey, root),
    observe: rooted(COMMANDS.executorObserve, root),
    ingress: `${root}.ingress.>`,
    commands: `${root}.cmd.>`,
    dlq: `${root}.dlq.>`,
    deadLetter: (verb) => `${root}.dlq.approval.${verb}`,
  };
}
