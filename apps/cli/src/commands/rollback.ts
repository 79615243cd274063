import { Id, LIMITS, ReceiptIssued, parseActionRequest, parseContract, type ActionRequest, type EventEnvelope, type Receipt, type RollbackParams } from '@writ/contracts';
import { importEd25519PrivateJwk, sha256Hex, signJws } from '@writ/crypto';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { checkReceiptSignatures } from '../explain/task-log.js';
import { readJsonFile } from '../files.js';
import { actionRequestClaimed, publishSignedAction } from '../ingress-submission.js';
import type { WritApi } from '../http-api.js';
import { ReceiptView } from '../projection-api.js';

export interface RollbackOptions {
  /** Path of the PRIVATE JWK that signs the request. */
  readonly key?: string;
  /** Who proposes the rollback (a principal registered with that key). */
  readonly principal?: string;
  /** The receipt's task: skips the API lookup (the log alone is read). */
  readonly task?: string;
  /** The ActionRequest id; default `rb-` + a hash of the receipt id (a second submission is found already claimed and not sent). */
  readonly id?: string;
  /** Why, shown to approvers; default names the receipt and its method. */
  readonly reason?: string;
  readonly json?: boolean;
}

export interface RollbackSubmitted {
  readonly action_request_id: string;
  readonly task_id: string;
  readonly receipt_id: string;
  readonly receipt_hash: string;
  readonly steps: RollbackParams['steps'];
  readonly subject: string;
  /** Where JetStream stored the request; null when nothing was sent (`duplicate`). */
  readonly stream: string | null;
  readonly seq: number | null;
  /** Ingress already holds a request of this id from this principal (its claim in the log): nothing new was submitted. */
  readonly duplicate: boolean;
}

/** The default ActionRequest id of a receipt's rollback: one per receipt, so a second submission finds it already claimed at ingress. */
export function rollbackRequestId(receiptId: string): string {
  return `rb-${sha256Hex(receiptId).slice(0, 40)}`;
}

/**
 * The ActionRequest of class `rollback` that undoes `receipt` (Hermit 18.6):
 * in the receipt's task, params naming the receipt (id and receipt_hash) and
 * its rollback steps unchanged, every step path a target resource (what the
 * grant and the state witness cover). CLI_ROLLBACK_UNAVAILABLE when the
 * receipt names no method (its statement says why) or more paths than one
 * request can target.
 */
export function rollbackRequest(receipt: Receipt, proposer: string, now: Date, options: Pick<RollbackOptions, 'id' | 'reason'> = {}): ActionRequest {
  const rollback = receipt.rollback;
  if (rollback === undefined || rollback.method === 'none' || receipt.receipt_hash === undefined) {
    const why = rollback?.statement ?? 'the receipt predates rollback metadata';
    throw new CliError('CLI_ROLLBACK_UNAVAILABLE', `receipt ${receipt.receipt_id} cannot be rolled back: ${why}`, { details: { receipt_id: receipt.receipt_id, method: rollback?.method ?? null } });
  }
  const paths = [...new Set(rollback.steps.map((step) => step.path))];
  if (paths.length > LIMITS.targetResources) {
    throw new CliError('CLI_ROLLBACK_UNAVAILABLE', `receipt ${receipt.receipt_id} names ${paths.length} paths; one rollback request targets at most ${LIMITS.targetResources}`, {
      details: { receipt_id: receipt.receipt_id, paths: paths.length },
    });
  }
  const effects = rollback.steps.slice(0, LIMITS.shortListItems).map((step) =>
    step.action_class === 'delete_local' ? `${step.path} is removed (the action added it)` : `${step.path} holds its pre-image again (sha256 ${step.restore_sha256 ?? '?'})`,
  );
  return parseActionRequest({
    action_request_id: parseContract('--id', Id, options.id ?? rollbackRequestId(receipt.receipt_id)),
    task_id: receipt.task_id,
    step: { kind: 'rollback', title: `roll back receipt ${receipt.receipt_id}`.slice(0, LIMITS.title) },
    action_class: 'rollback',
    target_resources: paths,
    params: { receipt_id: receipt.receipt_id, receipt_hash: receipt.receipt_hash, steps: rollback.steps },
    expected_effects: effects,
    reversibility_hint: 'reversible',
    reason: (options.reason ?? `roll back receipt ${receipt.receipt_id} (${receipt.result_summary})`).slice(0, LIMITS.text),
    proposed_by: proposer,
    proposed_at: now.toISOString(),
  });
}

/** The receipt as its task's `receipt.issued` holds it, with its signature checked against its issuer's keys in the log. */
async function receiptFromLog(events: readonly EventEnvelope[], receiptId: string, signatureOk: (id: string) => { ok: boolean; problem: string | null } | undefined): Promise<Receipt> {
  for (const event of events) {
    if (event.event_type !== 'receipt.issued') continue;
    const parsed = ReceiptIssued.safeParse(event.payload);
    if (!parsed.success || parsed.data.receipt.receipt_id !== receiptId) continue;
    const check = signatureOk(receiptId);
    if (check === undefined || !check.ok) {
      throw new CliError('CLI_RECEIPT_UNVERIFIED', `receipt ${receiptId} in the log does not verify: ${check?.problem ?? 'its signature was not checked'}; nothing was submitted`, { details: { receipt_id: receiptId } });
    }
    return parsed.data.receipt;
  }
  throw new CliError('CLI_RECEIPT_NOT_FOUND', `the log of task ${events[0]?.task_id ?? '(none)'} holds no receipt ${receiptId}`, { details: { receipt_id: receiptId } });
}

