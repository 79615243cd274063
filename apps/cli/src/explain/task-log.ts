import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Id, PrincipalKeyAdded, PrincipalRegistered, ReceiptIssued, TransparencyLogEntryAppended, hasErrorCode, parseContract, type EventEnvelope } from '@writ/contracts';
import { KeySet, importEd25519PublicJwk, type Ed25519PublicKey } from '@writ/crypto';
import type { EventStore } from '@writ/eventstore';
import { CliError } from '../cli-errors.js';
import type { Connection } from '../cli-io.js';
import type { WritApi } from '../http-api.js';
import { ActionView } from '../projection-api.js';
import { verifyReceiptDocument } from '../receipt-verification.js';
import type { SignatureCheck, TransparencyLogEntry } from './task-explanation.js';

/** A task's events as the log holds them, and the action asked about, if it was one. */
export interface LocatedTask {
  readonly taskId: string;
  readonly actionRequestId: string | undefined;
  readonly events: readonly EventEnvelope[];
}

/**
 * Finds what `<id>` names, the log first: a task with events on
 * `<events>.task.<id>` is a task. Otherwise it is taken as an action request
 * id, whose task is `--task` when given (nothing but the log is read), else
 * the one `GET /v1/actions/<id>` names (the projection only locates the task;
 * everything shown is then read from the log). CLI_EXPLAIN_NOT_FOUND when
 * neither knows it.
 */
export async function locateTask(store: EventStore, id: string, options: { readonly task?: string }, api: WritApi | undefined): Promise<LocatedTask> {
  const subject = parseContract('id', Id, id);
  if (options.task === undefined) {
    const events = await store.read(subject);
    if (events.length > 0) return { taskId: subject, actionRequestId: undefined, events: events.map((stored) => stored.event) };
  }
  let taskId = options.task === undefined ? undefined : parseContract('--task', Id, options.task);
  if (taskId === undefined && api !== undefined) {
    try {
      const view = await api.get(`/v1/actions/${encodeURIComponent(subject)}`, ActionView);
      taskId = view.task_id ?? undefined;
    } catch (error) {
      if (!hasErrorCode(error, 'PROJECTION_NOT_FOUND')) throw error;
    }
  }
  if (taskId === undefined) {
    throw new CliError('CLI_EXPLAIN_NOT_FOUND', `${subject} is neither a task in the log nor an action request the API knows (give its task with --task to read the log alone)`);
  }
  const events = (await store.read(taskId)).map((stored) => stored.event);
  if (!events.some((event) => event.event_type === 'attempt.awaiting_policy' && (event.payload as { action_request?: { action_request_id?: unknown } }).action_request?.action_request_id === subject)) {
    throw new CliError('CLI_EXPLAIN_NOT_FOUND', `task ${taskId} holds no action request ${subject}`);
  }
  return { taskId, actionRequestId: subject, events };
}

/** Every public key a principal has had, as its stream records them: a receipt is checked against the key that signed it, retired or not. */
async function principalKeys(store: EventStore, principalId: string): Promise<Ed25519PublicKey[]> {
  const keys: Ed25519PublicKey[] = [];
  for (const { event } of await store.readEntity('principal', principalId)) {
    if (event.event_type === 'principal.registered') {
      const parsed = PrincipalRegistered.safeParse(event.payload);
      if (parsed.success) for (const jwk of parsed.data.keys) keys.push(await importEd25519PublicJwk(jwk));
    } else if (event.event_type === 'principal.key_added') {
      const parsed = PrincipalKeyAdded.safeParse(event.payload);
      if (parsed.success) keys.push(await importEd25519PublicJwk(parsed.data.key));
    }
  }
  return keys;
}

/**
 * Checks each receipt's JWS against the keys its signer (the principal that
 * appended `receipt.issued`) has had in the log. Key validity windows and the
 * transparency log's proofs are `writ verify`'s; this says whether the
 * receipt is signed by its issuer's key and signs exactly its body.
 */
export async function checkReceiptSignatures(store: EventStore, events: readonly EventEnvelope[]): Promise<Map<string, SignatureCheck>> {
  const keySets = new Map<string, KeySet>();
  const checks = new Map<string, SignatureCheck>();
  for (const event of events) {
    if (event.event_type !== 'receipt.issued') continue;
    const parsed = ReceiptIssued.safeParse(event.payload);
    if (!parsed.success) continue;
    let keys = keySets.get(event.actor_id);
    if (keys === undefined) {
      keys = KeySet.of(await principalKeys(store, event.actor_id));
      keySets.set(event.actor_id, keys);
    }
    const { receipt, jws } = parsed.data;
    const verification = await verifyReceiptDocument({ receiptId: receipt.receipt_id, receipt, jws }, keys);
    const failed = verification.checks.find((check) => check.result === 'fail');
    checks.set(receipt.receipt_id, { ok: verification.ok, kid: verification.kid, problem: failed === undefined ? null : `${failed.code ?? failed.name}: ${failed.message}` });
  }
  return checks;
}

/**
 * The transparency log's leaves for the task's receipts: `tlog.entry_appended`
 * on `<events>.transparency_log.>` naming the task, scanned from the task's
 * first event on (a receipt is sequenced after it is issued). Empty when no
 * transparency log is in the event log at all.
 */
export async function transparencyLogEntries(nc: NatsConnection, conn: Connection, taskId: string, since: string | undefined): Promise<Map<string, TransparencyLogEntry>> {
  const entries = new Map<string, TransparencyLogEntry>();
  const filter = `${conn.eventsPrefix}.transparency_log.>`;
  const info = await (await jetstreamManager(nc)).streams.info(conn.eventsStream, { subjects_filter: filter });
  if (Object.keys(info.state.subjects ?? {}).length === 0) return entries;
  const consumer = await jetstream(nc).consumers.get(conn.eventsStream, {
    filter_subjects: filter,
    ...(since === undefined ? { deliver_policy: DeliverPolicy.All } : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: since }),
  });
  try {
    if ((await consumer.info(true)).num_pending === 0) return entries;
    for (let caughtUp = false; !caughtUp; ) {
      let received = 0;
      for await (const message of await consumer.fetch({ max_messages: 256, expires: 5_000 })) {
        received++;
        caughtUp = message.info.pending === 0;
        let envelope: EventEnvelope | undefined;
        try {
          envelope = message.json<EventEnvelope>();
        } catch {
          envelope = undefined; // not an envelope: `writ verify` reports it
        }
        if (envelope?.event_type === 'tlog.entry_appended') {
          const parsed = TransparencyLogEntryAppended.safeParse(envelope.payload);
          if (parsed.success && parsed.data.task_id === taskId) {
            entries.set(parsed.data.receipt_id, { log_id: parsed.data.log_id, leaf_index: parsed.data.leaf_index, receipt_hash: parsed.data.receipt_hash });
          }
        }
        if (caughtUp) break;
      }
      if (received === 0) throw new CliError('CLI_FAILED', `reading ${filter} stalled: no events arrived before the deadline`);
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
  return entries;
}
