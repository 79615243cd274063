import { ReceiptBundle, TREE_HEAD_JWS_TYPE, type BundleKey, type BundledReceipt, type EventEnvelope, type TrustAnchor } from '@writ/contracts';
import { KeySet, canonicalJson, importEd25519PublicJwk, verifyJws, type Ed25519PublicKey } from '@writ/crypto';
import { verifyEventChain } from '@writ/eventstore';
import { verifyReceiptDocument, type ReceiptCheck } from '../receipt-verification.js';
import { bundleHashOf } from './bundle-seal.js';
import { issuedReceipts } from './assemble-bundle.js';
import { inclusionFailure } from './inclusion.js';
import {
  DIRECTOR_DECISIONS,
  RegistrationAuthority,
  approvalIdOf,
  checkResolutionAuthority,
  describeWindow,
  keyHistory,
  keyValidAt,
  principalHistory,
  requestedApproval,
  type AuthorityVerdict,
  type PrincipalEventLike,
  type PrincipalHistoryLookup,
  type RegistrationAuthorityCode,
  type RegistrationCheck,
  type ResolutionAuthorityCode,
} from '@writ/runtime';
import { valueAt } from './json-pointer.js';
import { notAssertedFor } from './not-asserted.js';
import { SegmentIndex, resolveReferences } from './receipt-references.js';
import { verifyTreeHead } from './tree-head.js';

/**
 * Offline verification of a receipt bundle (`writ verify <bundle>`): the
 * bundle and, optionally, trust material passed in; no network, no clock.
 * Every check is listed, passed or not, so a reader sees what was checked
 * and what was not.
 */

/** `writ-grant+jwt`: the `typ` of a capability grant (services/approval `GRANT_JWS_TYPE`). */
export const GRANT_JWS_TYPE = 'writ-grant+jwt';

export type BundleCheckName =
  | 'bundle.json'
  | 'bundle.canonical'
  | 'bundle.schema'
  | 'bundle.seal'
  | 'keys.history'
  | 'events.chain'
  | 'events.quarantine'
  | 'events.author'
  | 'receipts.complete'
  | 'approval.authority'
  | 'principals.authority'
  | 'receipt.event'
  | 'receipt.chain_head'
  | `receipt.${ReceiptCheck['name']}`
  | 'receipt.key'
  | 'receipt.chain'
  | 'receipt.references'
  | 'receipt.attestation'
  | 'receipt.grant'
  | 'receipt.inclusion'
  | 'tree_head.signature'
  | 'not_asserted'
  | 'trust.anchor'
  | 'log.head'
  | 'log.consistency';

/** Why a check failed. Closed; tests and scripts branch on the code. */
export type BundleCheckCode =
  | 'BUNDLE_NOT_JSON'
  | 'BUNDLE_NOT_CANONICAL'
  | 'BUNDLE_SCHEMA_INVALID'
  | 'BUNDLE_SEAL_MISMATCH'
  | 'BUNDLE_KEYS_MISMATCH'
  | 'BUNDLE_CHAIN_BROKEN'
  | 'BUNDLE_RECEIPTS_INCOMPLETE'
  | 'BUNDLE_RECEIPT_EVENT_MISMATCH'
  | 'BUNDLE_CHAIN_HEAD_MISMATCH'
  | NonNullable<ReceiptCheck['code']>
  | 'RECEIPT_KEY_NOT_VALID'
  | 'RECEIPT_CHAIN_BROKEN'
  | 'BUNDLE_REFERENCE_UNRESOLVED'
  | 'BUNDLE_REFERENCES_MISMATCH'
  | 'BUNDLE_ATTESTATION_MISMATCH'
  | 'GRANT_UNSIGNED'
  | 'GRANT_SIGNATURE_INVALID'
  | 'GRANT_CLAIMS_MISMATCH'
  | 'GRANT_KEY_NOT_VALID'
  | 'BUNDLE_INCLUSION_INVALID'
  | 'TREE_HEAD_SIGNATURE_INVALID'
  | 'TREE_HEAD_KEY_NOT_VALID'
  | 'BUNDLE_NOT_ASSERTED_MISMATCH'
  | 'TRUST_KEY_UNTRUSTED'
  | 'LOG_INCONSISTENT'
  /** `approval.authority`: a director's decision without the authority it claims (`@writ/runtime` ResolutionAuthority). */
  | ResolutionAuthorityCode
  /** `principals.authority`: a registration, key or role that does not chain to the trust anchor (`@writ/runtime` RegistrationAuthority). */
  | RegistrationAuthorityCode
  /** `principals.authority`: the trust anchor given to the verifier is not the one the bundle carries. */
  | 'BUNDLE_TRUST_ANCHOR_MISMATCH'
  /** `principals.authority`: neither the bundle nor the verifier has a trust anchor: no registration can be checked. */
  | 'BUNDLE_TRUST_ANCHOR_MISSING';

