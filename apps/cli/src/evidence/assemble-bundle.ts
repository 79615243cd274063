import { RECEIPT_BUNDLE_VERSION, type BundlePrincipal, type BundledReceipt, type EventEnvelope, type InclusionProof, type Receipt, type ReceiptBundle, type SignedTreeHead, type TrustAnchor } from '@writ/contracts';
import { sealBundle } from './bundle-seal.js';
import { EvidenceError } from './evidence-errors.js';
import { inclusionFailure } from './inclusion.js';
import { DIRECTOR_DECISIONS, claimedAuthorizers, claimedResolver, keyHistory } from '@writ/runtime';
import { notAssertedFor } from './not-asserted.js';
import { SegmentIndex, resolveReferences, type SegmentEvent } from './receipt-references.js';

/** One `receipt.issued` of a task: where it is, who appended it, the receipt and its JWS as the event holds them. */
export interface IssuedReceipt {
  readonly position: number;
  readonly event_id: string;
  readonly actor_id: string;
  readonly receipt: Receipt;
  readonly jws: string;
}

type ReceiptEvent = SegmentEvent & { readonly actor_id: string };

/** The task's `receipt.issued` events, in log order, as they are (the verifier judges them). */
export function issuedReceipts(events: readonly ReceiptEvent[]): IssuedReceipt[] {
  const issued: IssuedReceipt[] = [];
  events.forEach((event, position) => {
    if (event.event_type !== 'receipt.issued') return;
    issued.push({ position, event_id: event.event_id, actor_id: event.actor_id, receipt: event.payload['receipt'] as Receipt, jws: event.payload['jws'] as string });
  });
  return issued;
}

/** What a bundle of the task needs from outside the task stream. */
export interface BundleNeeds {
  /** The events from task_seq 1 through the last `receipt.issued`. */
  readonly segment: readonly EventEnvelope[];
  readonly receipts: readonly IssuedReceipt[];
  /** Whose key events: the principals that appended the receipts, then the issuers of the grants they name. */
  readonly principals: readonly string[];
  /**
   * Whose history checks the directors' decisions of the segment (`approval.authority`): each
   * resolver they claim, not already among `principals`. Bundled when the log holds them; one it
   * does not (a forged resolver) is left out, and the check fails for it.
   */
  readonly resolvers: readonly string[];
}

/**
 * What `writ export` must fetch for a task's bundle, from the task's events
 * (in log order, from task_seq 1): the segment, its receipts (each needs an
 * inclusion proof) and the principals whose key history verifies them.
 */
export function bundleNeeds(taskId: string, events: readonly EventEnvelope[]): BundleNeeds {
  const receipts = issuedReceipts(events);
  const last = receipts.at(-1);
  if (last === undefined) throw new EvidenceError('EVIDENCE_NO_RECEIPTS', `task ${taskId} has no receipt yet: nothing to bundle`, { details: { task_id: taskId } });
  const segment = events.slice(0, last.position + 1);
  const index = new SegmentIndex(segment);
  const principals: string[] = [];
  const need = (principalId: unknown): void => {
    if (typeof principalId === 'string' && !principals.includes(principalId)) principals.push(principalId);
  };
  for (const issued of receipts) need(issued.actor_id);
  for (const issued of receipts) {
    const ref = issued.receipt.capability_grant_ref;
    if (ref === null || ref === undefined) continue;
    const grant = index.resolve('capability_grant_ref', ref, issued.position);
    if (typeof grant === 'string') continue;
    const event = segment[index.positionOf(grant.event_id) ?? -1];
    const claims = event?.payload['claims'] as { iss?: unknown } | undefined;
    need(claims?.iss);
  }
  const resolvers: string[] = [];
  for (const event of segment) {
    const resolver = DIRECTOR_DECISIONS.includes(event.event_type) ? claimedResolver(event) : undefined;
    if (resolver !== undefined && !principals.includes(resolver) && !resolvers.includes(resolver)) resolvers.push(resolver);
  }
  return { segment, receipts, principals, resolvers };
}

