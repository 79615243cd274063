import type { QuarantineCounts, QuarantineReason, QuarantineRecord } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import type { ReadinessCheck } from './readiness.js';

/**
 * What one process quarantined (invariant 10): every message its readers
 * skipped as junk — the event store's reads and replays, the bus's consumers —
 * logged once with its record (stream, subject, sequence, reason, SHA-256 of
 * the bytes; never the bytes, which may hold anything) and counted by reason
 * for readiness. The messages stay where they are stored; a dead-lettered one
 * also sits on its dead-letter subject.
 */
export class QuarantineLedger {
  readonly #counts = new Map<QuarantineReason, number>();
  #total = 0;

  constructor(private readonly logger: Logger) {}

  /** Counts and logs one quarantined message; `reader` names what skipped it (the event store, a consumer). */
  record(record: QuarantineRecord, reader: string): void {
    this.#total++;
    this.#counts.set(record.reason, (this.#counts.get(record.reason) ?? 0) + 1);
    this.logger.warn(
      { stream: record.stream, subject: record.subject, stream_seq: record.stream_seq, reason: record.reason, sha256: record.sha256, bytes: record.bytes, reader },
      `message quarantined (${record.reason}): ${record.detail}`,
    );
  }

  counts(): QuarantineCounts {
    return { total: this.#total, by_reason: Object.fromEntries(this.#counts) };
  }

  /** Shows the counts; quarantining is the system working, so it never fails readiness. */
  check(): ReadinessCheck {
    return () => ({ ok: true, value: { total: this.#total, ...Object.fromEntries(this.#counts) } });
  }
}