/**
 * `unanchored`: the check could not be anchored outside the bundle (no
 * trusted JWKS was given): shown, never counted as a pass. `skip`: the check
 * needs one that failed. `quarantined`: a message stored on the task's
 * subject that is not an event of its chain, skipped by every reader
 * (invariant 10): shown, neither a pass nor a failure.
 */
export type BundleCheckStatus = 'pass' | 'fail' | 'skip' | 'unanchored' | 'quarantined';

export interface BundleCheck {
  readonly check: BundleCheckName;
  /** What was checked: `bundle`, `task <id>`, `receipt <id>`, `tree head <log>@<size>`, ... */
  readonly subject: string;
  readonly status: BundleCheckStatus;
  readonly detail: string;
  readonly code?: BundleCheckCode;
}

export interface BundleVerification {
  /** No check failed or was skipped (an `unanchored` trust check does not fail it). */
  readonly ok: boolean;
  /** The keys were found in the trusted JWKS. */
  readonly anchored: boolean;
  readonly checks: readonly BundleCheck[];
  /** What the bundle is about, once it parsed as a bundle. */
  readonly bundle?: {
    readonly task_id: string;
    readonly receipts: number;
    readonly events: number;
    readonly log_id: string;
    readonly tree_size: number;
    readonly bundle_hash: string;
  };
}

export interface BundleVerifyOptions {
  /** Keys obtained independently of the bundle (`--trust <jwks.json>`): every key a check relied on must be among them. */
  readonly trusted?: KeySet;
  /** Where the trusted keys came from, for the check's detail. */
  readonly trustSource?: string;
  /**
   * Seam (issue 12, operator-signed registrations): checks that a director's registration was
   * itself authorized back to a trust anchor. Without it, `approval.authority` takes the
   * registration as the bundle's hash-chained principal events hold it, and says so.
   */
  readonly registrations?: RegistrationCheck;
  /**
   * The deployment's trust anchor obtained independently of the bundle (`--trust-anchor <file>`;
   * WRIT_TRUST_ANCHOR with `--task`): every registration must chain to it, and a bundle carrying
   * another one fails. Without it, the bundle's own `trust_anchor` is used (and said so).
   */
  readonly trustAnchor?: TrustAnchor;
  readonly trustAnchorSource?: string;
}

type Status = BundleCheckStatus;
const check = (name: BundleCheckName, subject: string, status: Status, detail: string, code?: BundleCheckCode): BundleCheck =>
  code === undefined ? { check: name, subject, status, detail } : { check: name, subject, status, detail, code };
const pass = (name: BundleCheckName, subject: string, detail: string) => check(name, subject, 'pass', detail);
const fail = (name: BundleCheckName, subject: string, code: BundleCheckCode, detail: string) => check(name, subject, 'fail', detail, code);
const skip = (name: BundleCheckName, subject: string, detail: string) => check(name, subject, 'skip', detail);

const same = (a: unknown, b: unknown): boolean => {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
};

/** A principal's keys as the bundle's key events describe them, imported for verification. */
interface PrincipalKeys {
  readonly keys: readonly BundleKey[];
  readonly set: KeySet;
}

/** A key a check relied on (for the trust anchor). */
interface UsedKey {
  readonly principal_id: string;
  readonly kid: string;
  readonly x: string;
}

async function importKeys(history: readonly BundleKey[]): Promise<Map<string, PrincipalKeys>> {
  const byPrincipal = new Map<string, { keys: BundleKey[]; imported: Ed25519PublicKey[] }>();
  for (const key of history) {
    const entry = byPrincipal.get(key.principal_id) ?? { keys: [], imported: [] };
    byPrincipal.set(key.principal_id, entry);
    // A principal listed twice yields its keys twice: the first stands (keys.history fails the bundle for it).
    if (entry.keys.some((known) => known.jwk.kid === key.jwk.kid)) continue;
    try {
      entry.imported.push(await importEd25519PublicJwk(key.jwk));
      entry.keys.push(key);
    } catch {
      // A key that cannot be imported verifies nothing; the signatures it made fail on their own.
    }
  }
  return new Map([...byPrincipal].map(([principalId, entry]) => [principalId, { keys: entry.keys, set: KeySet.of(entry.imported) }]));
}

/** Verifies the bundle file (its bytes, or its text): UTF-8 JSON, exactly its RFC 8785 form, then everything `verifyBundle` checks. */
export async function verifyBundleText(file: string | Uint8Array, options: BundleVerifyOptions = {}): Promise<BundleVerification> {
  let text: string;
  let value: unknown;
  try {
    text = typeof file === 'string' ? file : new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(file);
    value = JSON.parse(text) as unknown;
  } catch {
    return { ok: false, anchored: false, checks: [fail('bundle.json', 'bundle', 'BUNDLE_NOT_JSON', 'the file is not UTF-8 JSON')] };
  }
  let canonical: string | undefined;
  try {
    canonical = canonicalJson(value);
  } catch {
    canonical = undefined;
  }
  const form =
    canonical === text
      ? pass('bundle.canonical', 'bundle', `the file is exactly the RFC 8785 form of the bundle (${text.length} bytes)`)
      : fail('bundle.canonical', 'bundle', 'BUNDLE_NOT_CANONICAL', 'the file is not the RFC 8785 form of its content: its bytes were changed (or it was re-serialized)');
  const verification = await verifyBundle(value, options);
  const checks = [form, ...verification.checks];
  return { ...verification, ok: verification.ok && form.status === 'pass', checks };
}

