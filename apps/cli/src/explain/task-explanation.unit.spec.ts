import { readFileSync } from 'node:fs';
import type { EventEnvelope } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { explanationLines } from './explanation-text.js';
import { EXPLANATION_FORMAT, explainTask, type ActionExplanation } from './task-explanation.js';

/**
 * `writ explain` on a task recorded from the real stack (__fixtures__): a
 * holder `rm -rf scratch` waiting for approval, write_local notes.txt "v1\n"
 * then "v2\n", `sh -c 'echo ran >> log.txt && cat notes.txt'`, `rm -rf build`
 * denied by a director, then `rm -rf scratch` approved and run.
 */

interface Fixture {
  readonly task_id: string;
  readonly actions: { readonly holder: string; readonly v1: string; readonly v2: string; readonly cmd: string; readonly denied: string };
  readonly events: EventEnvelope[];
}

const fixture = JSON.parse(readFileSync(new URL('./__fixtures__/governed-task.events.json', import.meta.url), 'utf8')) as Fixture;
const { task_id: taskId, actions: ids } = fixture;

function actionOf(actions: readonly ActionExplanation[], actionRequestId: string): ActionExplanation {
  const found = actions.find((action) => action.action_request_id === actionRequestId);
  if (found === undefined) throw new Error(`no action ${actionRequestId}`);
  return found;
}

/** The events with one receipt's payload changed by `edit`. */
function withReceipt(receiptIndex: number, edit: (payload: Record<string, unknown>) => Record<string, unknown>): EventEnvelope[] {
  let seen = -1;
  return fixture.events.map((event) => {
    if (event.event_type !== 'receipt.issued') return event;
    seen++;
    return seen === receiptIndex ? { ...event, payload: edit(structuredClone(event.payload)) } : event;
  });
}

