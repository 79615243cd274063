import type { DoneClaim, DoneRefusalCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { judgeDoneClaim, type DoneClaimFacts, type DoneJudgment } from './done-claim.rules.js';
import { BRIEF, DONE_CLEAN } from './claims.fixtures.js';

const FACTS: DoneClaimFacts = { brief: BRIEF, taskStatus: 'running', standing: null, verification: { kind: 'not_run' } };
const OBSERVED_0: DoneClaimFacts = { ...FACTS, verification: { kind: 'observed', exit_code: 0 } };

function codes(judgment: DoneJudgment): DoneRefusalCode[] {
  return judgment.verdict === 'refused' ? judgment.refusals.map((r) => r.code as DoneRefusalCode) : [];
}

describe('judgeDoneClaim: the accepted paths', () => {
  it('given a done_clean claim that holds and no verify run yet, when judged, then Writ must run the verify command first', () => {
    expect(judgeDoneClaim(DONE_CLEAN, FACTS)).toEqual({ verdict: 'verify' });
  });

  it('given a done_clean claim and a verify exit 0 observed by Writ, when judged, then it is accepted', () => {
    expect(judgeDoneClaim(DONE_CLEAN, OBSERVED_0)).toEqual({ verdict: 'accepted', status: 'done_clean' });
  });

  it('given a pending claim with pending actions and an observed exit 0, when judged, then it is accepted as pending', () => {
    const pending: DoneClaim = { ...DONE_CLEAN, status: 'pending', pending_actions: ['wire the config loader'] };
    expect(judgeDoneClaim(pending, FACTS)).toEqual({ verdict: 'verify' });
    expect(judgeDoneClaim(pending, OBSERVED_0)).toEqual({ verdict: 'accepted', status: 'pending' });
  });

  it('given a failed claim with its stderr, when judged, then it is accepted without a verify run', () => {
    const failed: DoneClaim = { ...DONE_CLEAN, status: 'failed', evidence: { ...DONE_CLEAN.evidence, verify_exit_code: 1, verify_stderr: 'retry test timed out' } };
    expect(judgeDoneClaim(failed, FACTS)).toEqual({ verdict: 'accepted', status: 'failed' });
  });

  it('given a brief that asked for a ship and a done_clean claim whose ship is ok, when judged with exit 0, then it is accepted', () => {
    const ship = { requested: true, result: 'ok', commit: 'abc123', deploy_url: null, deploy_status: null } as const;
    expect(judgeDoneClaim({ ...DONE_CLEAN, ship }, { ...OBSERVED_0, brief: { ...BRIEF, ship: true } })).toEqual({ verdict: 'accepted', status: 'done_clean' });
  });
});

// Seed 003, prompt-protocols, "Status values + forbidden patterns", the no-idle-wait terminal states and idempotency: one case each.
describe('judgeDoneClaim: every forbidden done pattern is refused with its code', () => {
  const cases: ReadonlyArray<{ readonly note: string; readonly claim: DoneClaim; readonly facts?: Partial<DoneClaimFacts>; readonly want: DoneRefusalCode }> = [
    { note: 'done_clean, Writ never ran the verify command (it was denied)', claim: DONE_CLEAN, facts: { verification: { kind: 'unobserved', reason: 'policy denied the verify command' } }, want: 'DONE_VERIFY_NOT_OBSERVED' },
    { note: 'done_clean, the verify outcome is unknown', claim: DONE_CLEAN, facts: { verification: { kind: 'unobserved', reason: 'the executor lost the outcome' } }, want: 'DONE_VERIFY_NOT_OBSERVED' },
    { note: 'done_clean, Writ observed the verify command exit 1', claim: DONE_CLEAN, facts: { verification: { kind: 'observed', exit_code: 1 } }, want: 'DONE_VERIFY_FAILED' },
    { note: 'done_clean without verify_exit_code == 0 (claimed 2)', claim: { ...DONE_CLEAN, evidence: { ...DONE_CLEAN.evidence, verify_exit_code: 2 } }, want: 'DONE_VERIFY_EXIT_NONZERO' },
    { note: 'done_clean whose verify never exited (null)', claim: { ...DONE_CLEAN, evidence: { ...DONE_CLEAN.evidence, verify_exit_code: null } }, want: 'DONE_VERIFY_EXIT_NONZERO' },
    { note: 'done_clean with regressions[] non-empty', claim: { ...DONE_CLEAN, regressions: ['login page 500s'] }, want: 'DONE_REGRESSIONS' },
    { note: "done_clean with the brief's required gate missing from gates_passed", claim: { ...DONE_CLEAN, audit: { ...DONE_CLEAN.audit!, gates_passed: [] } }, want: 'DONE_AUDIT_GATE_MISSING' },
    { note: "done_clean with the claim's own required gate missing", claim: { ...DONE_CLEAN, audit: { ...DONE_CLEAN.audit!, gates_required: ['codeaudit', 'secaudit'] } }, want: 'DONE_AUDIT_GATE_MISSING' },
    { note: 'done_clean without any audit block while the brief names gates', claim: (({ audit: _a, ...rest }) => rest)(DONE_CLEAN), want: 'DONE_AUDIT_GATE_MISSING' },
    { note: 'done_clean with an audit verdict of partial', claim: { ...DONE_CLEAN, audit: { ...DONE_CLEAN.audit!, verdict: 'partial' } }, want: 'DONE_AUDIT_UNSATISFIED' },
    { note: 'done_clean after a ship that returned failed', claim: { ...DONE_CLEAN, ship: { requested: true, result: 'failed', commit: null, deploy_url: null, deploy_status: 'ERROR' } }, facts: { brief: { ...BRIEF, ship: true } }, want: 'DONE_AFTER_FAILED_SHIP' },
    { note: 'done_clean after a ship that returned frozen', claim: { ...DONE_CLEAN, ship: { requested: true, result: 'frozen', commit: null, deploy_url: null, deploy_status: null } }, facts: { brief: { ...BRIEF, ship: true } }, want: 'DONE_AFTER_FAILED_SHIP' },
    { note: 'done_clean without the ship the brief asked for', claim: DONE_CLEAN, facts: { brief: { ...BRIEF, ship: true } }, want: 'DONE_SHIP_NOT_REPORTED' },
    { note: 'a ship the brief did not ask for', claim: { ...DONE_CLEAN, ship: { requested: true, result: 'ok', commit: 'abc', deploy_url: null, deploy_status: null } }, want: 'DONE_SHIP_NOT_AUTHORIZED' },
    { note: 'pending with an empty pending_actions[]', claim: { ...DONE_CLEAN, status: 'pending' }, want: 'DONE_PENDING_WITHOUT_ACTIONS' },
    { note: 'pending whose slice did not verify (exit 1)', claim: { ...DONE_CLEAN, status: 'pending', pending_actions: ['next'], evidence: { ...DONE_CLEAN.evidence, verify_exit_code: 1 } }, want: 'DONE_VERIFY_EXIT_NONZERO' },
    { note: 'pending, Writ observed the verify command fail', claim: { ...DONE_CLEAN, status: 'pending', pending_actions: ['next'] }, facts: { verification: { kind: 'observed', exit_code: 3 } }, want: 'DONE_VERIFY_FAILED' },
    { note: 'failed with an empty evidence.verify_stderr', claim: { ...DONE_CLEAN, status: 'failed', evidence: { ...DONE_CLEAN.evidence, verify_stderr: '  ' } }, want: 'DONE_FAILED_WITHOUT_STDERR' },
    { note: "a mission that is not the brief's", claim: { ...DONE_CLEAN, mission: 'Rewrite the retry module.' }, want: 'DONE_MISSION_MISMATCH' },
    { note: "evidence of another command than the brief's verify_command", claim: { ...DONE_CLEAN, evidence: { ...DONE_CLEAN.evidence, verify_command: ['true'] } }, want: 'DONE_VERIFY_COMMAND_MISMATCH' },
    { note: 'a second done.json while the first is being verified', claim: DONE_CLEAN, facts: { standing: { claim_id: 'dcl-1', state: 'verifying' } }, want: 'DONE_ALREADY_CLAIMED' },
    { note: 'a second done.json after the first was accepted', claim: DONE_CLEAN, facts: { standing: { claim_id: 'dcl-1', state: 'accepted' }, taskStatus: 'completed' }, want: 'DONE_ALREADY_CLAIMED' },
    { note: 'a done claim on a cancelled task', claim: DONE_CLEAN, facts: { taskStatus: 'cancelled' }, want: 'DONE_TASK_ENDED' },
  ];

  it.each(cases)('given $note, when judged, then it is refused $want', ({ claim, facts, want }) => {
    const judgment = judgeDoneClaim(claim, { ...OBSERVED_0, ...facts });
    expect(judgment.verdict, JSON.stringify(judgment)).toBe('refused');
    expect(codes(judgment)).toEqual([want]);
  });

  it('given a claim breaking several rules, when judged, then every code is listed and no verify run is asked for', () => {
    const claim: DoneClaim = { ...DONE_CLEAN, regressions: ['x'], audit: { ...DONE_CLEAN.audit!, gates_passed: [] }, evidence: { ...DONE_CLEAN.evidence, verify_exit_code: 1 } };
    expect(codes(judgeDoneClaim(claim, FACTS)).sort()).toEqual(['DONE_AUDIT_GATE_MISSING', 'DONE_REGRESSIONS', 'DONE_VERIFY_EXIT_NONZERO']);
  });

  it('given a standing claim, when a second claim is judged, then only DONE_ALREADY_CLAIMED is reported (the second is not judged on its merits)', () => {
    expect(codes(judgeDoneClaim({ ...DONE_CLEAN, regressions: ['x'] }, { ...FACTS, standing: { claim_id: 'dcl-1', state: 'verifying' } }))).toEqual(['DONE_ALREADY_CLAIMED']);
  });
});