/** Verifies a parsed bundle: every check of docs/verification.md, in order. */
export async function verifyBundle(value: unknown, options: BundleVerifyOptions = {}): Promise<BundleVerification> {
  const checks: BundleCheck[] = [];
  const parsed = ReceiptBundle.safeParse(value);
  if (!parsed.success) {
    const paths = parsed.error.issues.slice(0, 5).map((issue) => issue.path.join('.') || '(root)');
    checks.push(fail('bundle.schema', 'bundle', 'BUNDLE_SCHEMA_INVALID', `not a ${'writ.receipt-bundle.v1'} bundle: ${paths.join(', ')}${parsed.error.issues.length > 5 ? ', …' : ''}`));
    checks.push(skip('bundle.seal', 'bundle', 'the remaining checks need a bundle that matches the ReceiptBundle contract'));
    return { ok: false, anchored: false, checks };
  }
  // Everything below reads the raw value: the contract's objects are strict, so it holds exactly what parsed.
  const bundle = value as ReceiptBundle;
  checks.push(pass('bundle.schema', 'bundle', `a ${bundle.bundle_version} bundle of task ${bundle.task_id}`));

  let seal: string;
  try {
    seal = bundleHashOf(bundle);
  } catch {
    // A value RFC 8785 has no form for (a non-finite number where the contract allows any JSON): nothing can be recomputed.
    checks.push(fail('bundle.seal', 'bundle', 'BUNDLE_SEAL_MISMATCH', 'the bundle holds a value RFC 8785 cannot canonicalize (a non-finite number): it is not the bundle that was sealed'));
    return { ok: false, anchored: false, checks };
  }
  checks.push(
    seal === bundle.bundle_hash
      ? pass('bundle.seal', 'bundle', `bundle_hash ${seal} is the SHA-256 of the canonical bundle`)
      : fail('bundle.seal', 'bundle', 'BUNDLE_SEAL_MISMATCH', `bundle_hash does not match the content (recomputed ${seal})`),
  );

  // Keys: folded from the principals' own hash-chained key events; the bundle's `keys` list must be that fold.
  const history = keyHistory(bundle.principals);
  checks.push(checkKeyHistory(bundle, history));
  const keys = await importKeys(history);

  const taskSubject = `task ${bundle.task_id}`;
  const chain = verifyEventChain(bundle.events, { taskId: bundle.task_id });
  const lastSeq = bundle.events.at(-1)?.task_seq ?? 0;
  checks.push(
    chain.ok
      ? pass('events.chain', taskSubject, `${chain.length} events, task_seq 1..${lastSeq}: every hash recomputes and links to its predecessor from genesis (head ${chain.head.hash ?? '-'})`)
      : fail('events.chain', taskSubject, 'BUNDLE_CHAIN_BROKEN', `${chain.reason} at task_seq ${chain.taskSeq} (position ${chain.index}): ${chain.detail}`),
  );

  const issued = issuedReceipts(bundle.events);
  const bundledIds = bundle.receipts.map((receipt) => receipt.event_id);
  const issuedIds = issued.map((receipt) => receipt.event_id);
  const lastIssued = issued.at(-1);
  if (!same(bundledIds, issuedIds)) {
    checks.push(fail('receipts.complete', taskSubject, 'BUNDLE_RECEIPTS_INCOMPLETE', `the bundle lists receipt events [${bundledIds.join(', ')}], the segment holds [${issuedIds.join(', ')}]`));
  } else if (lastIssued === undefined || lastIssued.position !== bundle.events.length - 1) {
    checks.push(fail('receipts.complete', taskSubject, 'BUNDLE_RECEIPTS_INCOMPLETE', 'the segment does not end with its last receipt.issued event'));
  } else {
    checks.push(pass('receipts.complete', taskSubject, `all ${issued.length} receipt.issued events of the segment are bundled, in log order; the segment ends with the last`));
  }

  // Every registration, key and role of the bundled principals: authorized by an operator, back to the trust anchor.
  const histories = new Map(bundle.principals.map((principal) => [principal.principal_id, principal.events]));
  const authority = principalsAuthority(bundle, histories, options);
  checks.push(...(await authority.checks()));
  const registrations = options.registrations ?? authority.registrations;
  // Every director's decision in the segment: signed by a director (then), not the requester, over its packet.
  checks.push(
    ...(await approvalAuthorityChecks(bundle.events, (id) => principalHistory(id, histories.get(id) ?? []), {
      ...(registrations === undefined ? {} : { registrations }),
      source: 'the bundle',
    })),
  );

  const index = new SegmentIndex(bundle.events);
  const used: UsedKey[] = [];
  for (const [position, bundled] of bundle.receipts.entries()) {
    const previous = position === 0 ? null : (bundle.receipts[position - 1] as BundledReceipt).receipt.receipt_hash ?? null;
    checks.push(...(await checkReceipt(bundle, bundled, previous, index, keys, used)));
  }
  checks.push(await checkTreeHead(bundle, keys, used));

  checks.push(
    same(notAssertedFor(bundle), bundle.not_asserted)
      ? pass('not_asserted', 'bundle', `${bundle.not_asserted.length} statements of what the bundle does not prove, as derived from its content`)
      : fail('not_asserted', 'bundle', 'BUNDLE_NOT_ASSERTED_MISMATCH', 'the not_asserted statements are not the ones derived from the bundle: one was dropped, changed or added'),
  );

  const anchor = checkTrust(used, options);
  checks.push(anchor);
  return {
    ok: checks.every((entry) => entry.status === 'pass' || entry.status === 'unanchored' || entry.status === 'quarantined'),
    anchored: anchor.status === 'pass',
    checks,
    bundle: {
      task_id: bundle.task_id,
      receipts: bundle.receipts.length,
      events: bundle.events.length,
      log_id: bundle.tree_head.log_id,
      tree_size: bundle.tree_head.tree_size,
      bundle_hash: bundle.bundle_hash,
    },
  };
}

