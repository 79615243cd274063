import { z } from 'zod';
import { Sha256Hex } from './ids.js';

/**
 * Why a stored message is not read as an event (invariant 10). The rule that
 * assigns them is in libs/eventstore `chain-scan.ts` and docs/verification.md
 * ("Quarantine"): a message is quarantined only when the chain it sits on
 * stays whole without it; a message the chain needs is a break, never junk.
 */
export const QuarantineReason = z.enum([
  /** The bytes are not UTF-8 JSON. */
  'QUARANTINE_NOT_JSON',
  /** JSON, but not an `EventEnvelope` (or, on a bus stream, not the contract of its subject). */
  'QUARANTINE_NOT_ENVELOPE',
  /** On the event log under a subject that names no aggregate (`<prefix>.<entity_type>.<id>`). */
  'QUARANTINE_WRONG_SUBJECT',
  /** An envelope bound to another aggregate than the subject it is stored on. */
  'QUARANTINE_WRONG_AGGREGATE',
  /** Its `hash` does not recompute over its own body and it does not sit where the chain's next event belongs. */
  'QUARANTINE_HASH_MISMATCH',
  /** A second copy of an event the chain holds: the same `task_seq` and the same content. */
  'QUARANTINE_DUPLICATE',
  /** Stored after the chain's event at its `task_seq`, with other content: a rival that came too late. */
  'QUARANTINE_FORKED',
  /** On an aggregate whose chain is broken at or before it: it cannot be verified, so it is not folded. */
  'QUARANTINE_CHAIN_BROKEN',
  /**
   * An envelope whose seal is missing or does not verify with a registered key
   * of a service allowed to append its event type on its aggregate
   * (`event-authorship.ts`): written with a stolen or another service's bus
   * credential. Never acted upon; the chain goes on without it.
   */
  'QUARANTINE_AUTHOR_UNPROVEN',
]);
export type QuarantineReason = z.infer<typeof QuarantineReason>;

/**
 * One quarantined message: where it is stored, why it is skipped and the
 * SHA-256 of its bytes (never the bytes: they may be anything, secrets
 * included; the stream still holds them for whoever may read it).
 */
export const QuarantineRecord = z.strictObject({
  stream: z.string().min(1).max(256),
  subject: z.string().min(1).max(1_024),
  stream_seq: z.int().positive(),
  reason: QuarantineReason,
  /** SHA-256 (hex) of the stored bytes. */
  sha256: Sha256Hex,
  /** Size of the stored bytes. */
  bytes: z.int().nonnegative(),
  /** What the reader saw, in words (no content of the message). */
  detail: z.string().max(500),
});
export type QuarantineRecord = z.infer<typeof QuarantineRecord>;

/** Quarantined messages counted by reason (readiness details, `writ projections status`). */
export const QuarantineCounts = z.strictObject({
  total: z.int().nonnegative(),
  by_reason: z.partialRecord(QuarantineReason, z.int().nonnegative()),
});
export type QuarantineCounts = z.infer<typeof QuarantineCounts>;
