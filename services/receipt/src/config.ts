import { COMMANDS, Id } from '@writ/contracts';
import { loadConfig } from '@writ/runtime';
import { z } from 'zod';

/** Dot-separated subject tokens without wildcards: `writ`, `t_1a2b.writ`. */
const SubjectRoot = z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be dot-separated subject tokens without wildcards');
const StreamName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"');
const Port = z.coerce.number().int().min(0).max(65_535);
const Bytes = z.coerce.number().int().min(1);

/**
 * The receipt service's environment (docs/governed-path.md, step 6). Every
 * subject derives from `WRIT_SUBJECT_ROOT`, so a test runs the real service on
 * its own subjects and streams.
 */
export const ReceiptEnvironment = z
  .object({
    WRIT_NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
    WRIT_HTTP_PORT: Port.default(8086),
    WRIT_HTTP_HOST: z.string().min(1).default('0.0.0.0'),
    /** Replaces the leading `writ` of every subject: `<root>.cmd.receipt.issue`, `<root>.evt.task.<id>`. */
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
    WRIT_RECEIPT_PRINCIPAL_ID: Id.default('writ-receipt'),
    /** Private Ed25519 JWK (mode 0600), generated on first start. */
    WRIT_RECEIPT_KEY_FILE: z.string().min(1).default('/var/lib/writ/keys/receipt.jwk.json'),
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
      principalId: env.WRIT_RECEIPT_PRINCIPAL_ID,
      keyFile: env.WRIT_RECEIPT_KEY_FILE,
    };
  });
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

/** `writ.cmd.receipt.issue` → `<root>.cmd.receipt.issue`. */
export function rooted(subject: string, root: string): string {
  return subject.startsWith('writ.') ? `${root}.${subject.slice('writ.'.length)}` : subject;
}

export function receiptSubjects(root: string): ReceiptSubjects {
  return {
    issue: rooted(COMMANDS.receiptIssue, root),
    ingress: `${root}.ingress.>`,
    commands: `${root}.cmd.>`,
    dlq: `${root}.dlq.>`,
    deadLetter: (verb) => `${root}.dlq.receipt.${verb}`,
  };
}