/**
 * `approval.authority`, one per director's decision (`approval.granted`, `approval.denied`) among
 * `events`: the decision carries the director's signed ApprovalResolution, and it holds against the
 * signer's history as `lookup` gives it (a key valid when signed, the director role, not the
 * requester, this approval, decision and packet, signed while pending): the very check the services
 * make before they act on it (`@writ/runtime` checkResolutionAuthority). A decision refused on the
 * record (`approval.resolution_refused`) still fails: the log holds a resolution nobody with
 * authority made, and the detail says it authorized nothing. The director's key is not a service key
 * (`--trust` anchors those): what anchors a director is its registration, which `registrations` (a
 * seam) checks; without it the detail says the registration was taken as the log holds it.
 * `from`: check only the decisions from that position on (the earlier events still give context).
 */
export async function approvalAuthorityChecks(
  events: readonly EventEnvelope[],
  lookup: PrincipalHistoryLookup,
  options: { readonly registrations?: RegistrationCheck; readonly source: string; readonly from?: number },
): Promise<BundleCheck[]> {
  const checks: BundleCheck[] = [];
  for (const [position, event] of events.entries()) {
    if (position < (options.from ?? 0) || !DIRECTOR_DECISIONS.includes(event.event_type)) continue;
    const approvalId = approvalIdOf(event) ?? '(none)';
    const subject = `approval ${approvalId}`;
    const refusal = events.find((other) => other.event_type === 'approval.resolution_refused' && other.payload['resolution_event_id'] === event.event_id);
    const onRecord = refusal === undefined ? '' : `; refused on the record by ${refusal.actor_id} (${String(refusal.payload['code'])}): it authorized nothing`;
    const approval = requestedApproval(events.slice(0, position), approvalId);
    if (approval === undefined) {
      checks.push(fail('approval.authority', subject, 'APPROVAL_RESOLUTION_MISMATCH', `${event.event_type} ${event.event_id} resolves no approval requested before it${onRecord}`));
      continue;
    }
    const result = await checkResolutionAuthority(event, approval, lookup, options.registrations === undefined ? {} : { registration: options.registrations });
    if (!result.ok) {
      const missing = result.details['reason'] === 'unknown_principal' ? ` (${options.source} holds no key events of it)` : '';
      checks.push(fail('approval.authority', subject, result.code, `${result.message}${missing}${onRecord}`));
    } else if (result.signed) {
      const registration =
        options.registrations === undefined
          ? `its registration is taken as ${options.source}'s principal events hold it (not checked against an operator trust anchor)`
          : 'its registration is authorized';
      checks.push(
        pass(
          'approval.authority',
          subject,
          `${event.event_type} ${event.event_id}: a ${result.resolution.decision} signed by ${result.key.jwk.kid} of ${result.signer.principal_id}, a director (not the requester ${approval.requested_by}) whose key was valid at ${result.resolution.resolved_at}, over packet ${result.resolution.packet_hash}; ${registration}`,
        ),
      );
    }
  }
  return checks;
}

/**
 * `principals.authority`, one per bundled principal: its registration (type, roles) and every key
 * it held were authorized by an operator back to the trust anchor (`@writ/runtime`
 * RegistrationAuthority, the check the executor makes of a grant issuer's key): the verifier's own
 * anchor (`trustAnchor`) when given, else the bundle's. With none, it fails
 * (BUNDLE_TRUST_ANCHOR_MISSING), and so does every director's authority.
 */
