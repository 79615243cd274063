import { WritError } from '@writ/contracts';
import { JetStreamApiError } from '@nats-io/jetstream';
import { errors as natsErrors } from '@nats-io/transport-node';
import type { ChainBreakReason } from './event-chain.js';

/** What a caller learns about each event of an append, also on a partial one. */
export type AppendedEvent = {
  readonly eventId: string;
  readonly taskSeq: number;
  readonly streamSeq: number;
  readonly hash: string;
  /** True when the log already held this event (same dedupe id) and nothing new was stored. */
  readonly duplicate: boolean;
};

/**
 * Structured details per code. Object types (not interfaces) so that each is
 * assignable to `WritError`'s `Record<string, unknown>`.
 */
export type EventStoreErrorDetails = {
  /** The aggregate moved past (or is behind) `expectedSeq`: re-read, decide again, retry. */
  EVENTSTORE_CONFLICT: {
    subject: string;
    expectedSeq: number;
    /** The aggregate's last task_seq when the conflict was observed; null if it could not be read. */
    actualSeq: number | null;
    /** Events of this append stored before the conflict (a valid chain prefix). */
    appended: readonly AppendedEvent[];
  };
  /** The stored log is not a valid chain; never append onto it or fold it silently. */
  EVENTSTORE_CHAIN_BROKEN: {
    subject: string;
    reason: ChainBreakReason;
    taskSeq: number | null;
    streamSeq: number | null;
  };
  /** The server could not be reached or gave no answer; an append's outcome is then unknown. */
  EVENTSTORE_UNAVAILABLE: {
    operation: string;
    subject?: string;
    appended?: readonly AppendedEvent[];
  };
  /** The existing stream cannot be brought to the configured shape in place. */
  EVENTSTORE_STREAM_CONFIG_MISMATCH: {
    stream: string;
    fields: readonly string[];
  };
  /** The stream refuses new writes (its byte limit, with discard `new`): nothing old was dropped. */
  EVENTSTORE_STREAM_FULL: {
    subject: string;
    appended: readonly AppendedEvent[];
  };
  EVENTSTORE_EVENT_TOO_LARGE: {
    subject: string;
    eventId: string;
    bytes: number | null;
    maxBytes: number;
  };
  /** The call itself is malformed: an empty append, two events sharing one dedupe id, an event of another entity, a bad sequence argument. */
  EVENTSTORE_REQUEST_INVALID: {
    reason: string;
  };
  EVENTSTORE_CONFIG_INVALID: {
    issues: readonly { path: string; message: string }[];
  };
  /**
   * This store's sealer is a service that may not author the event type on
   * that aggregate (`EVENT_AUTHORSHIP`): every reader would quarantine it, so
   * nothing is appended. A bug of the caller, or a table that misses a type.
   */
  EVENTSTORE_AUTHOR_NOT_ALLOWED: {
    subject: string;
    eventType: string;
    principalId: string | null;
    authors: readonly string[] | 'self';
  };
};

export type EventStoreErrorCode = keyof EventStoreErrorDetails;

export class EventStoreError<C extends EventStoreErrorCode = EventStoreErrorCode> extends WritError<C> {
  declare readonly details: Readonly<EventStoreErrorDetails[C]>;

  constructor(code: C, message: string, details: EventStoreErrorDetails[C], cause?: unknown) {
    super(code, message, { cause, details });
    this.name = 'EventStoreError';
  }
}

/**
 * Narrows by code, not `instanceof`: errors cross package copies and process
 * boundaries, where class identity does not survive.
 */
export function isEventStoreError<C extends EventStoreErrorCode>(error: unknown, ...codes: C[]): error is EventStoreError<C> {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('EVENTSTORE_')) return false;
  return codes.length === 0 || (codes as string[]).includes(code);
}

/** JetStream API error codes the store branches on (nats-server `errors.json`). */
export const JS_WRONG_LAST_SEQUENCE = 10071;
/** JetStream API code: the consumer does not exist (an ephemeral one the server reaped when idle). */
export const JS_CONSUMER_NOT_FOUND = 10014;
const JS_STREAM_NOT_FOUND = 10059;
const JS_MAXIMUM_BYTES_EXCEEDED = 10077;
const JS_MAXIMUM_MESSAGES_EXCEEDED = 10076;
const JS_INSUFFICIENT_RESOURCES = 10023;
const JS_STORAGE_RESOURCES_EXCEEDED = 10047;
const JS_MESSAGE_SIZE_EXCEEDS_MAXIMUM = 10054;

export function jetStreamApiCode(error: unknown): number | null {
  return error instanceof JetStreamApiError ? error.code : null;
}

/**
 * The one mapping table from NATS client failures to store codes, used around
 * every call into the client so nothing untyped leaves the public API.
 */
export function fromNatsError(
  error: unknown,
  context: { operation: string; subject?: string; eventId?: string; maxMsgSize?: number; appended?: readonly AppendedEvent[] },
): EventStoreError {
  if (isEventStoreError(error)) return error;
  const subject = context.subject ?? '';
  const appended = context.appended ?? [];
  const apiCode = jetStreamApiCode(error);
  if (apiCode === JS_MAXIMUM_BYTES_EXCEEDED || apiCode === JS_MAXIMUM_MESSAGES_EXCEEDED || apiCode === JS_STORAGE_RESOURCES_EXCEEDED || apiCode === JS_INSUFFICIENT_RESOURCES) {
    return new EventStoreError('EVENTSTORE_STREAM_FULL', `the event stream refuses new writes on ${subject}: ${describe(error)}`, { subject, appended }, error);
  }
  if (apiCode === JS_MESSAGE_SIZE_EXCEEDS_MAXIMUM || error instanceof natsErrors.InvalidArgumentError && /payload/i.test(error.message)) {
    return new EventStoreError(
      'EVENTSTORE_EVENT_TOO_LARGE',
      `event ${context.eventId ?? '?'} exceeds the maximum message size`,
      { subject, eventId: context.eventId ?? '', bytes: null, maxBytes: context.maxMsgSize ?? -1 },
      error,
    );
  }
  const reason =
    apiCode === JS_STREAM_NOT_FOUND
      ? 'the event stream does not exist'
      : isNoResponders(error)
        ? 'no stream answers on this subject (stream missing or JetStream off)'
        : describe(error);
  const details: EventStoreErrorDetails['EVENTSTORE_UNAVAILABLE'] = { operation: context.operation };
  if (context.subject !== undefined) details.subject = context.subject;
  if (context.appended !== undefined) details.appended = context.appended;
  return new EventStoreError('EVENTSTORE_UNAVAILABLE', `${context.operation} failed: ${reason}`, details, error);
}

/** The client reports a publish nobody answers as "JetStream not enabled", with the no-responders error as its cause. */
function isNoResponders(error: unknown): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    if (current instanceof natsErrors.NoRespondersError) return true;
    if (current instanceof natsErrors.RequestError && current.isNoResponders()) return true;
  }
  return false;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
