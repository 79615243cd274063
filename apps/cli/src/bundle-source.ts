import type { NatsConnection } from '@nats-io/transport-node';
import {
  COMMANDS,
  ConsistencyProofReply,
  InclusionProofReply,
  SignedTreeHead,
  hasErrorCode,
  type BundlePrincipal,
  type EventEnvelope,
  type InclusionProof,
  type ReceiptBundle,
} from '@writ/contracts';
import type { KeySet } from '@writ/crypto';
import type { EventStore } from '@writ/eventstore';
import { claimedAuthorizers, keyHistory, loadTrustAnchor, rooted } from '@writ/runtime';
import { CliError } from './cli-errors.js';
import type { CliIo, Connection } from './cli-io.js';
import { assembleBundle, bundleNeeds, type IssuedReceipt } from './evidence/assemble-bundle.js';
import { consistencyFailure } from './evidence/consistency.js';
import { verifyTreeHead } from './evidence/tree-head.js';
import type { BundleCheck } from './evidence/verify-bundle.js';
import { requestService } from './service-request.js';

/** How long `writ export` / `writ verify --task` wait by default for receipts to be sequenced in the transparency log. */
export const DEFAULT_SEQUENCING_WAIT_SECONDS = 30;

/** How often a receipt that is not sequenced yet is asked for again. */
const POLL_MS = 250;
/** At most one progress line per this many milliseconds. */
const PROGRESS_EVERY_MS = 2_000;

export interface CollectOptions {
  /** How long to wait for receipts the transparency log has not sequenced yet. */
  readonly waitMs: number;
  readonly io: CliIo;
}

/** Parses `--wait <seconds>`: 0 to 3600. */
export function parseWaitSeconds(value: string | undefined): number {
  if (value === undefined) return DEFAULT_SEQUENCING_WAIT_SECONDS;
  const seconds = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(seconds) || seconds > 3_600) throw new CliError('CLI_USAGE', `--wait is a number of seconds from 0 to 3600, got ${value}`);
  return seconds;
}