export function principalsAuthority(
  bundle: Pick<ReceiptBundle, 'principals' | 'trust_anchor'>,
  histories: ReadonlyMap<string, readonly PrincipalEventLike[]>,
  options: Pick<BundleVerifyOptions, 'trustAnchor' | 'trustAnchorSource'>,
): { readonly registrations: RegistrationCheck; checks(): Promise<BundleCheck[]> } {
  const subject = `principals ${bundle.principals.map((principal) => principal.principal_id).join(', ')}`;
  const given = options.trustAnchor;
  const carried = bundle.trust_anchor;
  if (given !== undefined && carried !== undefined && !same(given, carried)) {
    const mismatch = fail(
      'principals.authority',
      subject,
      'BUNDLE_TRUST_ANCHOR_MISMATCH',
      `the bundle carries the trust anchor ${carried.principal_id} (${carried.keys.map((key) => key.kid).join(', ')}), not ${options.trustAnchorSource ?? 'the given one'} (${given.principal_id}: ${given.keys.map((key) => key.kid).join(', ')})`,
    );
    return { registrations: () => 'BUNDLE_TRUST_ANCHOR_MISMATCH: the bundle carries another trust anchor', checks: async () => [mismatch] };
  }
  const anchor = given ?? carried;
  if (anchor === undefined) {
    return {
      // Not a mere UNANCHORED: stripping the anchor from a bundle must not switch the check off.
      registrations: () => 'BUNDLE_TRUST_ANCHOR_MISSING: no trust anchor to check the registration against',
      checks: async () => [
        fail(
          'principals.authority',
          subject,
          'BUNDLE_TRUST_ANCHOR_MISSING',
          'the bundle carries no trust anchor and none was given: no registration, key or role can be checked back to an operator (pass --trust-anchor <trust-anchor.json> of the deployment)',
        ),
      ],
    };
  }
  const whose = given !== undefined ? (options.trustAnchorSource ?? 'the given trust anchor') : "the bundle's own trust anchor (pin it with --trust-anchor)";
  const authority = new RegistrationAuthority((id) => histories.get(id), anchor);
  return {
    registrations: authority.registrationCheck(),
    checks: async () => {
      const checks: BundleCheck[] = [];
      for (const principal of bundle.principals) {
        const about = `principal ${principal.principal_id}`;
        const verdicts = await authority.check(principal.principal_id);
        if (verdicts === undefined) {
          checks.push(fail('principals.authority', about, 'REGISTRATION_UNSIGNED', `the bundle holds no registration of ${principal.principal_id}`));
          continue;
        }
        const refused = [verdicts.registration, ...verdicts.keys.values()].find((verdict): verdict is Extract<AuthorityVerdict, { ok: false }> => verdict !== undefined && !verdict.ok);
        if (refused !== undefined) {
          checks.push(fail('principals.authority', about, refused.code, refused.message));
          continue;
        }
        const via = verdicts.registration?.ok === true ? verdicts.registration : undefined;
        const how = via?.via === 'enrollment' ? `a service enrolled by ${via.signer}` : `registered by ${via?.signer ?? '?'}`;
        checks.push(
          pass('principals.authority', about, `${how}; its roles and ${verdicts.keys.size} key(s) were each authorized by an operator at the time, back to ${whose} ${anchor.principal_id}`),
        );
      }
      return checks;
    },
  };
}

function checkKeyHistory(bundle: ReceiptBundle, history: readonly BundleKey[]): BundleCheck {
  const subject = `principals ${bundle.principals.map((principal) => principal.principal_id).join(', ')}`;
  const ids = bundle.principals.map((principal) => principal.principal_id);
  if (new Set(ids).size !== ids.length) return fail('keys.history', subject, 'BUNDLE_KEYS_MISMATCH', 'a principal appears twice');
  for (const principal of bundle.principals) {
    const stray = principal.events.find((event) => event.entity_type !== 'principal' || event.entity_id !== principal.principal_id);
    if (stray !== undefined) return fail('keys.history', subject, 'BUNDLE_KEYS_MISMATCH', `event ${stray.event_id} is not about principal ${principal.principal_id}`);
    const chain = verifyEventChain(principal.events, { taskId: principal.principal_id });
    if (!chain.ok) return fail('keys.history', subject, 'BUNDLE_KEYS_MISMATCH', `the key events of ${principal.principal_id}: ${chain.reason} at seq ${chain.taskSeq}: ${chain.detail}`);
  }
  if (!same(history, bundle.keys)) return fail('keys.history', subject, 'BUNDLE_KEYS_MISMATCH', 'the keys listed are not the key history the principal events describe');
  return pass('keys.history', subject, `${history.length} key(s) with validity windows, folded from hash-chained principal events`);
}

/**
 * The signed receipt names the task's last event before it (`event_chain_head`),
 * and the receipt's event must follow it directly: then the signature covers
 * every earlier event of the segment, and rewriting one (even with every later
 * hash recomputed) breaks a signed value.
 */
