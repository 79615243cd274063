import { z } from 'zod';
import { EventEnvelope } from './event-envelope.js';
import { PublicEd25519Jwk, TrustAnchor } from './governed-path/principal-events.js';
import { InclusionProof, SignedTreeHead } from './governed-path/transparency-log.js';
import { Id, Ref, Sha256Hex, Timestamp } from './ids.js';
import { LIMITS } from './limits.js';
import { Receipt } from './receipt.js';
import { Text } from './text.js';

/**
 * A receipt bundle (Hermit 18.4): everything someone without access to Writ
 * needs to check a task's receipts offline (`writ verify <bundle>`), and
 * nothing that cannot be checked. Every field is either signed (receipts,
 * the tree head, grants inside the events), hash-linked (the events), proved
 * (inclusion proofs against the tree head), or derived from those by a rule
 * the verifier re-applies and compares (references, keys, not_asserted). The
 * file is the RFC 8785 form of the bundle; `bundle_hash` seals it.
 */
export const RECEIPT_BUNDLE_VERSION = 'writ.receipt-bundle.v1';

/** Events of one task a bundle may carry (seq 1 through the last receipted event). */
export const RECEIPT_BUNDLE_MAX_EVENTS = 100_000;

/** A stored event exactly as the log holds it: an unknown field is a schema failure, not silently dropped. */
const StoredEvent = EventEnvelope.strict();

/** RFC 6901 JSON Pointer into an event (`''` = the whole event, `/payload/policy_result`). */
const JsonPointer = z
  .string()
  .max(LIMITS.ref)
  .regex(/^(?:\/(?:[^~/]|~[01])*)*$/, 'must be an RFC 6901 JSON Pointer');

/** The receipt fields that hold references or content hashes (Receipt: what it points at, what it binds). */
export const BundleReferenceField = z.enum([
  'action_request_ref',
  'request_hash',
  'input_refs',
  'environment_ref',
  'policy_result_ref',
  'policy_result_hash',
  'approval_ref',
  'approval_resolution.resolution_ref',
  'approval_resolution.resolution_hash',
  'approval_resolution.packet_ref',
  'state_witness_ref',
  'capability_grant_ref',
  'grant_hash',
  'output_refs',
  'decision_ref',
  'rollback_ref',
  'rollback.steps.expected_sha256',
  'rollback.steps.restore_artifact_ref',
  'rollback.steps.restore_sha256',
]);
export type BundleReferenceField = z.infer<typeof BundleReferenceField>;

/**
 * How a reference is bound to what it names in the event segment:
 * - `event`: `event:<event_id>`; `sha256` is that event's `hash`;
 * - `object`: `<kind>:<id>` (action_request, policy_result, decision, approval, grant, artifact): the object at `pointer` carries that id; `sha256` is SHA-256 of its RFC 8785 form;
 * - `content`: `sha256:<hex>`: the RFC 8785 form of the value at `pointer` hashes to `<hex>`;
 * - `text`: the SHA-256 of the UTF-8 bytes of the string at `pointer` (a grant's compact JWS) is `<hex>`;
 * - `recorded_digest`: `sha256:<hex>`: the log recorded `<hex>` at `pointer` as the digest of bytes the bundle does not hold (stdout, stderr, an artifact's content);
 * - `approval_packet`: the approval packet document (format `writ.approval-packet/1`: the packet and the state witness on `approval.requested`) hashes to the ref's `<hex>`;
 * - `state_witness`: `sha256:` of `{ task_id, fingerprints, observed_at }` of the witness on `approval.requested`.
 */
export const BundleReferenceBinding = z.enum(['event', 'object', 'content', 'text', 'recorded_digest', 'approval_packet', 'state_witness']);
export type BundleReferenceBinding = z.infer<typeof BundleReferenceBinding>;