describe('explainTask on a recorded task', () => {
  const explanation = explainTask(taskId, fixture.events);

  it('given the task stream, when explained, then the task is summarised and every attempt with a request is explained in proposal order', () => {
    expect(explanation.format).toBe(EXPLANATION_FORMAT);
    expect(explanation.task).toMatchObject({ task_id: taskId, title: 'e2e', status: 'failed', policy_profile_ref: 'local_edit_allowed', files_owned: ['**'], events: fixture.events.length });
    expect(explanation.task.head).toEqual({ task_seq: fixture.events.at(-1)?.task_seq, hash: fixture.events.at(-1)?.hash });
    expect(explanation.actions.map((action) => action.action_request_id)).toEqual([ids.holder, ids.v1, ids.v2, ids.cmd, ids.denied]);
  });

  it('given a directly allowed write_local, when explained, then it says what ran, why (allowed at moderate risk), under which grant, what changed, and that deleting the file undoes it', () => {
    // when
    const v1 = actionOf(explanation.actions, ids.v1);

    // then what happened: the request, with its content summarised by size and hash, never shown
    expect(v1.what).toMatchObject({ action_class: 'write_local', status: 'succeeded', result_code: 'succeeded', reason: 'first draft', target_resources: ['notes.txt'] });
    expect(v1.what.params).toEqual(['path: notes.txt', `content: 3 bytes, sha256 ${sha256Hex('v1\n')}`]);
    // and why: policy allowed it (moderate risk), recorded as a decision
    expect(v1.why.policy).toMatchObject({ outcome: 'allow', risk_band: 'moderate', action_class: 'write_local' });
    expect(v1.why.policy?.profile).toMatch(/^local_edit_allowed@sha256:[0-9a-f]{64}$/);
    expect(v1.why.decisions.map((decision) => decision.recorded_with)).toEqual(['policy.evaluated']);
    // and under whose authority: the proposer and the grant, no approval
    expect(v1.authority.approval).toBeNull();
    expect(v1.authority.grant).toMatchObject({ action_class: 'write_local', paths: ['notes.txt'], hosts: [], max_uses: 1, uses_claimed: 1, revoked: null, refusals: [] });
    expect(v1.authority.grant?.jws_sha256).toMatch(/^[0-9a-f]{64}$/);
    // and the evidence: no witness, the execution, its artifacts and the cell as applied
    expect(v1.evidence.state_witness).toBeNull();
    expect(v1.evidence.execution).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(v1.evidence.artifacts.map((artifact) => artifact.kind)).toEqual(expect.arrayContaining(['command.transcript', 'diff', 'environment.snapshot', 'file.snapshot']));
    expect(v1.evidence.cell).toMatchObject({ network_mode: 'none', readonly_rootfs: true });
    // and what changed
    expect(v1.changed).toEqual([{ path: 'notes.txt', change: 'added', before_sha256: null, after_sha256: sha256Hex('v1\n') }]);
    // and whether it can be verified and rolled back
    expect(v1.verification.receipts).toHaveLength(1);
    expect(v1.verification.receipts[0]).toMatchObject({ result_code: 'succeeded', cause: 'settled', hash_recomputes: true, chained: true, signature: null, transparency_log: 'not_read' });
    expect(v1.replay_class).toBe('idempotent_replay');
    expect(v1.rollback).toMatchObject({ supported: true, method: 'compensating_local_actions', steps: [{ action_class: 'delete_local', path: 'notes.txt', expected_sha256: sha256Hex('v1\n') }] });
  });

  it('given the second write, when explained, then its rollback writes back the first version from the artifact the first write kept', () => {
    const v1 = actionOf(explanation.actions, ids.v1);
    const v2 = actionOf(explanation.actions, ids.v2);
    const kept = v1.evidence.artifacts.find((artifact) => artifact.kind === 'file.snapshot');
    expect(v2.changed).toEqual([{ path: 'notes.txt', change: 'modified', before_sha256: sha256Hex('v1\n'), after_sha256: sha256Hex('v2\n') }]);
    expect(v2.rollback).toMatchObject({
      supported: true,
      steps: [{ action_class: 'write_local', path: 'notes.txt', expected_sha256: sha256Hex('v2\n'), restore_artifact_ref: `artifact:${kept?.artifact_id}`, restore_sha256: sha256Hex('v1\n') }],
    });
  });

  it('given the approved destructive command, when explained, then it names the approval, its resolver, the revalidated witness, both receipts and the decisions', () => {
    const holder = actionOf(explanation.actions, ids.holder);
    expect(holder.why.policy).toMatchObject({ outcome: 'require_approval', risk_band: 'high', witness_required: true, matched_rules: ['destructive_command'] });
    expect(holder.why.policy?.risk_factors.length).toBeGreaterThan(1);
    expect(holder.authority.approval).toMatchObject({ status: 'granted', note: 'fixture grant', witness_validated: true });
    expect(holder.authority.approval?.resolved_by).toMatch(/^director-/);
    expect(holder.evidence.state_witness).toMatchObject({ fingerprints: { scratch: 'absent' } });
    expect(holder.evidence.approval_packet_ref).toMatch(/^artifact:sha256:/);
    expect(holder.why.decisions.map((decision) => decision.recorded_with)).toEqual(['policy.evaluated', 'approval.granted']);
    expect(holder.verification.receipts.map((receipt) => receipt.cause)).toEqual(['approval_resolved', 'settled']);
    expect(holder.verification.receipts.every((receipt) => receipt.hash_recomputes && receipt.chained)).toBe(true);
    expect(holder.verification.receipts[1]?.binds).toMatchObject({ state_witness_ref: holder.evidence.state_witness?.ref });
    expect(holder.changed).toEqual([]);
    expect(holder.rollback).toMatchObject({ supported: false, method: 'none' });
  });

  it('given the denied command, when explained, then nothing ran, no grant was minted and the denial is receipted twice', () => {
    const denied = actionOf(explanation.actions, ids.denied);
    expect(denied.what.status).toBe('approval_denied');
    expect(denied.authority).toMatchObject({ grant: null, approval: { status: 'denied', note: 'fixture deny' } });
    expect(denied.evidence.execution).toBeNull();
    expect(denied.verification.receipts.map((receipt) => [receipt.cause, receipt.result_code])).toEqual([
      ['approval_denied', 'refused'],
      ['approval_resolved', 'refused'],
    ]);
    expect(denied.rollback).toMatchObject({ supported: false, statement: expect.stringContaining('nothing ran') });
  });

  it('given an action id, when explained, then only its attempts are shown', () => {
    const one = explainTask(taskId, fixture.events, { actionRequestId: ids.cmd });
    expect(one.action_request_id).toBe(ids.cmd);
    expect(one.actions.map((action) => action.action_request_id)).toEqual([ids.cmd]);
    expect(one.actions[0]?.what.params).toEqual([`argv: sh -c "echo ran >> log.txt && cat notes.txt"`]);
  });

  it('given signature checks and transparency-log leaves, when explained, then each receipt carries its own', () => {
    const v1Receipt = actionOf(explanation.actions, ids.v1).verification.receipts[0]?.receipt_id ?? '';
    const result = explainTask(taskId, fixture.events, {
      signatures: new Map([[v1Receipt, { ok: true, kid: 'writ-receipt-k1', problem: null }]]),
      transparencyLog: new Map([[v1Receipt, { log_id: 'writ-receipts', leaf_index: 7, receipt_hash: 'a'.repeat(64) }]]),
    });
    expect(actionOf(result.actions, ids.v1).verification.receipts[0]).toMatchObject({ signature: { ok: true, kid: 'writ-receipt-k1' }, transparency_log: { leaf_index: 7 } });
    expect(actionOf(result.actions, ids.v2).verification.receipts[0]).toMatchObject({ signature: null, transparency_log: null });
  });
});

