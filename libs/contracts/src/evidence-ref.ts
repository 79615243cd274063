import { z } from 'zod';
import { Id, Name, Sha256Hex, Timestamp } from './ids.js';
import { LIMITS } from './limits.js';
import { UnitInterval } from './text.js';
import { TrustTier } from './trust-tier.js';
import { withRules } from './rules.js';

const Offset = z.int().min(0);
const LineNo = z.int().min(1);
const Selector = z.string().min(1).max(LIMITS.ref);

/** Numbers as they are; timestamps as epoch milliseconds (offsets differ, so strings do not compare). */
function position(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Date.parse(value);
  return Number.NaN;
}

function ordered<S extends z.ZodType<{ start: unknown; end: unknown }>>(schema: S): S {
  return withRules(schema, (range, report) => {
    const start = position(range.start);
    const end = position(range.end);
    if (Number.isFinite(start) && Number.isFinite(end) && end < start) report(['end'], 'must not be before start');
  });
}

/** Which part of an artifact is cited (Hermit 14.5). Byte ranges are half-open `[start, end)`; line ranges and timestamp spans are inclusive. */
export const EvidenceSelector = z.discriminatedUnion('kind', [
  ordered(z.strictObject({ kind: z.literal('byte_range'), start: Offset, end: Offset })),
  ordered(z.strictObject({ kind: z.literal('line_range'), start: LineNo, end: LineNo })),
  z.strictObject({ kind: z.literal('json_path'), path: Selector }),
  z.strictObject({ kind: z.literal('dom_selector'), selector: Selector }),
  ordered(z.strictObject({ kind: z.literal('timestamp_span'), start: Timestamp, end: Timestamp })),
  z.strictObject({ kind: z.literal('record_id'), record_id: Selector }),
]);
export type EvidenceSelector = z.infer<typeof EvidenceSelector>;

/** The typed pointer used by decisions, approvals, beliefs, memory and receipts (Hermit 14.5). */
export const EvidenceRef = z
  .strictObject({
    artifact_id: Id,
    selector: EvidenceSelector.optional().describe('The cited part; absent when the whole artifact is cited.'),
    excerpt_hash: Sha256Hex.optional().describe('SHA-256 of the cited bytes, so the excerpt is hash-locked.'),
    capture_method: Name.describe('How the evidence was captured: file_read, command_output, http_fetch, user_upload, ...'),
    confidence: UnitInterval.optional(),
    trust_tier: TrustTier,
  })
  .meta({ title: 'EvidenceRef', description: 'A typed pointer into an artifact cited as evidence (Hermit 14.5).' });
export type EvidenceRef = z.infer<typeof EvidenceRef>;
