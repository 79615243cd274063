import { ApprovalPacket, Id, LIMITS, Name, Ref, ResourceName, Text, Timestamp } from '@writ/contracts';
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
    data: z.strictObject({ resolved_by: Id, note: Text.optional(), witness_validated: z.boolean(), at }),
  }),
  z.strictObject({ type: z.literal('approval.denied'), data: z.strictObject({ resolved_by: Id, note: Text.optional(), at }) }),
  z.strictObject({
    type: z.literal('approval.expired'),
    data: z.strictObject({ resolved_by: Id.describe('The principal whose command observed the expiry.'), at }),
  }),
  z.strictObject({ type: z.literal('approval.cancelled'), data: z.strictObject({ resolved_by: Id, reason: Text, at }) }),
  z.strictObject({
    type: z.literal('approval.invalidated'),
    data: z.strictObject({
      resolved_by: Id,
      cause: InvalidationCause,
      drifted_resources: z.array(ResourceName).max(LIMITS.targetResources).optional(),
      note: Text.optional(),
      at,
    }),
  }),
]);
export type ApprovalEvent = z.infer<typeof ApprovalEvent>;
export type ApprovalEventType = ApprovalEvent['type'];
