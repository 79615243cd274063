import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { compactVerify, importJWK, type CryptoKey } from 'jose';
import type { AgentErrorCode } from './agent-errors.js';
import { Receipt } from './contracts.js';

/** The `typ` of a receipt's JWS (services/receipt, receipt-seal.ts). */
export const RECEIPT_JWS_TYPE = 'writ-receipt+jws';

/** A receipt as `GET /v1/receipts/<id>` serves it and `receipt.issued` carries it: the receipt as signed, and the compact JWS over its body. */
export interface ReceiptDocument {
  readonly receipt: Readonly<Record<string, unknown>>;
  readonly jws: string;
}

/** A JWKS: `GET /v1/keys` (the service principals' active public keys). */
export interface JsonWebKeySet {
  readonly keys: readonly unknown[];
}

export interface ReceiptVerifyOptions {
  /** The trust material: the keys a receipt may be signed with. Nothing is fetched here. */
  readonly keys: JsonWebKeySet;
  /** What the receipt must be about: its id, the action it receipts (`action_request_ref` = `action_request:<id>`), its task. */
  readonly expect?: { readonly receiptId?: string; readonly actionRequestId?: string; readonly taskId?: string };
  /**
   * The receipts of the receipt's task in task order, as its timeline lists
   * its `receipt.issued` events (`GET /v1/tasks/<id>`: id and hash of each;
   * the timeline is a redacted view, so only these are read from it). Then
   * the log must list this receipt with this very hash, and `prev_receipt_hash`
   * must be the hash of the receipt listed before it (null for the first).
   * Absent: those two checks are skipped.
   */
  readonly taskReceipts?: readonly TimelineReceipt[];
  /**
   * The task's previous receipt in full (`GET /v1/receipts/<id>`): the link is
   * worth something only if what it points at is itself hashed and signed by a
   * trusted key. Without it, a receipt that has a predecessor skips the chain check.
   */
  readonly previousReceipt?: ReceiptDocument;
}

/** One `receipt.issued` of a task's timeline: which receipt, and its hash. */
export interface TimelineReceipt {
  readonly receiptId: string;
  readonly receiptHash: string | null;
}

export type ReceiptCheckName = 'contract' | 'binding' | 'hash' | 'signature' | 'payload' | 'signer' | 'event' | 'chain';

export interface ReceiptCheck {
  readonly name: ReceiptCheckName;
  readonly result: 'pass' | 'fail' | 'skip';
  /** Set on a failure. */
  readonly code?: AgentErrorCode;
  readonly message: string;
}

export interface ReceiptVerification {
  /** No check failed (a check skips only when it has nothing to check, or an earlier failure decided). */
  readonly ok: boolean;
  /** The kid of the trusted key that verified the JWS, when one did. */
  readonly kid: string | null;
  /** The receipt, parsed by the contract, when it is a valid Receipt. */
  readonly receipt: Receipt | null;
  readonly checks: readonly ReceiptCheck[];
  /** The first failure, if any: what `WritAgent` throws. */
  readonly failure: ReceiptCheck | undefined;
}

const pass = (name: ReceiptCheckName, message: string): ReceiptCheck => ({ name, result: 'pass', message });
const fail = (name: ReceiptCheckName, code: AgentErrorCode, message: string): ReceiptCheck => ({ name, result: 'fail', code, message });
const skip = (name: ReceiptCheckName, message: string): ReceiptCheck => ({ name, result: 'skip', message });

/**
 * Verifies one receipt against trust material passed in (no network, no
 * clock), mirroring the single-receipt checks of `writ verify` and `writ
 * receipt --verify`:
 *
 * - contract: a valid Receipt (and, with `expect`, the receipt asked for, of that action and task);
 * - hash: `receipt_hash` is SHA-256 of the RFC 8785 body without `receipt_hash` and `signature`;
 * - signature: the JWS verifies (EdDSA only, `typ` writ-receipt+jws) under a trusted key chosen by `kid`;
 * - payload: the JWS signs exactly that canonical body;
 * - signer: the verifying key is `signer_ref`, and `signature` is the JWS with its payload detached;
 * - event and chain (with `taskReceipts`): the task's log lists this receipt with this hash, and
 *   `prev_receipt_hash` is the hash of the receipt before it (null for the task's first), which
 *   (`previousReceipt`) is itself hashed and signed by a trusted key.
 *
 * Not checked here (they need the log itself, `writ verify --task` / `writ export`):
 * the event chain head the receipt signs, that the key was valid at `created_at`,
 * the transparency-log inclusion proof.
 */
