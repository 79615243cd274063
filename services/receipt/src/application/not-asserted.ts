import { LIMITS, type ApprovalStatus, type ExecutionCompleted, type ExecutionOutcomeResolved, type ReceiptResultCode, type ReceiptRollback } from '@writ/contracts';
import { NOTHING_CHANGED } from './rollback-method.js';

/**
 * What a receipt does NOT assert, in plain words. A receipt binds what Writ
 * recorded; these sentences keep a reader from taking it for more: an effect
 * Writ did not observe, a state nobody witnessed, a claim nobody checked.
 */

/** Every receipt: Writ vouches for what it dispatched and recorded, not for the world outside it. */
const OUTSIDE_WRIT = 'that nothing happened outside Writ: the receipt covers only what Writ authorized, dispatched and recorded';
const PROPOSER_CLAIMS = "that the proposer's own claims in the request (reason, expected_effects, reversibility_hint) are true: policy judged the request as proposed";

function bounded(statements: readonly string[]): string[] {
  return statements.slice(0, LIMITS.shortListItems).map((text) => (text.length <= LIMITS.text ? text : `${text.slice(0, LIMITS.text - 1)}…`));
}

export interface ActionStatementsInput {
  readonly result: ReceiptResultCode;
  /** What the executor observed; null when nothing ran or nothing was recorded. */
  readonly execution: ExecutionCompleted | null;
  /** A director's settlement of an unknown outcome the receipt relies on. */
  readonly resolution: ExecutionOutcomeResolved | null;
  /** The approval the attempt waited for, if any. */
  readonly approval: { readonly status: ApprovalStatus; readonly state_witness_ref: string | null; readonly witness_validated: boolean | null } | null;
  /** A grant was minted for the attempt, and whether `grant.issued` carried its signed form. */
  readonly grant: { readonly jwsRecorded: boolean } | null;
  readonly rollback: ReceiptRollback;
}

/** The receipt of an attempt: settled, unknown, resolved by a director, or refused. */
export function actionNotAsserted(input: ActionStatementsInput): string[] {
  const out = [OUTSIDE_WRIT, PROPOSER_CLAIMS];
  const ran = input.result === 'succeeded' || input.result === 'failed' || input.result === 'unknown_outcome';
  if (!ran) {
    out.push('anything about the effect of the action: it was not run under this attempt, so there is no effect to assert');
    return bounded(out);
  }
  if (input.result === 'unknown_outcome') {
    out.push('whether the effect happened: the outcome is unknown (Hermit 19.4), and automatic replay is blocked until it is resolved');
  }
  if (input.resolution !== null) {
    out.push(`the effect itself: the outcome is the statement of ${input.resolution.resolved_by} on evidence outside the log; Writ did not observe it`);
  }
  if (input.approval === null) {
    out.push('the state the action ran on: no approval was required, so no state witness was captured before execution');
  } else if (input.approval.state_witness_ref === null) {
    out.push('the state the action ran on: no state witness was captured when approval was requested');
  } else if (input.approval.status === 'granted' && input.approval.witness_validated !== true) {
    out.push('that the state witness still held when the grant was issued: its revalidation is not recorded');
  }
  if (input.grant !== null && !input.grant.jwsRecorded) out.push("the grant's signed form: grant.issued carries its claims but no JWS");
  const execution = input.execution;
  // A use proven never started ran nowhere: nothing about how it ran is left unasserted.
  if (execution !== null && execution.outcome !== 'unknown' && execution.outcome !== 'not_run') {
    const egress = execution.environment?.egress_hosts ?? [];
    if (execution.environment === null) out.push("the isolation the action ran under: the cell's environment was not read back");
    else if (egress.length > 0) out.push(`the effect on the hosts the cell could reach (${egress.slice(0, 8).join(', ')}): Writ observed only the cell's exit status, outputs and workspace`);
    out.push("changes outside the cell's workspace: the recorded diff covers /workspace only");
    if (execution.changed_files.length >= LIMITS.listItems) out.push(`that the changed-file list is complete: it stops at ${LIMITS.listItems} entries`);
    if (execution.error !== undefined) out.push(`a complete record of the run: the executor reported ${execution.error.code}`);
  }
  if (input.rollback.method === 'none' && input.rollback.statement !== NOTHING_CHANGED) out.push(`a rollback method: ${input.rollback.statement}`);
  return bounded(out);
}

export interface ApprovalStatementsInput {
  readonly status: Exclude<ApprovalStatus, 'pending'>;
  readonly state_witness_ref: string | null;
  readonly witness_validated: boolean | null;
}

/** The receipt of an approval resolution. */
export function approvalNotAsserted(input: ApprovalStatementsInput): string[] {
  const out = [
    OUTSIDE_WRIT,
    'why the resolver decided as recorded: Writ records who resolved it, with which signed resolution, and the note, not their reasoning',
    "that the action ran or how it ended: the attempt's own receipt says that",
  ];
  if (input.status === 'granted') {
    if (input.state_witness_ref === null) out.push('the state the approval was given on: no state witness was captured');
    else if (input.witness_validated !== true) out.push('that the state witness still held when the approval was granted: its revalidation is not recorded');
  }
  return bounded(out);
}