function checkChainHead(bundle: ReceiptBundle, receipt: ReceiptBundle['receipts'][number]['receipt'], event: EventEnvelope | undefined, subject: string): BundleCheck {
  const head = receipt.event_chain_head;
  if (head === undefined) {
    return pass('receipt.chain_head', subject, 'the receipt names no event chain head (issued before receipts bound it): earlier events are bound by their hash chain and by the hashes the receipt names, not by its signature');
  }
  if (event === undefined) return skip('receipt.chain_head', subject, 'needs the receipt.issued event in the segment');
  const named = bundle.events[head.task_seq - 1] as EventEnvelope | undefined;
  if (named === undefined || named.task_seq !== head.task_seq || named.hash !== head.event_hash) {
    return fail('receipt.chain_head', subject, 'BUNDLE_CHAIN_HEAD_MISMATCH', `the signed chain head is task_seq ${head.task_seq} with hash ${head.event_hash}; the segment holds ${named === undefined ? 'no such event' : `hash ${named.hash} there`}`);
  }
  if (event.task_seq !== head.task_seq + 1) {
    return fail('receipt.chain_head', subject, 'BUNDLE_CHAIN_HEAD_MISMATCH', `the receipt was built on task_seq ${head.task_seq} but appended at ${event.task_seq}`);
  }
  return pass('receipt.chain_head', subject, `signed over the chain head task_seq ${head.task_seq} (${head.event_hash.slice(0, 16)}…): every earlier event is covered by the receipt's signature`);
}

async function checkReceipt(
  bundle: ReceiptBundle,
  bundled: BundledReceipt,
  previousHash: string | null,
  index: SegmentIndex,
  keys: ReadonlyMap<string, PrincipalKeys>,
  used: UsedKey[],
): Promise<BundleCheck[]> {
  const receipt = bundled.receipt;
  const subject = `receipt ${receipt.receipt_id}`;
  const checks: BundleCheck[] = [];

  const position = index.positionOf(bundled.event_id);
  const event = position === undefined ? undefined : (bundle.events[position] as EventEnvelope);
  if (event === undefined || event.event_type !== 'receipt.issued') {
    checks.push(fail('receipt.event', subject, 'BUNDLE_RECEIPT_EVENT_MISMATCH', `event ${bundled.event_id} is not a receipt.issued of the segment`));
  } else if (!same(event.payload['receipt'], receipt) || event.payload['jws'] !== bundled.jws) {
    checks.push(fail('receipt.event', subject, 'BUNDLE_RECEIPT_EVENT_MISMATCH', `the receipt or its JWS differs from the payload of receipt.issued ${event.event_id}`));
  } else {
    checks.push(pass('receipt.event', subject, `exactly the payload of receipt.issued ${event.event_id} (task_seq ${event.task_seq}), appended by ${event.actor_id}`));
  }

  checks.push(checkChainHead(bundle, receipt, event, subject));

  // The signer is the principal that appended the receipt: its keys, and only its keys, may have signed it.
  const signer = event?.actor_id;
  const signerKeys = signer === undefined ? undefined : keys.get(signer);
  const document = await verifyReceiptDocument({ receiptId: receipt.receipt_id, receipt, jws: bundled.jws }, signerKeys?.set ?? KeySet.of([]));
  for (const entry of document.checks) {
    const name = `receipt.${entry.name}` as const;
    checks.push(entry.result === 'fail' ? fail(name, subject, entry.code ?? 'RECEIPT_INVALID', entry.message) : check(name, subject, entry.result, entry.message));
  }
  const key = document.kid === null ? undefined : signerKeys?.keys.find((candidate) => candidate.jwk.kid === document.kid);
  if (document.kid === null || key === undefined) {
    checks.push(skip('receipt.key', subject, `needs a signature verified by a key of ${signer ?? 'the appending principal'}`));
  } else if (!keyValidAt(key, receipt.created_at)) {
    checks.push(fail('receipt.key', subject, 'RECEIPT_KEY_NOT_VALID', `key ${key.jwk.kid} of ${key.principal_id} was not valid at created_at ${receipt.created_at} (${describeWindow(key)})`));
  } else {
    used.push({ principal_id: key.principal_id, kid: key.jwk.kid, x: key.jwk.x });
    checks.push(pass('receipt.key', subject, `key ${key.jwk.kid} of ${key.principal_id} was valid at created_at ${receipt.created_at} (${describeWindow(key)})`));
  }

  const link = receipt.prev_receipt_hash ?? null;
  checks.push(
    link === previousHash
      ? pass('receipt.chain', subject, previousHash === null ? 'the first receipt of the task: prev_receipt_hash is null' : `prev_receipt_hash links to the previous receipt (${previousHash})`)
      : fail('receipt.chain', subject, 'RECEIPT_CHAIN_BROKEN', `prev_receipt_hash is ${link ?? 'null'}, the previous receipt's hash is ${previousHash ?? 'null (none)'}`),
  );

  const resolution = position === undefined ? undefined : resolveReferences(receipt, index, position);
  if (resolution === undefined) {
    checks.push(skip('receipt.references', subject, 'needs the receipt.issued event in the segment'));
  } else if (resolution.unresolved.length > 0) {
    const listed = resolution.unresolved.slice(0, 3).map((ref) => `${ref.field} ${ref.ref}: ${ref.why}`);
    checks.push(fail('receipt.references', subject, 'BUNDLE_REFERENCE_UNRESOLVED', `${resolution.unresolved.length} reference(s) do not resolve in the segment before the receipt: ${listed.join('; ')}`));
  } else if (!same(resolution.references, bundled.references)) {
    checks.push(fail('receipt.references', subject, 'BUNDLE_REFERENCES_MISMATCH', "the bundle's references are not where the segment resolves the receipt's refs"));
  } else {
    const bindings = new Map<string, number>();
    for (const reference of resolution.references) bindings.set(reference.binding, (bindings.get(reference.binding) ?? 0) + 1);
    const summary = [...bindings].map(([binding, count]) => `${count} ${binding}`).join(', ');
    checks.push(pass('receipt.references', subject, `all ${resolution.references.length} references resolve to earlier events of the segment (${summary || 'none'})`));
  }

  const attestation = checkAttestation(subject, bundle, receipt, resolution?.unresolved.length === 0 ? resolution.references : undefined);
  if (attestation !== undefined) checks.push(attestation);

  const grant = await checkGrant(subject, bundle, receipt, index, position, keys, used);
  if (grant !== undefined) checks.push(grant);

  const inclusion = inclusionFailure(receipt.receipt_hash, bundled.inclusion_proof, bundle.tree_head);
  checks.push(
    inclusion === undefined
      ? pass('receipt.inclusion', subject, `leaf ${bundled.inclusion_proof.leaf_index} of ${bundle.tree_head.tree_size} in log ${bundle.tree_head.log_id}: the audit path leads to the signed root`)
      : fail('receipt.inclusion', subject, 'BUNDLE_INCLUSION_INVALID', inclusion),
  );
  return checks;
}

