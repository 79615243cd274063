import { Id, parseContract, type EventEnvelope, type SignedTreeHead } from '@writ/contracts';
import { KeySet, importEd25519PublicJwk } from '@writ/crypto';
import { PublicKeySet, checkTreeHead as checkSignedTreeHead } from '@writ/verification';
import { keyValidAt, keyWindows } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';

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
 * The check is `@writ/verification`'s, which the web console runs too.
 */
export async function checkTreeHead(head: SignedTreeHead, keys: KeySet, principalId: string): Promise<TlogCheck> {
  const checked = await checkSignedTreeHead(head, await PublicKeySet.fromJwks(keys.toJwks()));
  return {
    check: 'tree_head',
    pass: checked.result === 'pass',
    detail: `${checked.message.replace('a trusted key', `a key of ${principalId} valid then`)}${checked.result === 'pass' ? ` (${principalId})` : ''}`,
  };
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
