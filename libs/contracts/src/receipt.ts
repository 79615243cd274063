import { z } from 'zod';
import { parseContract, safeParseContract, type ParseResult } from './contract-error.js';
import { Id, Ref, Sha256Hex, Timestamp } from './ids.js';
import { LIMITS } from './limits.js';
import { isPresent, withRules } from './rules.js';
import { FilePath, Text } from './text.js';

/** Receipt classes (Hermit 18.1). */
export const ReceiptClass = z.enum([
  'tool_execution',
  'command_execution',
  'publish',
  'memory_promotion',
  'approval_resolution',
  'rollback',
  'observation_resolution',
]);
export type ReceiptClass = z.infer<typeof ReceiptClass>;

/** Verifiability levels (Hermit 18.3), weakest first. */
export const Verifiability = z.enum(['hash_only', 'hash_chained', 'signed', 'signed_with_inclusion_proof']);
export type Verifiability = z.infer<typeof Verifiability>;

/** Replay classes (Hermit 18.5). */
export const ReplayClass = z.enum(['deterministic_replay', 'idempotent_replay', 'observe_only', 'explain_only']);
export type ReplayClass = z.infer<typeof ReplayClass>;

/**
 * How the action ended. `unknown_outcome` means a side effect may or may not
 * have happened (Hermit 19.4): it blocks automatic replay until resolved.
 * `refused` means nothing ran (e.g. the executor rejected the grant).
 */
export const ReceiptResultCode = z.enum(['succeeded', 'failed', 'unknown_outcome', 'refused', 'cancelled']);
export type ReceiptResultCode = z.infer<typeof ReceiptResultCode>;

/** Receipt classes whose effect runs under a capability grant. */
const GRANTED_CLASSES: readonly ReceiptClass[] = ['tool_execution', 'command_execution', 'publish', 'rollback'];
/** Result codes meaning the effect was (or may have been) dispatched. */
const DISPATCHED_RESULTS: readonly ReceiptResultCode[] = ['succeeded', 'failed', 'unknown_outcome'];

/**
 * The cell an action ran in, as the executor read it back from the container
 * after the run (`execution.completed.environment`), not as requested: image
 * and its digest, network, hardening, limits and mounts. The receipt copies it
 * so that a reader without the log knows what isolation the receipt attests;
 * `environment_ref` is the content hash of the full record.
 */
export const ReceiptAttestation = z
  .strictObject({
    image: z.string().min(1).max(256),
    image_id: z.string().min(1).max(256).describe('The image digest the container ran (e.g. "sha256:…").'),
    network_mode: z.string().min(1).max(64),
    readonly_rootfs: z.boolean(),
    cap_drop: z.array(z.string().max(64)).max(64),
    user: z.string().max(64),
    memory_bytes: z.int().nonnegative(),
    pids_limit: z.int().nonnegative(),
    mounts: z.array(z.strictObject({ destination: z.string().max(1024), read_only: z.boolean() })).max(16),
    egress_hosts: z.array(z.string().min(1).max(261)).max(64).optional().describe('Hosts the cell\'s egress proxy allowed; absent: the cell had no network.'),
  })
  .meta({ title: 'ReceiptAttestation', description: 'The cell as actually applied, read back from the container.' });
export type ReceiptAttestation = z.infer<typeof ReceiptAttestation>;

/** How the approval the action waited for was resolved: by whom, in which event, on which packet and witness. */
export const ReceiptApprovalResolution = z
  .strictObject({
    status: z.enum(['granted', 'denied', 'expired', 'cancelled', 'invalidated']),
    resolved_by: Id.nullable().describe('The resolver (a director, or the service that observed an expiry or drift).'),
    resolution_ref: Ref.describe('The resolution event: `event:<event_id>`.'),
    resolution_hash: Sha256Hex.describe("SHA-256 of the RFC 8785 form of the resolution event's payload."),
    packet_ref: Ref.nullable().describe('The approval packet the resolver was shown.'),
    witness_validated: z.boolean().optional().describe('On a grant: whether the state witness was revalidated unchanged; absent when not recorded.'),
  })
  .meta({ title: 'ReceiptApprovalResolution' });