/** One reference of a receipt, resolved in the bundle's event segment. */
export const BundleReference = z.strictObject({
  field: BundleReferenceField,
  /** As the receipt spells it: a ref (`grant:<jti>`, `sha256:<hex>`, `event:<id>`) or, for a `*_hash` field, the bare hex. */
  ref: Ref,
  /** The event of the segment that holds what the reference names (before the receipt's own event). */
  event_id: Id,
  pointer: JsonPointer,
  binding: BundleReferenceBinding,
  /** The hash of what the reference names (see `binding`). */
  sha256: Sha256Hex,
});
export type BundleReference = z.infer<typeof BundleReference>;

/** One receipt of the task, as its `receipt.issued` event holds it, with its inclusion proof. */
export const BundledReceipt = z.strictObject({
  receipt: Receipt,
  /** The compact EdDSA JWS (`typ: writ-receipt+jws`) whose payload is the receipt's canonical body. */
  jws: z.string().min(1).max(64 * 1024),
  /** `event_id` of its `receipt.issued` event in `events`. */
  event_id: Id,
  /** Every reference of the receipt, in field order, resolved in the segment. */
  references: z.array(BundleReference).max(2 * LIMITS.listItems + 8),
  /** RFC 9162 proof that the receipt (leaf input: the 32 bytes of `receipt_hash`) is in the log of `tree_head`. */
  inclusion_proof: InclusionProof,
});
export type BundledReceipt = z.infer<typeof BundledReceipt>;

/** The key events of one principal (`writ.evt.principal.<id>`, hash-chained like a task): where the keys come from. */
export const BundlePrincipal = z.strictObject({
  principal_id: Id,
  events: z.array(StoredEvent).min(1).max(1_000),
});
export type BundlePrincipal = z.infer<typeof BundlePrincipal>;

/** One public key and when it could sign: from its `principal.registered` / `principal.key_added` until its `principal.key_revoked`. */
export const BundleKey = z.strictObject({
  principal_id: Id,
  jwk: PublicEd25519Jwk,
  valid_from: Timestamp,
  /** When it was revoked (a rotation retires the replaced key this way); null while it is not. */
  valid_until: Timestamp.nullable(),
  revocation_reason: Text.optional(),
});
export type BundleKey = z.infer<typeof BundleKey>;

/** Something the bundle does not prove, said plainly. */
export const NotAssertedStatement = z.strictObject({
  subject: z.string().min(1).max(LIMITS.ref),
  statement: Text,
});
export type NotAssertedStatement = z.infer<typeof NotAssertedStatement>;

export const ReceiptBundle = z
  .strictObject({
    bundle_version: z.literal(RECEIPT_BUNDLE_VERSION),
    task_id: Id,
    /** The task's events from task_seq 1 through its last `receipt.issued`: enough to recompute every hash and link. */
    events: z.array(StoredEvent).min(1).max(RECEIPT_BUNDLE_MAX_EVENTS),
    /** Every receipt of the segment, in log order. */
    receipts: z.array(BundledReceipt).min(1).max(RECEIPT_BUNDLE_MAX_EVENTS),
    /** The one signed tree head every inclusion proof is against. */
    tree_head: SignedTreeHead,
    /** The key events of the receipt signer and of every grant issuer. */
    principals: z.array(BundlePrincipal).min(1).max(16),
    /** The key history those events describe, with validity windows. */
    keys: z.array(BundleKey).min(1).max(256),
    /**
     * The deployment's trust anchor (`writ init`'s trust-anchor.json) the principals' registrations
     * chain back to; `principals` then also holds the operators on that chain. Absent on bundles
     * exported before it (their registrations cannot be checked).
     */
    trust_anchor: TrustAnchor.optional(),
    not_asserted: z.array(NotAssertedStatement).max(2 * LIMITS.listItems),
    /** SHA-256 of the RFC 8785 form of the bundle without `bundle_hash`. */
    bundle_hash: Sha256Hex,
  })
  .meta({
    title: 'ReceiptBundle',
    description: "A task's receipts with the event segment, inclusion proofs, signed tree head and key history needed to verify them offline (Hermit 18.4).",
  });
export type ReceiptBundle = z.infer<typeof ReceiptBundle>;
