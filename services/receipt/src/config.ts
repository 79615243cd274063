import { Id } from '@writ/contracts';
import { envInt, loadConfig, serviceEnvironment, serviceHttp, serviceStreams, writSubjects } from '@writ/runtime';
import { z } from 'zod';

/**
 * The receipt service's environment (docs/governed-path.md, step 6): the
 * variables every service reads (`@writ/runtime`'s `serviceEnvironment`, HTTP
 * port 8086) and its own. Every subject derives from `WRIT_SUBJECT_ROOT`, so a
 * test runs the real service on its own subjects and streams.
 */
export const ReceiptEnvironment = serviceEnvironment({ httpPort: 8086 })
  .extend({
    /** The service's principal: registered with its signing key at start; receipts and tree heads verify under its keys. */
    WRIT_RECEIPT_PRINCIPAL_ID: Id.default('writ-receipt'),
    /** The deployment's trust anchor (writ init's trust-anchor.json): each director's registration must chain to it. */
    WRIT_TRUST_ANCHOR: z.string().min(1).optional(),
    /** The single private key file of older releases: migrated into the key directory on its first start (the file is left in place). */
    WRIT_RECEIPT_KEY_FILE: z.string().min(1).default('/var/lib/writ/keys/receipt.jwk.json'),
    /** The rotating keyring: `<kid>.jwk.json` (0600) and `keyring.json`; replicas may share it. Default: the key file's path without `.jwk.json`. */
    WRIT_RECEIPT_KEY_DIR: z.string().min(1).optional(),
    /** How long a key replaced by a rotation stays valid before `principal.key_revoked`: receipts and heads it signed in flight, replicas still switching. */
    WRIT_RECEIPT_KEY_RETIRE_SECONDS: envInt(1, 30 * 86_400).default(300),
    /** How often replaced keys are checked for retirement, and a rotation made by a replica sharing the key directory taken up (also at start). */
    WRIT_RECEIPT_KEY_CHECK_SECONDS: envInt(1, 3_600).default(30),
    /** How far a signed rotation's `requested_at` may be from the service's clock. */
    WRIT_RECEIPT_FRESHNESS_SECONDS: envInt(1, 3_600).default(300),
    /** `<root>.cmd.receipt.issue` commands handled at once by this process; commands of one task still run one at a time. */
    WRIT_RECEIPT_CONCURRENCY: envInt(1, 256).default(16),
    /** The receipt transparency log's id: its events go to `<prefix>.transparency_log.<id>`. */
    WRIT_TLOG_ID: Id.default('writ-receipts'),
    /** How often a signed tree head is published when the log grew since the last one. */
    WRIT_TLOG_STH_INTERVAL_MS: envInt(100, 86_400_000).default(10_000),
  })
  // A replica sharing the key directory signs with the replaced key until its next check: the key must still be valid then.
  .refine((env) => env.WRIT_RECEIPT_KEY_RETIRE_SECONDS >= 2 * env.WRIT_RECEIPT_KEY_CHECK_SECONDS, {
    message: 'must be at least twice WRIT_RECEIPT_KEY_CHECK_SECONDS (replicas switch keys at their next check)',
    path: ['WRIT_RECEIPT_KEY_RETIRE_SECONDS'],
  })
  .transform((env) => ({
    natsUrl: env.WRIT_NATS_URL,
    http: serviceHttp(env),
    subjectRoot: env.WRIT_SUBJECT_ROOT,
    streams: serviceStreams(env),
    principalId: env.WRIT_RECEIPT_PRINCIPAL_ID,
    trustAnchorFile: env.WRIT_TRUST_ANCHOR,
    keyFile: env.WRIT_RECEIPT_KEY_FILE,
    keys: {
      dir: env.WRIT_RECEIPT_KEY_DIR ?? env.WRIT_RECEIPT_KEY_FILE.replace(/(\.jwk)?\.json$/, ''),
      retireAfterSeconds: env.WRIT_RECEIPT_KEY_RETIRE_SECONDS,
      checkIntervalMs: env.WRIT_RECEIPT_KEY_CHECK_SECONDS * 1000,
      freshnessSeconds: env.WRIT_RECEIPT_FRESHNESS_SECONDS,
    },
    concurrency: env.WRIT_RECEIPT_CONCURRENCY,
    tlog: { logId: env.WRIT_TLOG_ID, treeHeadIntervalMs: env.WRIT_TLOG_STH_INTERVAL_MS },
  }));
export type ReceiptConfig = z.output<typeof ReceiptEnvironment>;

/** Reads the config from `env` (default `process.env`); fails fast with RUNTIME_CONFIG_INVALID listing every bad variable. */
export function loadReceiptConfig(env: Record<string, string | undefined> = process.env): ReceiptConfig {
  return loadConfig('receipt', ReceiptEnvironment, env);
}

/** The subjects the service uses, derived from the root (the constants' leading `writ` replaced). */
export interface ReceiptSubjects {
  readonly issue: string;
  /** `<root>.qry.receipt.tree-head`, `.inclusion-proof`, `.consistency-proof` (request/reply). */
  readonly treeHead: string;
  readonly inclusionProof: string;
  readonly consistencyProof: string;
  /** `<root>.qry.receipt.rotate-key` (request/reply): a director's signed rotation of the service's key. */
  readonly rotateKey: string;
  readonly ingress: string;
  readonly commands: string;
  readonly dlq: string;
  /** Dead-letter subject of one handler: `<root>.dlq.receipt.<verb>`. */
  readonly deadLetter: (verb: string) => string;
}

export function receiptSubjects(root: string): ReceiptSubjects {
  const subjects = writSubjects(root);
  return {
    issue: subjects.commands.receiptIssue,
    treeHead: subjects.commands.receiptTreeHead,
    inclusionProof: subjects.commands.receiptInclusionProof,
    consistencyProof: subjects.commands.receiptConsistencyProof,
    rotateKey: subjects.commands.receiptRotateKey,
    ...subjects.streams,
    deadLetter: (verb) => subjects.deadLetter('receipt', verb),
  };
}