export type ReceiptApprovalResolution = z.infer<typeof ReceiptApprovalResolution>;

/** Rollback methods a receipt can name (Hermit 18.6). */
export const RollbackMethod = z.enum(['none', 'compensating_local_actions']);
export type RollbackMethod = z.infer<typeof RollbackMethod>;

/** One compensating governed action of a rollback: delete a file the action added, or write back a pre-image the log holds. */
export const RollbackStep = z.strictObject({
  action_class: z.enum(['delete_local', 'write_local']),
  path: FilePath.describe('Workspace-relative path.'),
  expected_sha256: Sha256Hex.nullable().describe('What the path must still hash to (the action\'s after state; null: it must be absent); anything else is a later change a rollback would lose.'),
  restore_artifact_ref: Ref.optional().describe('write_local only: the artifact holding the pre-image (`artifact:<id>`).'),
  restore_sha256: Sha256Hex.optional().describe('write_local only: SHA-256 of the pre-image.'),
});
export type RollbackStep = z.infer<typeof RollbackStep>;

/**
 * Rollback metadata (Hermit 18.6): the method, its prerequisites and the
 * artifacts it needs, or in plain words why the action cannot be rolled back.
 * `compensating_local_actions` lists governed actions (each needs its own
 * policy decision, grant and receipt); it is named only when everything it
 * needs is in the log.
 */
export const ReceiptRollback = withRules(
  z.strictObject({
    method: RollbackMethod,
    statement: Text,
    prerequisites: z.array(Text).max(LIMITS.shortListItems),
    steps: z.array(RollbackStep).max(LIMITS.listItems),
  }),
  (rollback, report) => {
    const steps = rollback.steps as unknown[];
    if (rollback.method === 'none' && Array.isArray(steps) && steps.length > 0) report(['steps'], 'must be empty when method is none');
    if (rollback.method === 'compensating_local_actions' && Array.isArray(steps) && steps.length === 0) report(['steps'], 'must name at least one step for compensating_local_actions');
  },
).meta({ title: 'ReceiptRollback' });
export type ReceiptRollback = z.infer<typeof ReceiptRollback>;

/** The task stream's head a receipt was built on: `task_seq` and `hash` of its last event then. */
export const ReceiptEventChainHead = z
  .strictObject({ task_seq: z.int().positive(), event_hash: Sha256Hex })
  .meta({ title: 'ReceiptEventChainHead' });
export type ReceiptEventChainHead = z.infer<typeof ReceiptEventChainHead>;

const Signature = z
  .string()
  .min(1)
  .max(LIMITS.signature)
  .regex(/^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*){0,2}$/, 'must be base64url or a compact JWS');

/**
 * The durable proof record of an important action (Hermit 8.10, 18). A
 * minimum field that does not apply is null (no approval for a direct allow).
 * `receipt_hash` is SHA-256 over the RFC 8785 canonical receipt without
 * `receipt_hash` and `signature`; `prev_receipt_hash` chains the receipts of
 * one task (null for the first).
 */