/** The task's events from task_seq 1, as the log holds them (a broken chain is refused by the event store: EVENTSTORE_CHAIN_BROKEN). */
export async function taskEvents(store: EventStore, taskId: string): Promise<EventEnvelope[]> {
  const events = (await store.read(taskId)).map(({ event }) => event);
  if (events.length === 0) throw new CliError('CLI_TASK_NOT_FOUND', `the log holds no event of task ${taskId}`, { details: { task_id: taskId } });
  return events;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Asks the receipt service for an inclusion proof of each receipt, waiting
 * (with a progress line on stderr) while the transparency log has not
 * sequenced one yet, until `waitMs` has passed (CLI_RECEIPT_NOT_SEQUENCED).
 */
async function awaitSequenced(nc: NatsConnection, conn: Connection, receipts: readonly IssuedReceipt[], options: CollectOptions): Promise<void> {
  const subject = rooted(COMMANDS.receiptInclusionProof, conn.subjectRoot);
  const started = performance.now();
  let lastProgress = started;
  for (const issued of receipts) {
    const receiptId = issued.receipt.receipt_id;
    for (;;) {
      try {
        await requestService(nc, subject, { receipt_id: receiptId }, InclusionProofReply, 'InclusionProofReply');
        break;
      } catch (error) {
        if (!hasErrorCode(error, 'RECEIPT_NOT_IN_LOG')) throw error;
        const waited = performance.now() - started;
        if (waited >= options.waitMs) {
          throw new CliError(
            'CLI_RECEIPT_NOT_SEQUENCED',
            `receipt ${receiptId} is not in the transparency log after ${(waited / 1000).toFixed(1)} s (is the receipt service's log running? wait longer with --wait)`,
            { details: { receipt_id: receiptId } },
          );
        }
        if (performance.now() - lastProgress >= PROGRESS_EVERY_MS) {
          lastProgress = performance.now();
          options.io.stderr(`waiting for receipt ${receiptId} to be sequenced in the transparency log (${(waited / 1000).toFixed(0)} s of ${(options.waitMs / 1000).toFixed(0)} s)`);
        }
        await sleep(POLL_MS);
      }
    }
  }
}

/**
 * Collects a task's receipt bundle from the live system: the task's events
 * and the principals' key events from the log, then, once every receipt is
 * sequenced, one signed tree head (`<root>.qry.receipt.tree-head`) and an
 * inclusion proof of each receipt against exactly that head.
 */
export async function collectBundle(nc: NatsConnection, store: EventStore, conn: Connection, taskId: string, options: CollectOptions): Promise<ReceiptBundle> {
  const events = await taskEvents(store, taskId);
  const needs = bundleNeeds(taskId, events);
  const principals: BundlePrincipal[] = [];
  const wanted = [...needs.principals, ...needs.resolvers];
  // Then the operators their registrations claim were signed by, and theirs, back to the trust anchor (bounded as a bundle is).
  for (let next = 0; next < wanted.length && principals.length < 16; next++) {
    const principalId = wanted[next] as string;
    const stored = await store.readEntity('principal', principalId);
    if (stored.length === 0) continue;
    const events = stored.map(({ event }) => event);
    principals.push({ principal_id: principalId, events });
    for (const signer of claimedAuthorizers(events)) if (!wanted.includes(signer)) wanted.push(signer);
  }
  const anchorFile = conn.env['WRIT_TRUST_ANCHOR'];
  const trustAnchor = anchorFile === undefined || anchorFile === '' ? undefined : await loadTrustAnchor(anchorFile);
  await awaitSequenced(nc, conn, needs.receipts, options);
  const treeHead = await requestService(nc, rooted(COMMANDS.receiptTreeHead, conn.subjectRoot), {}, SignedTreeHead, 'SignedTreeHead');
  const proofs = new Map<string, InclusionProof>();
  const subject = rooted(COMMANDS.receiptInclusionProof, conn.subjectRoot);
  for (const issued of needs.receipts) {
    const receiptId = issued.receipt.receipt_id;
    const reply = await requestService(nc, subject, { receipt_id: receiptId, tree_size: treeHead.tree_size }, InclusionProofReply, 'InclusionProofReply');
    proofs.set(receiptId, reply.proof);
  }
  return assembleBundle({ taskId, events, principals, proofs, treeHead, ...(trustAnchor === undefined ? {} : { trustAnchor }) });
}

/**
 * `writ verify <bundle> --live`: what a bundle cannot show offline, asked of
 * the live log. `log.head`: the receipt service's current signed tree head,
 * checked against its signer's key history as the live log holds it (and
 * against `trusted`, when given). `log.consistency`: the RFC 9162 consistency
 * proof that the bundle's tree is a prefix of the current one, so the log has
 * not forked or rewritten history since the bundle was exported.
 */
export async function liveLogChecks(nc: NatsConnection, store: EventStore, conn: Connection, bundle: ReceiptBundle, trusted: KeySet | undefined): Promise<BundleCheck[]> {
  const head = bundle.tree_head;
  const reply = await requestService(nc, rooted(COMMANDS.receiptConsistencyProof, conn.subjectRoot), { first_size: head.tree_size }, ConsistencyProofReply, 'ConsistencyProofReply');
  const live = reply.tree_head;
  const headSubject = `tree head ${live.log_id}@${live.tree_size} (live)`;
  const owner = bundle.keys.find((key) => key.jwk.kid === head.signer_ref)?.principal_id;
  const keys = owner === undefined ? [] : keyHistory([{ principal_id: owner, events: (await store.readEntity('principal', owner)).map(({ event }) => event) }]);
  const signature = await verifyTreeHead(live, keys);
  let headCheck: BundleCheck;
  if (!signature.ok) headCheck = { check: 'log.head', subject: headSubject, status: 'fail', code: signature.code, detail: signature.detail };
  else if (trusted !== undefined && trusted.get(signature.key.jwk.kid)?.publicJwk.x !== signature.key.jwk.x) {
    headCheck = { check: 'log.head', subject: headSubject, status: 'fail', code: 'TRUST_KEY_UNTRUSTED', detail: `the live head is signed by ${signature.key.jwk.kid}, which is not in the trusted JWKS` };
  } else {
    headCheck = { check: 'log.head', subject: headSubject, status: 'pass', detail: `signed by ${signature.key.jwk.kid} of ${owner ?? '-'} at ${live.timestamp} (key history from the live log)` };
  }
  const failure = consistencyFailure(head, live, reply.proof);
  const consistencySubject = `log ${head.log_id}: ${head.tree_size} → ${live.tree_size} leaves`;
  const consistency: BundleCheck =
    failure === undefined
      ? { check: 'log.consistency', subject: consistencySubject, status: 'pass', detail: `the bundle's tree (root ${head.root_hash}) is a prefix of the live tree (root ${live.root_hash}): no fork, no rewrite` }
      : { check: 'log.consistency', subject: consistencySubject, status: 'fail', code: 'LOG_INCONSISTENT', detail: failure };
  return [headCheck, consistency];
}
