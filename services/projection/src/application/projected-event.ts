import { createHash } from 'node:crypto';
import { ContractError, EventEnvelope, Id, safeParseContract, type QuarantineRecord } from '@writ/contracts';

/**
 * One event of the log as the folds see it: the stored envelope, where the log
 * holds it (`streamSeq`, the projector's checkpoint unit), and the aggregate
 * it was appended to, read from its subject `<prefix>.<aggregate>.<id>` (an
 * `approval.granted` on a task stream belongs to the task aggregate, whatever
 * its `entity_type`).
 */
export interface ProjectedEvent {
  readonly streamSeq: number;
  readonly aggregate: { readonly type: string; readonly id: string };
  readonly envelope: EventEnvelope;
}

/** What a consumer or a replay hands over. */
export interface RawStoredEvent {
  readonly streamSeq: number;
  readonly subject: string;
  /** The stored envelope (undefined for a quarantined message). */
  readonly payload: unknown;
  /** Messages the consumer still held behind this one when it was delivered (a backlog); absent from a replay. */
  readonly pending?: number;
  /** Set when the log judged the message junk (invariant 10): passed over and recorded, never folded. */
  readonly quarantined?: QuarantineRecord;
}

/**
 * The quarantine record of a message a log handed over unjudged that is not
 * an event (a log that does not judge, as in unit tests): its SHA-256 is of
 * its JSON text, as the bytes are not at hand.
 */
export function unjudgedQuarantine(raw: RawStoredEvent, stream: string, error: ContractError): QuarantineRecord {
  const text = JSON.stringify(raw.payload) ?? '';
  return {
    stream,
    subject: raw.subject,
    stream_seq: raw.streamSeq,
    reason: error.contract === 'EventSubject' ? 'QUARANTINE_WRONG_SUBJECT' : 'QUARANTINE_NOT_ENVELOPE',
    sha256: createHash('sha256').update(text).digest('hex'),
    bytes: Buffer.byteLength(text),
    detail: `not an event: ${error.issues[0]?.path ?? ''} ${error.issues[0]?.message ?? ''}`.trim().slice(0, 500),
  };
}

/**
 * Parses a stored event; a body that is not an envelope, or a subject outside
 * `<prefix>.<aggregate>.<id>`, is a `ContractError` (dead-lettered at once:
 * retrying cannot fix it, and the rebuild reports the same event).
 */
export function toProjectedEvent(raw: RawStoredEvent, eventsPrefix: string): ProjectedEvent {
  const parsed = safeParseContract('EventEnvelope', EventEnvelope, raw.payload);
  if (!parsed.ok) throw parsed.error;
  const rest = raw.subject.startsWith(`${eventsPrefix}.`) ? raw.subject.slice(eventsPrefix.length + 1).split('.') : [];
  const [type, id] = rest;
  if (rest.length !== 2 || type === undefined || id === undefined || !Id.safeParse(id).success) {
    throw new ContractError('EventSubject', [
      { path: 'subject', code: 'invalid_subject', message: `${raw.subject} is not ${eventsPrefix}.<aggregate>.<id>` },
    ]);
  }
  if (!Number.isSafeInteger(raw.streamSeq) || raw.streamSeq < 1) {
    throw new ContractError('EventSubject', [{ path: 'streamSeq', code: 'invalid_sequence', message: `stream sequence ${raw.streamSeq} is not positive` }]);
  }
  return { streamSeq: raw.streamSeq, aggregate: { type, id }, envelope: parsed.value };
}

// ---- small pure readers the folds share ------------------------------------------------------

export type JsonObject = Readonly<Record<string, unknown>>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value[key]` when `value` is an object. */
export function field(value: unknown, key: string): unknown {
  return isObject(value) ? value[key] : undefined;
}

/** A string field, or null. */
export function text(value: unknown, key: string): string | null {
  const v = field(value, key);
  return typeof v === 'string' && v.length > 0 ? v : null;
}

/** A field that is a valid Writ id (usable as a subject token), or null. */
export function idField(value: unknown, key: string): string | null {
  const v = field(value, key);
  return typeof v === 'string' && Id.safeParse(v).success ? v : null;
}

/** An integer field, or null. */
export function intField(value: unknown, key: string): number | null {
  const v = field(value, key);
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : null;
}

/** RFC 3339 → canonical UTC ISO string (as Postgres timestamptz round-trips it to a JS Date), or null. */
export function instant(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** Seconds since the epoch (JWT NumericDate) → ISO string, or null. */
export function fromNumericDate(value: unknown): string | null {
  return typeof value === 'number' && Number.isFinite(value) ? new Date(value * 1000).toISOString() : null;
}

/** `receipt:r-1`, `artifact:x`, or a bare id → the id; null when it is a URI or hash. */
export function refId(ref: unknown): string | null {
  if (typeof ref !== 'string') return null;
  const id = ref.includes(':') ? ref.slice(ref.indexOf(':') + 1) : ref;
  return Id.safeParse(id).success ? id : null;
}

/**
 * The payload of a compact JWS, decoded WITHOUT verifying it: only to route a
 * raw `ingress.received` to its action row before ingress has verified it.
 * Nothing is ever authorized on it (ingress verifies; the binding comes from
 * the task stream).
 */
export function peekJwsPayload(jws: unknown): JsonObject | undefined {
  if (typeof jws !== 'string') return undefined;
  const parts = jws.split('.');
  if (parts.length !== 3 || parts[1] === undefined || !/^[A-Za-z0-9_-]+$/.test(parts[1])) return undefined;
  try {
    const decoded: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return isObject(decoded) ? decoded : undefined;
  } catch {
    return undefined;
  }
}

/** The attempt an event of a task stream is about: the envelope's, else its entity's, else the payload's. */
export function attemptIdOf(event: ProjectedEvent): string | null {
  const { envelope } = event;
  if (envelope.attempt_id !== undefined) return envelope.attempt_id;
  if (envelope.entity_type === 'attempt') return envelope.entity_id;
  return idField(envelope.payload, 'attempt_id');
}

export function stepIdOf(event: ProjectedEvent): string | null {
  return event.envelope.step_id ?? idField(event.envelope.payload, 'step_id');
}

/** When the event happened, canonical. */
export function occurredAt(event: ProjectedEvent): string {
  return instant(event.envelope.occurred_at) ?? event.envelope.occurred_at;
}
