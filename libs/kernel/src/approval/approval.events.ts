import { ApprovalPacket, Id, LIMITS, Name, Ref, ResolutionJws, ResourceName, Text, Timestamp } from '@writ/contracts';
import { z } from 'zod';

const at = Timestamp;

/** A resource fingerprint: a content hash, version, ETag or ref (Hermit 16.8). */
export const Fingerprint = z.string().min(1).max(256);

/** Resource → fingerprint, captured at request time or observed at grant time. */
export const Fingerprints = z
  .record(ResourceName, Fingerprint)
  .refine((record) => Object.keys(record).length <= LIMITS.targetResources, `must have at most ${LIMITS.targetResources} entries`);
export type Fingerprints = z.infer<typeof Fingerprints>;

/** The state witness captured when approval is requested for a delayed high-risk action (Hermit 16.8). */
export const StateWitness = z.strictObject({
  ref: Ref.describe('The state.witness artifact.'),
  fingerprints: Fingerprints,
  observed_at: Timestamp,
  expires_at: Timestamp.optional(),
});
export type StateWitness = z.infer<typeof StateWitness>;

/** Why a pending or granted approval no longer holds (Hermit 16.7, 16.8, 19.6). */
export const InvalidationCause = z.enum(['witness_drift', 'witness_expired', 'packet_drift', 'input_drift', 'policy_drift']);
export type InvalidationCause = z.infer<typeof InvalidationCause>;

/**
 * The director's signed ApprovalResolution the event answers (`writ approve|deny`), recorded so
 * that whoever acts on the event checks the director's authority itself (DESIGN invariant 9).
 * Absent on a resolution no director asked for (expiry by the timer, cancellation) and on
 * events written before it was recorded.
 */
const resolutionJws = ResolutionJws.optional();

/** A stable refusal code: UPPER_SNAKE, prefixed by its context (`APPROVAL_RESOLUTION_UNSIGNED`). */
export const RefusalCode = z.string().regex(/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/).max(64);

/** The events of the Approval aggregate (Hermit 8.9, 12.4, 16.7). */
export const ApprovalEvent = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('approval.requested'),
    data: z.strictObject({
      approval_id: Id,
      task_id: Id,
      step_id: Id,
      attempt_id: Id,
      approval_type: Name,
      requested_action_ref: Ref,
      approval_packet_ref: Ref,
      requested_by: Id.describe('principal_id that proposed the action; it may never resolve its own approval.'),
      policy_result_ref: Ref.optional(),
      expires_at: Timestamp,
      state_witness: StateWitness.optional(),
      /** The packet the resolver is shown (Hermit 16.7); `approval_packet_ref` is its hash. */
      packet: ApprovalPacket.optional(),
      at,
    }),
  }),
  z.strictObject({
    type: z.literal('approval.granted'),
    data: z.strictObject({ resolved_by: Id, note: Text.optional(), witness_validated: z.boolean(), resolution_jws: resolutionJws, at }),
  }),
  z.strictObject({ type: z.literal('approval.denied'), data: z.strictObject({ resolved_by: Id, note: Text.optional(), resolution_jws: resolutionJws, at }) }),
  z.strictObject({
    type: z.literal('approval.expired'),
    data: z.strictObject({ resolved_by: Id.describe('The principal whose command observed the expiry.'), resolution_jws: resolutionJws, at }),
  }),
  z.strictObject({ type: z.literal('approval.cancelled'), data: z.strictObject({ resolved_by: Id, reason: Text, at }) }),
  z.strictObject({
    type: z.literal('approval.invalidated'),
    data: z.strictObject({
      resolved_by: Id,
      cause: InvalidationCause,
      drifted_resources: z.array(ResourceName).max(LIMITS.targetResources).optional(),
      note: Text.optional(),
      resolution_jws: resolutionJws,
      at,
    }),
  }),
  /**
   * A resolution event in the log that does not carry the authority it claims (no director's
   * signature, a signer who was not a director or is the requester, a key not valid then, a
   * resolution of another approval or packet) was refused by whoever was to act on it: it
   * resolves nothing, and the approval stays as it was.
   */
  z.strictObject({
    type: z.literal('approval.resolution_refused'),
    data: z.strictObject({
      resolution_event_id: Id.describe('The refused resolution event.'),
      code: RefusalCode,
      reason: Text,
      refused_by: Id,
      at,
    }),
  }),
]);
export type ApprovalEvent = z.infer<typeof ApprovalEvent>;
export type ApprovalEventType = ApprovalEvent['type'];