/** The cell fields a receipt attests (Receipt `attestation`, the executor's `execution.completed.environment` as read back from the container). */
const ATTESTED = ['image', 'image_id', 'network_mode', 'readonly_rootfs', 'cap_drop', 'user', 'memory_bytes', 'pids_limit', 'mounts', 'egress_hosts'] as const;

/** A receipt's `attestation` must be the environment its hash-bound `environment_ref` resolves to. */
function checkAttestation(
  subject: string,
  bundle: ReceiptBundle,
  receipt: BundledReceipt['receipt'],
  references: readonly BundledReceipt['references'][number][] | undefined,
): BundleCheck | undefined {
  const attestation = (receipt as { attestation?: unknown }).attestation;
  if (attestation === undefined || attestation === null) return undefined;
  if (references === undefined) return skip('receipt.attestation', subject, 'needs the references resolved');
  const environment = references.find((reference) => reference.field === 'environment_ref');
  if (environment === undefined) return fail('receipt.attestation', subject, 'BUNDLE_ATTESTATION_MISMATCH', 'the receipt attests a cell but names no environment it ran in');
  const recorded = valueAt(bundle.events.find((event) => event.event_id === environment.event_id), environment.pointer);
  const fields = (typeof recorded === 'object' && recorded !== null ? recorded : {}) as Record<string, unknown>;
  const expected: Record<string, unknown> = {};
  for (const key of ATTESTED) if (fields[key] !== undefined) expected[key] = fields[key];
  if (Array.isArray(expected['mounts'])) {
    expected['mounts'] = (expected['mounts'] as Record<string, unknown>[]).map((mount) => ({ destination: mount['destination'], read_only: mount['read_only'] }));
  }
  return same(expected, attestation)
    ? pass('receipt.attestation', subject, `the attested cell (image ${String(fields['image_id'])}, network ${String(fields['network_mode'])}) is the environment recorded at ${environment.event_id}`)
    : fail('receipt.attestation', subject, 'BUNDLE_ATTESTATION_MISMATCH', `the attestation differs from the environment recorded at ${environment.event_id}${environment.pointer}`);
}