export const Receipt = withRules(
  z.strictObject({
    receipt_id: Id,
    task_id: Id,
    step_id: Id,
    attempt_id: Id,
    receipt_class: ReceiptClass,
    action_request_ref: Ref.describe('What was intended.'),
    input_refs: z.array(Ref).max(LIMITS.listItems),
    environment_ref: Ref.nullable().describe('The environment.snapshot the action ran in; null when nothing ran.'),
    policy_result_ref: Ref.nullable(),
    approval_ref: Ref.nullable().describe('null when policy allowed directly.'),
    capability_grant_ref: Ref.nullable().describe('What was authorized; required once an effect was dispatched under a grant.'),
    output_refs: z.array(Ref).max(LIMITS.listItems),
    result_code: ReceiptResultCode,
    result_summary: Text,
    created_at: Timestamp,
    decision_ref: Ref.optional(),
    rollback_ref: Ref.optional().describe('Rollback method, prerequisites and artifacts (Hermit 18.6).'),
    rollback_supported: z.boolean().optional().describe('Whether the action can be rolled back; a receipt must say when it cannot.'),
    replay_class: ReplayClass.optional(),
    verifiability: Verifiability.optional(),
    signer_ref: Ref.optional().describe('Key id (JWKS kid) of the signing key.'),
    signature: Signature.optional().describe('Ed25519 signature over receipt_hash, base64url or compact JWS.'),
    receipt_bundle_ref: Ref.optional(),
    prev_receipt_hash: Sha256Hex.nullable().optional(),
    receipt_hash: Sha256Hex.optional(),
    // The chain of authority (Hermit 18.2), bound by content hash so that a reader holding the log segment can check each link.
    request_hash: Sha256Hex.optional().describe('SHA-256 of the RFC 8785 form of the ActionRequest as recorded (attempt.awaiting_policy).'),
    policy_result_hash: Sha256Hex.optional().describe('SHA-256 of the RFC 8785 form of the PolicyResult as recorded (policy.evaluated).'),
    approval_resolution: ReceiptApprovalResolution.optional().describe('The approval the action waited for and how it was resolved; absent when none was requested.'),
    grant_hash: Sha256Hex.optional().describe('SHA-256 of the compact JWS of the grant as issued (grant.issued).'),
    state_witness_ref: Ref.nullable().optional().describe('The state witness captured before execution (approval.requested); null when none was captured.'),
    attestation: ReceiptAttestation.nullable().optional().describe('The cell as actually applied; null when nothing ran or it was not read back.'),
    not_asserted: z.array(Text).max(LIMITS.shortListItems).optional().describe('What this receipt does NOT assert, in plain words.'),
    rollback: ReceiptRollback.optional().describe('Rollback method, prerequisites and steps, or why there is none (Hermit 18.6).'),
    event_chain_head: ReceiptEventChainHead.optional().describe(
      "The task's last event before this receipt. Events are hash-chained, so signing the head signs every event before it: a rewritten event fails the signature, not only the chain.",
    ),
  }),
  (receipt, report) => {
    const receiptClass = receipt.receipt_class as ReceiptClass;
    const resultCode = receipt.result_code as ReceiptResultCode;
    if (GRANTED_CLASSES.includes(receiptClass) && DISPATCHED_RESULTS.includes(resultCode) && !isPresent(receipt.capability_grant_ref)) {
      report(['capability_grant_ref'], `is required for a ${receiptClass} receipt with result ${resultCode}`);
    }
    const level = receipt.verifiability;
    if (level === 'hash_chained' || level === 'signed' || level === 'signed_with_inclusion_proof') {
      if (!isPresent(receipt.receipt_hash)) report(['receipt_hash'], `is required for ${level}`);
      if (receipt.prev_receipt_hash === undefined) report(['prev_receipt_hash'], `is required (null for the first receipt) for ${level}`);
    }
    if ((level === 'signed' || level === 'signed_with_inclusion_proof') && !isPresent(receipt.signature)) report(['signature'], `is required for ${level}`);
    if (isPresent(receipt.signature) && !isPresent(receipt.signer_ref)) report(['signer_ref'], 'is required when signature is present');
    const rollback = receipt.rollback as { method?: unknown } | undefined;
    if (rollback !== undefined && typeof receipt.rollback_supported === 'boolean' && receipt.rollback_supported !== (rollback.method !== 'none')) {
      report(['rollback_supported'], 'must be true exactly when rollback.method names a method');
    }
  },
).meta({ title: 'Receipt', description: 'The durable, hash-chained and signed proof record of an important action (Hermit 8.10, 18).' });
export type Receipt = z.infer<typeof Receipt>;

/** Parses a receipt, throwing a `ContractError` (CONTRACT_INVALID) listing every offending path. */
export function parseReceipt(input: unknown): Receipt {
  return parseContract('Receipt', Receipt, input);
}

/** Parses a receipt without throwing. */
export function safeParseReceipt(input: unknown): ParseResult<Receipt> {
  return safeParseContract('Receipt', Receipt, input);
}