export async function verifyReceipt(document: ReceiptDocument, options: ReceiptVerifyOptions): Promise<ReceiptVerification> {
  const checks: ReceiptCheck[] = [];
  const parsed = Receipt.safeParse(document.receipt);
  const receipt = parsed.success ? parsed.data : null;
  checks.push(parsed.success ? pass('contract', `a valid Receipt ${parsed.data.receipt_id}`) : fail('contract', 'AGENT_RECEIPT_INVALID', `not a valid Receipt: ${parsed.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ')}`));
  checks.push(binding(receipt, options.expect));

  const core = await verifyCore(document, await trustedKeys(options.keys));
  checks.push(...core.checks);

  if (options.taskReceipts === undefined) {
    checks.push(skip('event', 'no task timeline given'), skip('chain', 'no task timeline given'));
  } else {
    checks.push(...(await logChecks(document, options.taskReceipts, options.previousReceipt, options.keys)));
  }
  const failure = checks.find((check) => check.result === 'fail');
  return { ok: failure === undefined, kid: core.kid, receipt, checks, failure };
}

function binding(receipt: Receipt | null, expect: ReceiptVerifyOptions['expect']): ReceiptCheck {
  if (expect === undefined) return skip('binding', 'nothing expected');
  if (receipt === null) return skip('binding', 'needs a valid Receipt');
  if (expect.receiptId !== undefined && receipt.receipt_id !== expect.receiptId) return fail('binding', 'AGENT_RECEIPT_INVALID', `the receipt is ${receipt.receipt_id}, not ${expect.receiptId}`);
  if (expect.actionRequestId !== undefined && receipt.action_request_ref !== `action_request:${expect.actionRequestId}`) {
    return fail('binding', 'AGENT_RECEIPT_INVALID', `the receipt is for ${receipt.action_request_ref}, not action_request:${expect.actionRequestId}`);
  }
  if (expect.taskId !== undefined && receipt.task_id !== expect.taskId) return fail('binding', 'AGENT_RECEIPT_INVALID', `the receipt is of task ${receipt.task_id}, not ${expect.taskId}`);
  return pass('binding', `the receipt of ${receipt.action_request_ref} in task ${receipt.task_id}`);
}

interface TrustedKey {
  readonly kid: string;
  readonly key: CryptoKey;
}

/** The Ed25519 keys of a JWKS by kid; anything else in it is ignored (a JWKS may carry keys of other kinds). */
async function trustedKeys(jwks: JsonWebKeySet): Promise<ReadonlyMap<string, TrustedKey>> {
  const keys = new Map<string, TrustedKey>();
  for (const entry of Array.isArray(jwks?.keys) ? jwks.keys : []) {
    const jwk = entry as Record<string, unknown> | null;
    if (jwk === null || typeof jwk !== 'object' || jwk['kty'] !== 'OKP' || jwk['crv'] !== 'Ed25519' || typeof jwk['x'] !== 'string' || typeof jwk['kid'] !== 'string' || 'd' in jwk) continue;
    try {
      keys.set(jwk['kid'], { kid: jwk['kid'], key: await importJWK({ kty: 'OKP', crv: 'Ed25519', x: jwk['x'] }, 'EdDSA') });
    } catch {
      // not a usable Ed25519 key: it can verify nothing
    }
  }
  return keys;
}

/** hash, signature, payload and signer: what holds for the receipt alone. */
async function verifyCore(document: ReceiptDocument, keys: ReadonlyMap<string, TrustedKey>): Promise<{ checks: ReceiptCheck[]; kid: string | null }> {
  const checks: ReceiptCheck[] = [];
  const canonical = canonicalBody(document.receipt);
  const claimedHash = document.receipt?.['receipt_hash'];
  if (canonical === undefined) checks.push(fail('hash', 'AGENT_RECEIPT_HASH_MISMATCH', 'the receipt body cannot be put in RFC 8785 form'));
  else if (typeof claimedHash !== 'string') checks.push(fail('hash', 'AGENT_RECEIPT_HASH_MISMATCH', 'the receipt carries no receipt_hash'));
  else if (sha256Hex(canonical) !== claimedHash) checks.push(fail('hash', 'AGENT_RECEIPT_HASH_MISMATCH', 'receipt_hash is not the SHA-256 of the canonical body: the body was changed'));
  else checks.push(pass('hash', 'receipt_hash is the SHA-256 of the RFC 8785 body'));

  let verified: { kid: string; payload: string } | undefined;
  let unknownKid: string | undefined;
  try {
    const result = await compactVerify(
      document.jws,
      (header) => {
        const trusted = typeof header.kid === 'string' ? keys.get(header.kid) : undefined;
        if (trusted === undefined) {
          unknownKid = typeof header.kid === 'string' ? header.kid : '(none)';
          throw new Error('no trusted key has this kid');
        }
        return trusted.key;
      },
      { algorithms: ['EdDSA'] },
    );
    if (result.protectedHeader.typ !== RECEIPT_JWS_TYPE) throw new Error(`typ ${String(result.protectedHeader.typ)} is not ${RECEIPT_JWS_TYPE}`);
    verified = { kid: String(result.protectedHeader.kid), payload: new TextDecoder().decode(result.payload) };
    checks.push(pass('signature', `EdDSA signature by trusted key ${verified.kid}`));
  } catch (error) {
    checks.push(
      unknownKid !== undefined
        ? fail('signature', 'AGENT_RECEIPT_KEY_UNKNOWN', `signed by key ${unknownKid}, which GET /v1/keys does not list`)
        : fail('signature', 'AGENT_RECEIPT_SIGNATURE_INVALID', `the receipt's JWS does not verify (${(error as Error).message})`),
    );
  }

  if (verified === undefined) {
    checks.push(skip('payload', 'needs a verified signature'), skip('signer', 'needs a verified signature'));
    return { checks, kid: null };
  }
  checks.push(
    canonical !== undefined && verified.payload === canonical
      ? pass('payload', 'the JWS signs exactly this receipt (canonical body)')
      : fail('payload', 'AGENT_RECEIPT_PAYLOAD_MISMATCH', 'the JWS signs another body than this receipt'),
  );
  const signerRef = document.receipt['signer_ref'];
  const signature = document.receipt['signature'];
  if (signerRef !== verified.kid) checks.push(fail('signer', 'AGENT_RECEIPT_SIGNER_MISMATCH', `signed by ${verified.kid}, but signer_ref names ${typeof signerRef === 'string' ? signerRef : 'nobody'}`));
  else if (typeof signature !== 'string' || detachedForm(signature) !== detachedForm(document.jws)) checks.push(fail('signer', 'AGENT_RECEIPT_SIGNER_MISMATCH', "the receipt's signature is not its JWS's signature"));
  else checks.push(pass('signer', `signer_ref ${verified.kid} made the receipt's signature`));
  return { checks, kid: verified.kid };
}

