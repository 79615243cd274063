import {
  Id,
  TREE_HEAD_JWS_TYPE,
  TreeHead,
  hasErrorCode,
  parseContract,
  type EventEnvelope,
  type SignedTreeHead,
} from '@writ/contracts';
import { KeySet, canonicalJson, importEd25519PublicJwk, verifyJws } from '@writ/crypto';
import { keyValidAt, keyWindows } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { cell } from '../format.js';

/** One check `writ tlog head|prove` makes locally, printed PASS / FAIL. */
export interface TlogCheck {
  readonly check: 'tree_head' | 'receipt' | 'inclusion';
  readonly pass: boolean;
  readonly detail: string;
}

/** The receipt service principal whose keys sign tree heads: `--principal`, else WRIT_RECEIPT_PRINCIPAL_ID, else `writ-receipt`. */
export function receiptPrincipal(io: CliIo, flag: string | undefined): string {
  return parseContract('--principal', Id, flag ?? (io.env['WRIT_RECEIPT_PRINCIPAL_ID'] || 'writ-receipt'));
}

/**
 * The keys a tree head (or receipt) dated `at` may be signed with, from the
 * principal's events: each key valid at `at` (`keyWindows` of @writ/runtime:
 * added before it, not revoked before it; a key retired later still verifies
 * what it signed while valid).
 */
export async function keysValidAt(events: readonly Pick<EventEnvelope, 'event_type' | 'payload'>[], at: string): Promise<KeySet> {
  const valid = keyWindows(events).filter((window) => keyValidAt(window, at));
  return KeySet.of(await Promise.all(valid.map((window) => importEd25519PublicJwk(window.jwk))));
}

/**
 * The head's signature: a compact EdDSA JWS, `typ` writ-tree-head+jws, by a
 * key of the receipt principal valid at the head's timestamp whose kid is
 * `signer_ref`, over exactly the RFC 8785 form of the head's four fields.
 */
export async function checkTreeHead(head: SignedTreeHead, keys: KeySet, principalId: string): Promise<TlogCheck> {
  const summary = `log ${cell(head.log_id)}, ${head.tree_size} leaves, root ${head.root_hash}, ${cell(head.timestamp)}`;
  let payload: string;
  let kid: string;
  try {
    const verified = await verifyJws(head.jws, keys, { typ: TREE_HEAD_JWS_TYPE });
    payload = new TextDecoder().decode(verified.payload);
    kid = verified.kid;
  } catch (error) {
    const code = hasErrorCode(error) ? error.code : 'JWS_INVALID';
    return { check: 'tree_head', pass: false, detail: `${summary}: the signature does not verify with a key of ${principalId} valid then (${code})` };
  }
  const expected = canonicalJson(parseContract('TreeHead', TreeHead, { log_id: head.log_id, tree_size: head.tree_size, root_hash: head.root_hash, timestamp: head.timestamp }));
  if (payload !== expected) return { check: 'tree_head', pass: false, detail: `${summary}: the JWS signs another head than this one` };
  if (kid !== head.signer_ref) return { check: 'tree_head', pass: false, detail: `${summary}: signed by ${cell(kid)}, not its signer_ref ${cell(head.signer_ref)}` };
  return { check: 'tree_head', pass: true, detail: `${summary}; signed by ${cell(kid)} (${principalId})` };
}

/** Prints the checks, then fails with CLI_TLOG_UNVERIFIED when one did not pass. */
export function reportChecks(io: CliIo, checks: readonly TlogCheck[], what: string, json: boolean, document: Readonly<Record<string, unknown>>): void {
  const ok = checks.every((check) => check.pass);
  if (json) io.stdout(JSON.stringify({ ...document, ok, checks }));
  else for (const check of checks) io.stdout(`  ${check.pass ? 'PASS' : 'FAIL'}  ${check.check.padEnd(9)}  ${check.detail}`);
  if (!ok) {
    const failed = checks.filter((check) => !check.pass).map((check) => check.check);
    throw new CliError('CLI_TLOG_UNVERIFIED', `${what} does not verify: ${failed.join(', ')}`, { details: { failed } });
  }
}
