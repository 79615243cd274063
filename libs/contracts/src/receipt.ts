import { z } from 'zod';
import { parseContract, safeParseContract, type ParseResult } from './contract-error.js';
import { Id, Ref, Sha256Hex, Timestamp } from './ids.js';
import { LIMITS } from './limits.js';
import { isPresent, withRules } from './rules.js';
import { Text } from './text.js';

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