/** The receipt against its task's receipt.issued events: listed with its hash, and linked to the one before. */
async function logChecks(document: ReceiptDocument, taskReceipts: readonly TimelineReceipt[], previousReceipt: ReceiptDocument | undefined, jwks: JsonWebKeySet): Promise<ReceiptCheck[]> {
  const id = document.receipt?.['receipt_id'];
  const hash = document.receipt?.['receipt_hash'] ?? null;
  // A receipt is immutable: the first receipt.issued of an id is the receipt (later copies are redeliveries).
  const distinct: TimelineReceipt[] = [];
  for (const entry of taskReceipts) if (!distinct.some((seen) => seen.receiptId === entry.receiptId)) distinct.push(entry);
  const index = distinct.findIndex((entry) => entry.receiptId === id);
  if (index < 0) return [fail('event', 'AGENT_RECEIPT_EVENT_MISMATCH', `the task's timeline has no receipt.issued for ${String(id)}`), skip('chain', 'needs the receipt.issued event')];
  const logged = distinct[index] as TimelineReceipt;
  const checks: ReceiptCheck[] = [
    logged.receiptHash === hash
      ? pass('event', `the task's log lists it with this hash (receipt ${index + 1} of the task)`)
      : fail('event', 'AGENT_RECEIPT_EVENT_MISMATCH', `the task's log lists ${String(id)} with hash ${String(logged.receiptHash)}, not ${String(hash)}`),
  ];
  const previous = index === 0 ? undefined : distinct[index - 1];
  const link = document.receipt['prev_receipt_hash'] ?? null;
  const previousHash = previous === undefined ? null : previous.receiptHash;
  if (link !== previousHash) {
    checks.push(fail('chain', 'AGENT_RECEIPT_CHAIN_BROKEN', `prev_receipt_hash is ${String(link)}, the task's previous receipt hashes to ${String(previousHash ?? 'null (none)')}`));
  } else if (previous === undefined) {
    checks.push(pass('chain', 'the first receipt of the task: prev_receipt_hash is null'));
  } else if (previousReceipt === undefined) {
    checks.push(skip('chain', `prev_receipt_hash names ${previous.receiptId}, which was not given to check`));
  } else if (previousReceipt.receipt['receipt_id'] !== previous.receiptId || previousReceipt.receipt['receipt_hash'] !== previousHash) {
    checks.push(fail('chain', 'AGENT_RECEIPT_CHAIN_BROKEN', `the previous receipt given is not ${previous.receiptId} with hash ${String(previousHash)}`));
  } else {
    // The link is only worth something if what it points at is itself a genuine receipt.
    const own = (await verifyCore(previousReceipt, await trustedKeys(jwks))).checks.find((check) => check.result === 'fail');
    checks.push(
      own === undefined
        ? pass('chain', `prev_receipt_hash links to the previous receipt ${previous.receiptId} (hashed and signed)`)
        : fail('chain', 'AGENT_RECEIPT_CHAIN_BROKEN', `the previous receipt ${previous.receiptId} does not verify: ${own.message}`),
    );
  }
  return checks;
}

/** RFC 8785 of the receipt without `receipt_hash` and `signature`: what is hashed and signed. */
function canonicalBody(receipt: Readonly<Record<string, unknown>> | undefined): string | undefined {
  if (receipt === null || typeof receipt !== 'object') return undefined;
  const { receipt_hash: _hash, signature: _signature, ...body } = receipt;
  try {
    return canonicalize(body);
  } catch {
    return undefined;
  }
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** `<header>..<signature>`: a compact JWS with its payload detached. */
function detachedForm(jws: string): string {
  const [header, , signature] = jws.split('.');
  return `${header ?? ''}..${signature ?? ''}`;
}
