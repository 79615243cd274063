import { ReceiptIssued, parseContract, type ActionClass, type IssueReceipt, type ReceiptCause, type ReceiptResultCode } from '@writ/contracts';
import { ResolutionAuthorityError, causationIdOf, serviceDraft } from '@writ/runtime';
import { approvalFacts, attemptFacts, issuedReceipts, recordedSnapshots } from './attempt-facts.js';
import { buildReceiptBody } from './build-receipt.js';
import type { Clock, CommandOrigin, CurrentSigner, ReceiptSigner, ResolutionRefusals, TaskLog } from './ports.js';
import { ReceiptServiceError } from './receipt-errors.js';
import { sealReceipt } from './receipt-seal.js';

export interface IssueReceiptDeps {
  readonly log: TaskLog;
  /** The key that signs now (a rotation switches it). */
  readonly signer: CurrentSigner<ReceiptSigner>;
  readonly clock: Clock;
  /** The receipt service principal: actor of the events. */
  readonly principalId: string;
  /** Which director decisions in the task fail their authority check: never receipted, never bound (DESIGN invariant 9). */
  readonly authority: ResolutionRefusals;
}

/** What a command came to; an issued receipt says what it closed (the figures of `writ_receipts_issued_total`). */
export type IssueReceiptOutcome =
  | { readonly status: 'issued'; readonly result: ReceiptResultCode; readonly cause: ReceiptCause; readonly action_class: ActionClass | 'unknown' }
  | { readonly status: 'already_issued' };

/**
 * Whether `issued` already closed what `command` asks to close: the same attempt for the same cause with a
 * settled result. The receipt id carries the result (so an `unknown_outcome` receipt is followed by the
 * settled one), and a redelivery handled by a release that words a result differently (an upgrade between
 * the append and the ack) must find the receipt it issued, not issue a second one that contradicts it.
 * Receipts of approval resolutions are one per approval, which their id alone tells.
 */
function endsTheSameAttempt(issued: ReceiptIssued, command: IssueReceipt): boolean {
  if (command.cause === 'approval_resolved') return false;
  return issued.receipt.attempt_id === command.attempt_id && (issued.cause === undefined || issued.cause === command.cause) && issued.receipt.result_code !== 'unknown_outcome';
}

/**
 * `writ.cmd.receipt.issue` (governed path step 6): read the task stream,
 * build the attempt's receipt, chain it to the task's previous receipt, sign
 * it, and append `receipt.issued`. Idempotent by receipt id (derived from the
 * attempt, cause and result) and by `endsTheSameAttempt`; a lost race (EVENTSTORE_CONFLICT) is retried by the
 * bus, which re-reads and re-chains. Never changes task state.
 *
 * A director's decision in the log (`approval.granted` / `.denied`) is receipted and bound
 * only when its recorded signature holds up (`@writ/runtime` ResolutionAuthority): the facts
 * are gathered without the refused ones, and an `approval_resolved` receipt of an approval
 * whose only resolution was refused is refused with that resolution's code (terminal).
 */
export class IssueReceiptHandler {
  constructor(private readonly deps: IssueReceiptDeps) {}

  async handle(command: IssueReceipt, origin: CommandOrigin): Promise<IssueReceiptOutcome> {
    const history = await this.deps.log.read(command.task_id);
    if (history.seq === 0) {
      throw new ReceiptServiceError('RECEIPT_TASK_NOT_FOUND', `task ${command.task_id} has no events; nothing to receipt`, { details: { task_id: command.task_id } });
    }
    const receipts = issuedReceipts(history.events);
    const refused = await this.deps.authority.refusals(history.events);
    // The facts a receipt binds: the log less the director decisions nobody with authority made.
    const trusted = refused.size === 0 ? history.events : history.events.filter((event) => !refused.has(event.event_id));
    const approval = command.cause === 'approval_resolved' && command.approval_id !== undefined ? approvalFacts(trusted, command.approval_id) : undefined;
    if (approval !== undefined && approval.resolution === null) {
      const refusal = [...refused.values()].filter((candidate) => candidate.approval_id === command.approval_id).at(-1);
      if (refusal !== undefined) {
        throw new ResolutionAuthorityError(refusal.code, `approval ${refusal.approval_id} has no resolution to receipt: ${refusal.message}`, {
          details: { ...refusal.details, resolution_event_id: refusal.event_id },
        });
      }
    }
    const at = this.deps.clock().toISOString();
    // One key for this receipt: it is named in the body (signer_ref) and signs it.
    const signer = this.deps.signer();
    const facts = attemptFacts(trusted, command.attempt_id);
    const body = buildReceiptBody({
      command,
      facts,
      createdAt: at,
      prevReceiptHash: receipts.at(-1)?.receipt.receipt_hash ?? null,
      signerRef: signer.kid,
      snapshots: recordedSnapshots(history.events),
      taskReceipts: receipts.map((issued) => issued.receipt),
      ...(approval === undefined ? {} : { approval }),
    });
    const receiptId = body.receipt_id;
    if (receipts.some((issued) => issued.receipt.receipt_id === receiptId || endsTheSameAttempt(issued, command))) return { status: 'already_issued' };
    // The cause rides beside the receipt, so a reader tells an approval's receipt from the one that ends the attempt.
    // The receipt lands right after this head (the append below is guarded by it), and signing the head signs every earlier event.
    const head = history.events.at(-1);
    const bound = head === undefined ? body : { ...body, event_chain_head: { task_seq: head.task_seq, event_hash: head.hash } };
    const payload = parseContract('ReceiptIssued', ReceiptIssued, { ...(await sealReceipt(bound, signer)), cause: command.cause });
    const draft = serviceDraft({
      key: `${receiptId}:receipt.issued`,
      eventType: 'receipt.issued',
      entityType: 'receipt',
      entityId: receiptId,
      stepId: command.step_id,
      attemptId: command.attempt_id,
      occurredAt: at,
      actorId: this.deps.principalId,
      payload,
      causationId: causationIdOf(origin.commandId),
      correlationId: command.task_id,
    });
    await this.deps.log.append(command.task_id, [draft], history.seq);
    // A downgraded request ran as its rewrite: the class that ran is the one counted.
    const actionClass = (facts.downgradedRequest ?? facts.request)?.action_class ?? 'unknown';
    return { status: 'issued', result: body.result_code, cause: command.cause, action_class: actionClass };
  }
}