describe('explainTask on a tampered log', () => {
  it('given a receipt body changed after it was hashed, when explained, then its hash does not recompute', () => {
    const events = withReceipt(0, (payload) => ({ ...payload, receipt: { ...(payload['receipt'] as object), result_summary: 'succeeded: nothing to see' } }));
    const receipts = explainTask(taskId, events).actions.flatMap((action) => action.verification.receipts);
    expect(receipts.filter((receipt) => !receipt.hash_recomputes)).toHaveLength(1);
  });

  it('given a receipt that names another predecessor, when explained, then it is shown as not chained', () => {
    const events = withReceipt(2, (payload) => ({ ...payload, receipt: { ...(payload['receipt'] as object), prev_receipt_hash: 'f'.repeat(64) } }));
    const receipts = explainTask(taskId, events).actions.flatMap((action) => action.verification.receipts);
    expect(receipts.filter((receipt) => !receipt.chained)).toHaveLength(1);
  });
});

describe('explanationLines', () => {
  const lines = explanationLines(explainTask(taskId, fixture.events));

  it('given an explanation, when printed, then each action has the seven sections in order', () => {
    const headings = lines.filter((line) => /^ {2}[A-Z]/.test(line));
    const perAction = ['  What happened', '  Why', '  Evidence', '  Authority', '  What changed', '  Can it be verified', '  Can it be replayed or rolled back'];
    expect(headings).toEqual(Array.from({ length: 5 }, () => perAction).flat());
    expect(lines[0]).toBe(`task ${taskId} — e2e`);
  });

  it('given an explanation, when printed, then it is one fact per line and a written file\'s content never appears', () => {
    expect(lines.every((line) => !line.includes('\n'))).toBe(true);
    expect(lines.some((line) => line.includes(`content: 3 bytes, sha256 ${sha256Hex('v2\n')}`))).toBe(true);
    expect(lines.some((line) => /\bv[12]\\n|"v[12]/.test(line))).toBe(false);
    expect(lines).toEqual(expect.arrayContaining([expect.stringMatching(/^ {4}rollback: +supported \(compensating_local_actions\)/), expect.stringMatching(/^ {4}approval: +none: policy allowed it without approval$/)]));
  });

  it('given a reason carrying terminal control characters, when printed, then they are shown escaped', () => {
    const events = fixture.events.map((event) =>
      event.event_type === 'attempt.awaiting_policy'
        ? { ...event, payload: { ...event.payload, action_request: { ...(event.payload['action_request'] as object), reason: 'clean\u001b[2Jup' } } }
        : event,
    );
    const printed = explanationLines(explainTask(taskId, events));
    expect(printed.some((line) => line.includes('\u001b'))).toBe(false);
    expect(printed.some((line) => line.includes('clean\\u{1b}[2Jup'))).toBe(true);
  });
});

describe('explainTask: a grant renewed while its attempt executed (issue 13)', () => {
  it('given attempt.grant_renewed after the grant was issued, when explained, then the grant names the grant it renewed, the uses of it that never started and its expiry', () => {
    // given: the v1 attempt's grant recorded as the renewal of an earlier grant whose use 1 was proven not run
    const issued = fixture.events.find((event) => event.event_type === 'grant.issued' && (event.payload as { claims: { attempt_id: string } }).claims.attempt_id === actionOf(explanation().actions, ids.v1).attempt_id);
    if (issued === undefined) throw new Error('no grant.issued for v1');
    const grantId = (issued.payload as { claims: { jti: string } }).claims.jti;
    const renewed: EventEnvelope = {
      ...issued,
      event_id: 'evt-renewed',
      event_type: 'attempt.grant_renewed',
      entity_type: 'attempt',
      entity_id: String(issued.attempt_id),
      payload: { grant_id: grantId, expires_at: '2031-01-01T00:00:00.000Z', renews_grant_id: 'gnt-earlier', renews_expired_at: '2030-01-01T00:05:00.000Z', not_run_uses: [1], at: issued.occurred_at },
    };
    const events = fixture.events.flatMap((event) => (event === issued ? [event, renewed] : [event]));
    // when
    const explained = explainTask(taskId, events);
    // then
    expect(actionOf(explained.actions, ids.v1).authority.grant?.renews).toEqual({ grant_id: 'gnt-earlier', not_run_uses: [1], expired_at: '2030-01-01T00:05:00.000Z' });
    expect(actionOf(explained.actions, ids.v2).authority.grant?.renews).toBeNull();
    expect(explanationLines(explained).join('\n')).toMatch(/renews: +gnt-earlier while executing: use 1 of it never started \(proven not run, released\); it expired at 2030-01-01T00:05:00.000Z/);
  });
  const explanation = () => explainTask(taskId, fixture.events);
});
