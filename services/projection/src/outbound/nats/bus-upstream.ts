import type { BusClient } from '@writ/bus';
import { hasErrorCode } from '@writ/contracts';
import type { Upstream } from '../../application/ports.js';
import { ProjectionError, isWritCoded } from '../../application/projection-errors.js';

/** A JetStream PubAck (`{"stream": "...", "seq": n}`): what a stream answers when it captures a request subject. */
function isStreamAck(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  return typeof (body as { stream?: unknown }).stream === 'string' && Object.keys(body).every((key) => ['stream', 'seq', 'duplicate', 'domain'].includes(key));
}

/**
 * Request/reply to ingress and approval through `BusClient.request` (JSON,
 * trace context in the headers; a remote failure comes back as a
 * `RemoteError` with the remote code, which passes through unchanged).
 * The bus's own failures become the projection's codes.
 */
export class BusUpstream implements Upstream {
  constructor(
    private readonly client: BusClient,
    private readonly timeoutMs: number,
  ) {}

  async request(subject: string, payload: unknown): Promise<unknown> {
    let reply: unknown;
    try {
      reply = await this.client.request(subject, payload, { timeoutMs: this.timeoutMs });
    } catch (error) {
      if (hasErrorCode(error, 'BUS_NO_RESPONDERS', 'BUS_CLOSED', 'BUS_CONNECTION_FAILED') && (error as { details?: { remote?: unknown } }).details?.remote !== true) {
        throw new ProjectionError('PROJECTION_UPSTREAM_UNAVAILABLE', `nothing answers on ${subject}; is that service running?`, { cause: error, details: { subject } });
      }
      if (hasErrorCode(error, 'BUS_TIMEOUT') && (error as { details?: { remote?: unknown } }).details?.remote !== true) {
        throw new ProjectionError('PROJECTION_UPSTREAM_TIMEOUT', `${subject} did not answer within ${this.timeoutMs} ms; retry with the same idempotency key`, {
          cause: error,
          details: { subject },
        });
      }
      if (isWritCoded(error)) throw error;
      throw new ProjectionError('PROJECTION_UPSTREAM_UNAVAILABLE', `the request on ${subject} failed; check NATS`, { cause: error, details: { subject } });
    }
    if (isStreamAck(reply)) {
      // Request subjects live under <root>.qry, which no stream may capture: a PubAck is a deployment error, not an answer.
      throw new ProjectionError('PROJECTION_UPSTREAM_INVALID_REPLY', `a stream captured ${subject} and answered for the service; request subjects must stay outside every stream`, {
        details: { subject },
      });
    }
    return reply;
  }
}
