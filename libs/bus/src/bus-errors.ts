import { WritError } from '@writ/contracts';

export type BusErrorCode =
  /** Options rejected at construction or listen (service name, numbers out of range). */
  | 'BUS_CONFIG_INVALID'
  /** A handler pattern is not a usable NATS subject (object patterns, spaces, `>` not last). */
  | 'BUS_PATTERN_INVALID'
  /** No stream captures a subject (at bind time, or on publish). */
  | 'BUS_STREAM_NOT_FOUND'
  /** A pattern's subjects span several streams; name the stream explicitly. */
  | 'BUS_STREAM_AMBIGUOUS'
  /** The durable consumer could not be created or updated. */
  | 'BUS_CONSUMER_SETUP_FAILED'
  /** A pull from a durable failed (consumer or stream deleted, connection down); the loop backs off and retries. */
  | 'BUS_PULL_FAILED'
  /** NATS could not be reached or the connection closed under us. */
  | 'BUS_CONNECTION_FAILED'
  /** A credential variable (`WRIT_NATS_CREDS`, `WRIT_NATS_NKEY`, TLS files) names a file that cannot be used. */
  | 'BUS_CREDENTIALS_INVALID'
  /** A message body is not JSON (or a payload cannot be encoded as JSON); terminal. */
  | 'BUS_PAYLOAD_INVALID'
  /** A handler failed without a Writ error code (a bug, or `BusExceptionFilter` is not installed). */
  | 'BUS_HANDLER_FAILED'
  /** A message arrived after its handled attempts were used up (the last attempt crashed the process). */
  | 'BUS_RETRIES_EXHAUSTED'
  /** `expectedLastSubjectSequence` did not hold: someone else appended first. */
  | 'BUS_PUBLISH_SEQUENCE_CONFLICT'
  /** The server rejected a publish for another reason. */
  | 'BUS_PUBLISH_FAILED'
  /** A publish or request got no answer in time. */
  | 'BUS_TIMEOUT'
  /** A request found no responder subscribed to its subject. */
  | 'BUS_NO_RESPONDERS'
  /** A dead letter could not be stored; the original message is kept and retried. */
  | 'BUS_DEAD_LETTER_FAILED'
  /** The client or server was used after `close()`. */
  | 'BUS_CLOSED'
  /** Fewer than two peers of a replicated stream could be read (no probe consumer landed on them): nothing to compare. */
  | 'BUS_REPLICAS_UNREADABLE'
  /** A stream's peer could not be replaced (not one of its peers, the server refused, or its replicas did not come back in time). */
  | 'BUS_REPLICA_REPAIR_FAILED';

/** Errors raised by the bus itself; handler failures keep their own codes. */
export class BusError extends WritError<BusErrorCode> {
  constructor(code: BusErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'BusError';
  }
}

/**
 * A failure reported by the remote side of a request: it carries the remote
 * handler's own code (e.g. `CONTRACT_INVALID`), which belongs to the remote
 * context's union, not to `BusErrorCode`. Branch on it with `hasErrorCode`.
 */
export class RemoteError extends WritError<string> {
  constructor(code: string, message: string, details: Record<string, unknown>) {
    super(code, message, { details });
    this.name = 'RemoteError';
  }
}
