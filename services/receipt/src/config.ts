import { Id } from '@writ/contracts';
import { loadConfig, serviceEnvironment, serviceHttp, serviceStreams, writSubjects } from '@writ/runtime';
import { z } from 'zod';

/**
 * The receipt service's environment (docs/governed-path.md, step 6): the
 * variables every service reads (`@writ/runtime`'s `serviceEnvironment`, HTTP
 * port 8086) and its own. Every subject derives from `WRIT_SUBJECT_ROOT`, so a
 * test runs the real service on its own subjects and streams.
 */
export const ReceiptEnvironment = serviceEnvironment({ httpPort: 8086 })
  .extend({
    WRIT_RECEIPT_PRINCIPAL_ID: Id.default('writ-receipt'),
    /** Private Ed25519 JWK (mode 0600), generated on first start. */
    WRIT_RECEIPT_KEY_FILE: z.string().min(1).default('/var/lib/writ/keys/receipt.jwk.json'),
  })
  .transform((env) => ({
    natsUrl: env.WRIT_NATS_URL,
    http: serviceHttp(env),
    subjectRoot: env.WRIT_SUBJECT_ROOT,
    streams: serviceStreams(env),
    principalId: env.WRIT_RECEIPT_PRINCIPAL_ID,
    keyFile: env.WRIT_RECEIPT_KEY_FILE,
  }));
export type ReceiptConfig = z.output<typeof ReceiptEnvironment>;

/** Reads the config from `env` (default `process.env`); fails fast with RUNTIME_CONFIG_INVALID listing every bad variable. */
export function loadReceiptConfig(env: Record<string, string | undefined> = process.env): ReceiptConfig {
  return loadConfig('receipt', ReceiptEnvironment, env);
}

/** The subjects the service uses, derived from the root (the constants' leading `writ` replaced). */
export interface ReceiptSubjects {
  readonly issue: string;
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
    ...subjects.streams,
    deadLetter: (verb) => subjects.deadLetter('receipt', verb),
  };
}
