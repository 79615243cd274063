import { createHash } from 'node:crypto';
import { headers as natsHeaders } from '@nats-io/transport-node';
import type { QuarantineReason, QuarantineRecord } from '@writ/contracts';
import type { JetStreamClient, PubAck } from '@nats-io/jetstream';
import { injectTraceContext, redactString } from '@writ/telemetry';
import type { DeadLetterKind } from './ack-policy.js';
import type { HandlerFailure } from './handler-failure.js';

/**
 * Headers of a dead letter. The body is the original payload, byte for byte,
 * so a letter can be inspected and republished to `Writ-Dlq-Subject` as is.
 */
export const DeadLetterHeaders = {
  /** `terminal` (the error can never succeed) or `exhausted` (retries used up). */
  REASON: 'Writ-Dlq-Reason',
  ERROR_CODE: 'Writ-Dlq-Error-Code',
  /** Redacted, single line, at most 1 KiB. */
  ERROR_MESSAGE: 'Writ-Dlq-Error-Message',
  DELIVERY_COUNT: 'Writ-Dlq-Delivery-Count',
  SUBJECT: 'Writ-Dlq-Subject',
  STREAM: 'Writ-Dlq-Stream',
  STREAM_SEQ: 'Writ-Dlq-Stream-Seq',
  CONSUMER: 'Writ-Dlq-Consumer',
  SERVICE: 'Writ-Dlq-Service',
  /** The original `Nats-Msg-Id` (idempotency key), when there was one. */
  MSG_ID: 'Writ-Dlq-Msg-Id',
  FAILED_AT: 'Writ-Dlq-Failed-At',
} as const;

export interface DeadLetterInput {
  readonly deadLetterSubject: string;
  readonly kind: DeadLetterKind;
  readonly failure: HandlerFailure;
  readonly deliveryCount: number;
  readonly subject: string;
  readonly stream: string;
  readonly streamSequence: number;
  readonly consumer: string;
  readonly service: string;
  readonly msgId: string | undefined;
  readonly failedAt: Date;
  /** The original message's headers (name → values). */
  readonly originalHeaders: Iterable<[string, string[]]>;
}

export interface DeadLetter {
  readonly subject: string;
  /** Dedupe id for the letter itself: a retried dead-lettering stores one letter, not two. */
  readonly msgId: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
}

const MAX_HEADER_VALUE = 1024;

/** Header values cannot hold CR/LF; secrets never leave in a reason. */
export function headerSafe(value: string): string {
  return redactString(value).replace(/[\r\n]+/g, ' ').slice(0, MAX_HEADER_VALUE);
}

/** Original headers that must not be copied: server directives (`Nats-*`) and the old trace position. */
function isCopyable(name: string): boolean {
  const lower = name.toLowerCase();
  return !lower.startsWith('nats-') && lower !== 'traceparent' && lower !== 'tracestate';
}

/** Builds the dead letter for a failed message (pure). */
export function buildDeadLetter(input: DeadLetterInput): DeadLetter {
  const headers: Array<readonly [string, string]> = [];
  for (const [name, values] of input.originalHeaders) {
    if (!isCopyable(name)) continue;
    for (const value of values) headers.push([name, value]);
  }
  const reason: Array<readonly [string, string]> = [
    [DeadLetterHeaders.REASON, input.kind],
    [DeadLetterHeaders.ERROR_CODE, headerSafe(input.failure.code)],
    [DeadLetterHeaders.ERROR_MESSAGE, headerSafe(input.failure.message)],
    [DeadLetterHeaders.DELIVERY_COUNT, String(input.deliveryCount)],
    [DeadLetterHeaders.SUBJECT, input.subject],
    [DeadLetterHeaders.STREAM, input.stream],
    [DeadLetterHeaders.STREAM_SEQ, String(input.streamSequence)],
    [DeadLetterHeaders.CONSUMER, input.consumer],
    [DeadLetterHeaders.SERVICE, input.service],
    [DeadLetterHeaders.FAILED_AT, input.failedAt.toISOString()],
  ];
  if (input.msgId !== undefined) reason.push([DeadLetterHeaders.MSG_ID, headerSafe(input.msgId)]);
  return {
    subject: input.deadLetterSubject,
    msgId: `dlq:${input.stream}:${input.streamSequence}:${input.consumer}`,
    headers: [...headers, ...reason],
  };
}

/**
 * Stores a dead letter through JetStream (a stream must capture the
 * dead-letter subject) and waits for the server's ack, so the original is
 * only `term()`ed once its letter is durable. Carries the active trace
 * context, so the letter sits in the same trace as the failed handling.
 */
export async function publishDeadLetter(js: JetStreamClient, letter: DeadLetter, body: Uint8Array): Promise<PubAck> {
  const headers = natsHeaders();
  for (const [name, value] of letter.headers) headers.append(name, value);
  injectTraceContext(headers);
  return js.publish(letter.subject, body, { msgID: letter.msgId, headers });
}

/**
 * The handler failures that mean the message itself is junk for its subject
 * (invariant 10): its dead letter is its quarantine, with this reason.
 */
const QUARANTINE_BY_CODE: Readonly<Record<string, QuarantineReason>> = {
  BUS_PAYLOAD_INVALID: 'QUARANTINE_NOT_JSON',
  CONTRACT_INVALID: 'QUARANTINE_NOT_ENVELOPE',
};

/** The quarantine record of a message dead-lettered at once for what it is (never the bytes: only their SHA-256), or undefined for any other failure. */
export function quarantineOf(input: Pick<DeadLetterInput, 'kind' | 'failure' | 'stream' | 'subject' | 'streamSequence'>, body: Uint8Array): QuarantineRecord | undefined {
  const reason = input.kind === 'terminal' ? QUARANTINE_BY_CODE[input.failure.code] : undefined;
  if (reason === undefined) return undefined;
  return {
    stream: input.stream,
    subject: input.subject,
    stream_seq: input.streamSequence,
    reason,
    sha256: createHash('sha256').update(body).digest('hex'),
    bytes: body.byteLength,
    detail: headerSafe(`dead-lettered (${input.failure.code}): ${input.failure.message}`).slice(0, 500),
  };
}
