import { JetStreamApiCodes } from '@nats-io/jetstream';
import { BusError } from './bus-errors.js';

/** The chain error → cause → cause…, so a wrapped NATS error is still recognized. */
function* causes(error: unknown): Generator<unknown> {
  let current = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

/** Recognized by `name` rather than `instanceof`, so two copies of the NATS client still match. */
function hasName(error: unknown, ...names: string[]): boolean {
  return [...causes(error)].some((e) => typeof e === 'object' && e !== null && names.includes((e as Error).name));
}

const API_ERRORS = new Set(['JetStreamApiError', 'ConsumerNotFoundError', 'StreamNotFoundError']);

/** The JetStream API `err_code` (e.g. 10071, wrong last sequence) somewhere in the chain. */
function apiErrorCode(error: unknown): number | undefined {
  for (const e of causes(error)) {
    if (typeof e !== 'object' || e === null || !API_ERRORS.has((e as Error).name)) continue;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

/** Maps a failed JetStream publish to the bus's codes (the adapter's mapping table for publishing). */
export function publishError(error: unknown, subject: string, expectedLastSubjectSequence: number | undefined): BusError {
  const details = { subject, ...(expectedLastSubjectSequence === undefined ? {} : { expectedLastSubjectSequence }) };
  const apiCode = apiErrorCode(error);
  if (apiCode === JetStreamApiCodes.StreamWrongLastSequence || apiCode === JetStreamApiCodes.StreamWrongLastSequenceUnknown) {
    return new BusError('BUS_PUBLISH_SEQUENCE_CONFLICT', `${subject} has moved past sequence ${String(expectedLastSubjectSequence)}`, {
      cause: error,
      details,
    });
  }
  if (hasName(error, 'JetStreamNotEnabled', 'NoResponders', 'NoRespondersError')) {
    return new BusError('BUS_STREAM_NOT_FOUND', `no stream captures ${subject} (or JetStream is off)`, { cause: error, details });
  }
  return (
    common(error, `publish to ${subject}`, details) ??
    new BusError('BUS_PUBLISH_FAILED', `publish to ${subject} failed`, { cause: error, details: { ...details, apiCode } })
  );
}

/** Maps a failed core NATS request. */
export function requestError(error: unknown, subject: string): BusError {
  const details = { subject };
  if (hasName(error, 'NoResponders', 'NoRespondersError')) {
    return new BusError('BUS_NO_RESPONDERS', `nothing answers requests on ${subject}`, { cause: error, details });
  }
  return common(error, `request on ${subject}`, details) ?? new BusError('BUS_CONNECTION_FAILED', `request on ${subject} failed`, { cause: error, details });
}

function common(error: unknown, what: string, details: Record<string, unknown>): BusError | undefined {
  if (hasName(error, 'TimeoutError')) return new BusError('BUS_TIMEOUT', `${what} timed out`, { cause: error, details });
  if (hasName(error, 'ClosedConnectionError', 'DrainingConnectionError')) {
    return new BusError('BUS_CLOSED', `${what}: the connection is closed or draining`, { cause: error, details });
  }
  return undefined;
}
