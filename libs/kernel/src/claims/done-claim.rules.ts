import { TASK_TERMINAL_STATES, type Brief, type DoneClaim, type DoneClaimStatus, type DoneRefusal, type DoneRefusalCode, type TaskStatus } from '@writ/contracts';

/**
 * What Writ itself observed of the brief's verify command for one claim:
 * `not_run` (not proposed yet), `observed` (the orchestrator's execute_command
 * attempt ran in the task's cell and the executor recorded an exit code), or
 * `unobserved` (denied, refused, timed out, unknown outcome: no exit code of
 * Writ's own).
 */
export type VerificationFact =
  | { readonly kind: 'not_run' }
  | { readonly kind: 'observed'; readonly exit_code: number }
  | { readonly kind: 'unobserved'; readonly reason: string };

/** Another done claim of the same task that still stands (a refused one does not). */
export interface StandingDoneClaim {
  readonly claim_id: string;
  readonly state: 'verifying' | 'accepted';
}

export interface DoneClaimFacts {
  /** The brief the task was created from. */
  readonly brief: Brief;
  readonly taskStatus: TaskStatus;
  readonly standing: StandingDoneClaim | null;
  readonly verification: VerificationFact;
}

/**
 * - `accepted`: the claim holds; the task may close (after the file-ownership audit).
 * - `verify`: every rule but verification holds, and the status needs a verify
 *   exit 0 observed by Writ: run the brief's verify command, then judge again.
 * - `refused`: every rule the claim breaks, with its code.
 */
export type DoneJudgment =
  | { readonly verdict: 'accepted'; readonly status: DoneClaimStatus }
  | { readonly verdict: 'verify' }
  | { readonly verdict: 'refused'; readonly refusals: readonly DoneRefusal[] };

/** Statuses that assert a verify pass: `done_clean` and `pending` ("verify passed for this slice"). */
export const VERIFIED_STATUSES: readonly DoneClaimStatus[] = Object.freeze(['done_clean', 'pending'] as const);

const SHIP_FAILURES = new Set(['failed', 'frozen']);

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((arg, i) => arg === b[i]);
}

function list(items: readonly string[]): string {
  return items.join(', ');
}

/**
 * Judges a `done.json` claim (seed 003, prompt-protocols) against the brief
 * and the facts Writ holds. Pure: the same claim and facts give the same
 * judgment. Forbidden (each its own code): `done_clean` without a verify exit
 * 0 observed by Writ, claiming a non-zero exit, with regressions, with a
 * required audit gate missing or an unsatisfied audit, after a ship that
 * failed or froze, without the ship the brief asked for; a ship the brief did
 * not ask for; `pending` without pending actions; `failed` without stderr; a
 * mission or verify command other than the brief's; a second claim while one
 * stands; a claim on an ended task.
 */
export function judgeDoneClaim(claim: DoneClaim, facts: DoneClaimFacts): DoneJudgment {
  const { brief } = facts;
  if (facts.standing !== null) {
    const how = facts.standing.state === 'accepted' ? 'was accepted' : 'is being verified';
    return refused([{ code: 'DONE_ALREADY_CLAIMED', message: `done claim ${facts.standing.claim_id} ${how}; done.json is written once: send a correction record instead` }]);
  }
  if (TASK_TERMINAL_STATES.includes(facts.taskStatus)) {
    return refused([{ code: 'DONE_TASK_ENDED', message: `the task is ${facts.taskStatus}; a done claim can no longer close it` }]);
  }

  const refusals: DoneRefusal[] = [];
  const refuse = (code: DoneRefusalCode, message: string) => refusals.push({ code, message });
  if (claim.mission.trim() !== brief.mission.trim()) refuse('DONE_MISSION_MISMATCH', "the claim's mission is not a copy of the brief's mission");
  if (!sameArgv(claim.evidence.verify_command, brief.verify_command)) {
    refuse('DONE_VERIFY_COMMAND_MISMATCH', `the evidence ran [${list(claim.evidence.verify_command)}], the brief's verify_command is [${list(brief.verify_command)}]`);
  }
  const ship = claim.ship;
  if (!brief.ship && ship !== undefined && ship.result !== 'skipped') {
    refuse('DONE_SHIP_NOT_AUTHORIZED', `a ship ran (result ${ship.result}) although the brief did not ask for one`);
  }

  switch (claim.status) {
    case 'done_clean': {
      if (claim.evidence.verify_exit_code !== 0) refuse('DONE_VERIFY_EXIT_NONZERO', `done_clean with verify_exit_code ${String(claim.evidence.verify_exit_code)}`);
      if (claim.regressions.length > 0) refuse('DONE_REGRESSIONS', `done_clean with ${claim.regressions.length} regression(s): ${list(claim.regressions).slice(0, 512)}`);
      const required = [...new Set([...brief.audit_gates, ...(claim.audit?.gates_required ?? [])])];
      const passed = new Set(claim.audit?.gates_passed ?? []);
      const missing = required.filter((gate) => !passed.has(gate));
      if (missing.length > 0) refuse('DONE_AUDIT_GATE_MISSING', `required audit gate(s) not passed: ${list(missing)}`);
      if (claim.audit !== undefined && claim.audit.verdict !== 'satisfied') refuse('DONE_AUDIT_UNSATISFIED', `done_clean with audit verdict ${claim.audit.verdict}`);
      if (ship !== undefined && SHIP_FAILURES.has(ship.result)) refuse('DONE_AFTER_FAILED_SHIP', `done_clean after a ship that returned ${ship.result}`);
      if (brief.ship && ship === undefined) refuse('DONE_SHIP_NOT_REPORTED', 'the brief asked for a ship and the claim reports none');
      break;
    }
    case 'pending':
      if (claim.pending_actions.length === 0) refuse('DONE_PENDING_WITHOUT_ACTIONS', 'pending needs the next slices in pending_actions[]');
      if (claim.evidence.verify_exit_code !== 0) refuse('DONE_VERIFY_EXIT_NONZERO', `pending ("verify passed for this slice") with verify_exit_code ${String(claim.evidence.verify_exit_code)}`);
      break;
    case 'failed':
      if (claim.evidence.verify_stderr.trim() === '') refuse('DONE_FAILED_WITHOUT_STDERR', 'failed needs the evidence: evidence.verify_stderr is empty');
      break;
  }
  if (refusals.length > 0) return refused(refusals);
  if (!VERIFIED_STATUSES.includes(claim.status)) return { verdict: 'accepted', status: claim.status };

  const verification = facts.verification;
  switch (verification.kind) {
    case 'not_run':
      return { verdict: 'verify' };
    case 'observed':
      if (verification.exit_code === 0) return { verdict: 'accepted', status: claim.status };
      return refused([{ code: 'DONE_VERIFY_FAILED', message: `Writ ran [${list(brief.verify_command)}] in the task's cell: exit ${verification.exit_code}` }]);
    case 'unobserved':
      return refused([{ code: 'DONE_VERIFY_NOT_OBSERVED', message: `Writ observed no exit 0 of the verify command: ${verification.reason}`.slice(0, 4_096) }]);
  }
}

function refused(refusals: readonly DoneRefusal[]): DoneJudgment {
  return { verdict: 'refused', refusals: refusals.map((r) => ({ code: r.code, message: r.message.slice(0, 4_096) })) };
}