/** The grant a receipt names: its `grant.issued` carries the compact JWS the approval service signed over exactly the claims recorded. */
async function checkGrant(
  subject: string,
  bundle: ReceiptBundle,
  receipt: BundledReceipt['receipt'],
  index: SegmentIndex,
  position: number | undefined,
  keys: ReadonlyMap<string, PrincipalKeys>,
  used: UsedKey[],
): Promise<BundleCheck | undefined> {
  const ref = receipt.capability_grant_ref;
  if (ref === null || ref === undefined) return undefined;
  const located = position === undefined ? 'needs the receipt.issued event in the segment' : index.resolve('capability_grant_ref', ref, position);
  if (typeof located === 'string') return skip('receipt.grant', subject, `${ref} does not resolve in the segment (${located})`);
  const event = bundle.events[index.positionOf(located.event_id) ?? -1];
  const claims = event?.payload['claims'] as { iss?: unknown; iat?: unknown } | undefined;
  const jws = event?.payload['jws'];
  if (typeof jws !== 'string') return fail('receipt.grant', subject, 'GRANT_UNSIGNED', `grant.issued ${located.event_id} carries no signed grant`);
  const issuer = typeof claims?.iss === 'string' ? claims.iss : undefined;
  const issuerKeys = issuer === undefined ? undefined : keys.get(issuer);
  if (issuer === undefined || issuerKeys === undefined) {
    return fail('receipt.grant', subject, 'GRANT_SIGNATURE_INVALID', `the key events of the grant's issuer ${issuer ?? '(none)'} are not in the bundle`);
  }
  let verified;
  try {
    verified = await verifyJws(jws, issuerKeys.set, { typ: GRANT_JWS_TYPE });
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    return fail('receipt.grant', subject, 'GRANT_SIGNATURE_INVALID', `the grant JWS does not verify with the keys of ${issuer} (${typeof code === 'string' ? code : 'malformed'})`);
  }
  let signed: unknown;
  try {
    signed = JSON.parse(new TextDecoder().decode(verified.payload));
  } catch {
    signed = undefined;
  }
  if (!same(signed, claims)) return fail('receipt.grant', subject, 'GRANT_CLAIMS_MISMATCH', 'the grant JWS signs other claims than the ones grant.issued records');
  const key = issuerKeys.keys.find((candidate) => candidate.jwk.kid === verified.kid) as BundleKey;
  const iat = typeof claims?.iat === 'number' ? claims.iat * 1000 : Number.NaN;
  if (!keyValidAt(key, iat)) {
    return fail('receipt.grant', subject, 'GRANT_KEY_NOT_VALID', `key ${key.jwk.kid} of ${issuer} was not valid when the grant was issued (${describeWindow(key)})`);
  }
  used.push({ principal_id: issuer, kid: key.jwk.kid, x: key.jwk.x });
  return pass('receipt.grant', subject, `${ref}: grant.issued ${located.event_id} holds a ${GRANT_JWS_TYPE} signed by ${key.jwk.kid} of ${issuer} over exactly the recorded claims, valid at iat`);
}

async function checkTreeHead(bundle: ReceiptBundle, keys: ReadonlyMap<string, PrincipalKeys>, used: UsedKey[]): Promise<BundleCheck> {
  const head = bundle.tree_head;
  const subject = `tree head ${head.log_id}@${head.tree_size}`;
  // The log is signed by the receipt service's key: one of the principals that appended the receipts.
  const signers = [...new Set(issuedReceipts(bundle.events).map((issued) => issued.actor_id))];
  const owner = signers.find((principalId) => keys.get(principalId)?.set.has(head.signer_ref) === true);
  const ownerKeys = owner === undefined ? undefined : keys.get(owner);
  if (owner === undefined || ownerKeys === undefined) {
    return fail('tree_head.signature', subject, 'TREE_HEAD_SIGNATURE_INVALID', `signer_ref ${head.signer_ref} is not a key of the receipt signer (${signers.join(', ') || 'none'})`);
  }
  const verified = await verifyTreeHead(head, ownerKeys.keys);
  if (!verified.ok) return fail('tree_head.signature', subject, verified.code, verified.detail);
  used.push({ principal_id: owner, kid: verified.key.jwk.kid, x: verified.key.jwk.x });
  return pass('tree_head.signature', subject, `${TREE_HEAD_JWS_TYPE} by ${verified.key.jwk.kid} of ${owner} over root ${head.root_hash} at ${head.timestamp}`);
}

function checkTrust(used: readonly UsedKey[], options: BundleVerifyOptions): BundleCheck {
  const distinct = [...new Map(used.map((key) => [`${key.principal_id}/${key.kid}`, key])).values()];
  const listed = distinct.map((key) => `${key.kid} (${key.principal_id})`).join(', ') || 'none';
  if (options.trusted === undefined) {
    return check(
      'trust.anchor',
      'keys',
      'unanchored',
      `no trusted JWKS given: the keys (${listed}) were taken from the bundle itself. The checks show the bundle is intact and signed by those keys, not that the keys are Writ's; pass --trust <jwks.json> obtained independently (e.g. GET /v1/keys).`,
    );
  }
  const trusted = options.trusted;
  const untrusted = distinct.filter((key) => trusted.get(key.kid)?.publicJwk.x !== key.x);
  const source = options.trustSource ?? 'the trusted JWKS';
  if (untrusted.length > 0) {
    return fail('trust.anchor', 'keys', 'TRUST_KEY_UNTRUSTED', `not in ${source}: ${untrusted.map((key) => `${key.kid} (${key.principal_id})`).join(', ')}`);
  }
  if (distinct.length === 0) return skip('trust.anchor', 'keys', 'no signature verified, so no key could be anchored');
  return pass('trust.anchor', 'keys', `every key the checks relied on (${listed}) is in ${source}`);
}