export interface BundleSources {
  readonly taskId: string;
  /** The task's events in log order from task_seq 1 (events after the last receipt are left out). */
  readonly events: readonly EventEnvelope[];
  /** The key events of every principal `bundleNeeds` names (its `resolvers` where the log holds them). */
  readonly principals: readonly BundlePrincipal[];
  /** An inclusion proof per receipt id, all against `treeHead`. */
  readonly proofs: ReadonlyMap<string, InclusionProof>;
  readonly treeHead: SignedTreeHead;
  /** The deployment's trust anchor: bundled, with the operators on the principals' authority chains (from `principals`). */
  readonly trustAnchor?: TrustAnchor;
}

/**
 * Assembles and seals a task's receipt bundle (pure: everything arrives as
 * arguments). Refuses a proof that does not lead to the tree head's root and
 * a missing proof or principal, so `writ export` never writes a bundle whose
 * proofs it has not checked; everything else is recorded as the log holds it
 * and left to `writ verify` to judge.
 */
export function assembleBundle(sources: BundleSources): ReceiptBundle {
  const { taskId, treeHead } = sources;
  const needs = bundleNeeds(taskId, sources.events);
  const index = new SegmentIndex(needs.segment);
  const receipts: BundledReceipt[] = needs.receipts.map((issued) => {
    const receiptId = issued.receipt.receipt_id;
    const proof = sources.proofs.get(receiptId);
    if (proof === undefined) {
      throw new EvidenceError('EVIDENCE_PROOF_MISSING', `no inclusion proof for receipt ${receiptId} (is it sequenced in the transparency log?)`, { details: { receipt_id: receiptId } });
    }
    const failure = inclusionFailure(issued.receipt.receipt_hash, proof, treeHead);
    if (failure !== undefined) {
      throw new EvidenceError('EVIDENCE_PROOF_INVALID', `the inclusion proof of receipt ${receiptId} does not verify: ${failure}`, { details: { receipt_id: receiptId } });
    }
    return {
      receipt: issued.receipt,
      jws: issued.jws,
      event_id: issued.event_id,
      references: resolveReferences(issued.receipt, index, issued.position).references,
      inclusion_proof: proof,
    };
  });
  const principals = needs.principals.map((principalId) => {
    const found = sources.principals.find((principal) => principal.principal_id === principalId);
    if (found === undefined || found.events.length === 0) {
      throw new EvidenceError('EVIDENCE_PRINCIPAL_MISSING', `the key events of principal ${principalId} are needed to verify the receipts and were not found`, {
        details: { principal_id: principalId },
      });
    }
    return { principal_id: found.principal_id, events: [...found.events] };
  });
  for (const resolverId of needs.resolvers) {
    const found = sources.principals.find((principal) => principal.principal_id === resolverId);
    // A bundle holds at most 16 principals (ReceiptBundle): a resolver beyond them fails its check, visibly.
    if (found !== undefined && found.events.length > 0 && principals.length < 16) principals.push({ principal_id: found.principal_id, events: [...found.events] });
  }
  // The operators the bundled registrations claim were signed by, and theirs: what checks them back to the trust anchor.
  for (let next = 0; next < principals.length && principals.length < 16; next++) {
    for (const signer of claimedAuthorizers((principals[next] as BundlePrincipal).events)) {
      if (principals.length >= 16 || principals.some((principal) => principal.principal_id === signer)) continue;
      const found = sources.principals.find((principal) => principal.principal_id === signer);
      if (found !== undefined && found.events.length > 0) principals.push({ principal_id: found.principal_id, events: [...found.events] });
    }
  }
  const events = [...needs.segment];
  return sealBundle({
    bundle_version: RECEIPT_BUNDLE_VERSION,
    task_id: taskId,
    events,
    receipts,
    tree_head: treeHead,
    principals,
    keys: keyHistory(principals),
    ...(sources.trustAnchor === undefined ? {} : { trust_anchor: sources.trustAnchor }),
    not_asserted: notAssertedFor({ task_id: taskId, events, receipts, tree_head: treeHead }),
  });
}