/**
 * `writ rollback <receipt_id> --key <private-jwk> --principal <id> [--task <task_id>]`:
 * reads the receipt from its task's log (the task from `--task`, else
 * `GET /v1/receipts/<id>` locates it; the projection is never trusted for the
 * receipt itself), checks its signature against the receipt service's keys in
 * the log, refuses when it names no rollback method (CLI_ROLLBACK_UNAVAILABLE,
 * with the receipt's statement), and otherwise submits ONE signed ActionRequest
 * of class `rollback` to `<root>.ingress.action.<principal>`, like
 * `writ action submit`. The rollback is a new governed action: policy (the
 * built-in profiles ask a director's approval), grant, execution that applies
 * every step or none, and its own receipt.
 */
export async function rollback(receiptIdArg: string, options: RollbackOptions, conn: Connection, api: WritApi | undefined, io: CliIo): Promise<RollbackSubmitted> {
  const receiptId = parseContract('receipt id', Id, receiptIdArg);
  if (options.principal === undefined) throw new CliError('CLI_PRINCIPAL_REQUIRED', 'name the proposer of the rollback with --principal');
  const principal = parseContract('--principal', Id, options.principal);
  const nc = await connectNats(conn);
  try {
    let taskId = options.task === undefined ? undefined : parseContract('--task', Id, options.task);
    if (taskId === undefined) {
      if (api === undefined) throw new CliError('CLI_USAGE', 'give the receipt\'s task with --task, or --url of the Writ API to look it up');
      const view = await api.get(`/v1/receipts/${encodeURIComponent(receiptId)}`, ReceiptView);
      if (typeof view.task_id !== 'string') throw new CliError('CLI_RECEIPT_NOT_FOUND', `the API does not say which task receipt ${receiptId} belongs to; give it with --task`);
      taskId = view.task_id;
    }
    const store = await attachEventLog(nc, conn);
    const events = (await store.read(taskId)).map((stored) => stored.event);
    if (events.length === 0) throw new CliError('CLI_TASK_NOT_FOUND', `the log holds no event of task ${taskId}`);
    const signatures = await checkReceiptSignatures(store, events);
    const receipt = await receiptFromLog(events, receiptId, (id) => signatures.get(id));
    const request = rollbackRequest(receipt, principal, io.now(), options);
    // Checked once the request is known to be worth signing (a receipt without a method needs no key).
    if (options.key === undefined) throw new CliError('CLI_KEY_REQUIRED', `receipt ${receiptId} can be rolled back; sign the request with --key <private JWK of ${principal}>`);
    const key = await importEd25519PrivateJwk(await readJsonFile(io.cwd, options.key, 'private JWK'));
    const jws = await signJws(JSON.stringify(request), key);
    const subject = `${conn.subjectRoot}.ingress.action.${principal}`;
    // Submitted before (ingress holds its claim of this id): nothing is sent again.
    const duplicate = await actionRequestClaimed(store, principal, request.action_request_id);
    let ack: { stream: string; seq: number } | undefined;
    try {
      if (!duplicate) ack = await publishSignedAction(nc, subject, jws, request.action_request_id);
    } catch (cause) {
      throw new CliError('CLI_NATS_UNREACHABLE', `JetStream did not store the request on ${subject} (is ingress's stream up?)`, { cause });
    }
    const params = request.params as unknown as RollbackParams;
    const submitted: RollbackSubmitted = {
      action_request_id: request.action_request_id,
      task_id: taskId,
      receipt_id: receiptId,
      receipt_hash: params.receipt_hash,
      steps: params.steps,
      subject,
      stream: ack?.stream ?? null,
      seq: ack?.seq ?? null,
      duplicate,
    };
    if (options.json === true) io.stdout(JSON.stringify(submitted));
    else printSubmitted(submitted, io);
    return submitted;
  } finally {
    await nc.drain().catch(() => undefined);
  }
}

function printSubmitted(submitted: RollbackSubmitted, io: CliIo): void {
  const verb = submitted.duplicate ? 'was already submitted' : 'submitted';
  io.stdout(`rollback of receipt ${submitted.receipt_id} ${verb}: action ${submitted.action_request_id} in task ${submitted.task_id}, ${submitted.steps.length} step(s)`);
  for (const step of submitted.steps) {
    io.stdout(`  ${step.action_class === 'delete_local' ? 'remove ' : 'restore'} ${step.path}${step.restore_sha256 === undefined ? '' : ` (pre-image sha256 ${step.restore_sha256})`}`);
  }
  io.stdout('it is a governed action: policy decides, a director approves (writ approvals; writ approve <approval_id>), the executor applies every step or none');
  io.stdout(`follow it: writ action ${submitted.action_request_id}    explain it: writ explain ${submitted.action_request_id} --task ${submitted.task_id}`);
}
