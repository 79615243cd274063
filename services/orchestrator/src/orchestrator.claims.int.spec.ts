import type { ActionRequest, ChangedFile, EventEnvelope } from '@writ/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockedClaimOf, briefOf, briefedRequest, doneClaimOf, verifyRunIds } from '../test/claim-fixtures.js';
import { registerPrincipal, requestClaim, signClaim, type TestPrincipal } from '../test/claims-rig.js';
import { append, createRig, disposeRig, events, startApp, waitForCommand, waitForEvents, type Rig } from '../test/rig.js';
import {
  AGENT,
  commandRequest,
  executionCompletedDraft,
  grantIssuedDraft,
  ingressDrafts,
  policyEvaluatedDraft,
  receiptIssuedDraft,
  taskIds,
  useClaimedDraft,
  type TaskIds,
} from '../test/task-fixtures.js';

/**
 * Claims against the running orchestrator (docs/task-claims.md): signed
 * done / blocked claims over NATS request/reply, judged against the log; the
 * verify command proposed as a governed action, whose policy, grant, execution
 * and receipt the test appends as the other services would.
 */

let rig: Rig;
let agent: TestPrincipal;
let intruder: TestPrincipal;
const name = (suffix: string) => `${suffix}-${Math.random().toString(16).slice(2, 8)}`;
const HASH = 'c'.repeat(64);
const written = (path: string, change: ChangedFile['change'] = 'added'): ChangedFile => ({ path, change, before_sha256: change === 'added' ? null : 'd'.repeat(64), after_sha256: HASH });

beforeAll(async () => {
  rig = await createRig('claims');
  agent = await registerPrincipal(rig, AGENT);
  intruder = await registerPrincipal(rig, 'intruder-1');
  await startApp(rig);
});

afterAll(async () => {
  await disposeRig(rig);
});

/** Plays policy (allow), approval (grant), executor (use, execution) and receipt for one attempt, waiting on the orchestrator between each. */
async function runAttempt(ids: TaskIds, request: ActionRequest, options: { exitCode?: number; changed?: ChangedFile[] } = {}): Promise<void> {
  await waitForCommand(rig, rig.config.subjects.policyEvaluate, ids.attempt_id);
  await append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'local_edit_allowed'));
  await waitForCommand(rig, rig.config.subjects.approvalIssueGrant, ids.attempt_id);
  const grant = grantIssuedDraft(ids, request);
  await append(rig, ids.task_id, grant);
  await waitForCommand(rig, rig.config.subjects.executorRun, ids.attempt_id);
  await append(rig, ids.task_id, useClaimedDraft(ids, grant, request));
  await waitFor(ids, 'attempt.executing');
  await append(rig, ids.task_id, executionCompletedDraft(ids, { exitCode: options.exitCode ?? 0, changedFiles: options.changed ?? [] }));
  await waitForCommand(rig, rig.config.subjects.receiptIssue, ids.attempt_id);
  await append(rig, ids.task_id, receiptIssuedDraft(ids, (options.exitCode ?? 0) === 0 ? 'succeeded' : 'failed'));
  await waitFor(ids, (options.exitCode ?? 0) === 0 ? 'attempt.succeeded' : 'attempt.failed');
}

async function waitFor(ids: TaskIds, type: string): Promise<EventEnvelope> {
  const found = await waitForEvents(rig, ids.task_id, type);
  return found.find((event) => event.attempt_id === ids.attempt_id) ?? (found[0] as EventEnvelope);
}

/** A briefed task whose agent action has run (changing `changed`); nothing in flight. */
async function workedTask(suffix: string, changed: ChangedFile[] = [written('src/greeting.txt')]): Promise<TaskIds> {
  const ids = taskIds(name(suffix));
  const request = briefedRequest(ids);
  await append(rig, ids.task_id, ...ingressDrafts(ids, request));
  await runAttempt(ids, request, { changed });
  return ids;
}

async function verifyRequestOf(ids: TaskIds): Promise<ActionRequest> {
  const submitted = await waitFor(ids, 'attempt.awaiting_policy');
  return (submitted.payload as { action_request: ActionRequest }).action_request;
}

const typesOf = async (ids: TaskIds) => (await events(rig, ids.task_id)).map((event) => event.event_type);

describe('done claims against the running orchestrator', () => {
  it('given a done_clean claim signed by the task agent, when sent, then Writ runs the brief verify command as a governed action, and exit 0 completes the task', async () => {
    // given
    const ids = await workedTask('ok');
    expect(await typesOf(ids)).not.toContain('task.completed');
    // when
    const { reply } = await requestClaim(rig, 'done', { task_id: ids.task_id, claim_jws: await signClaim('done', ids.task_id, doneClaimOf(), agent) });
    // then: verifying, with the verify command proposed by the orchestrator and asking policy
    expect(reply).toMatchObject({ kind: 'done', status: 'verifying', refusals: [], duplicate: false });
    const verifyIds = verifyRunIds(ids, reply!.claim_id);
    const evaluate = await waitForCommand(rig, rig.config.subjects.policyEvaluate, verifyIds.attempt_id);
    expect(evaluate).toMatchObject({ action_request: { action_class: 'execute_command', params: { argv: ['sh', 'verify.sh'] }, proposed_by: 'writ-orchestrator' } });
    // the verify run exits 0 as the executor observed it
    await runAttempt(verifyIds, await verifyRequestOf(verifyIds), { exitCode: 0 });
    await waitForEvents(rig, ids.task_id, 'task.completed');
    const types = await typesOf(ids);
    expect(types.slice(-4)).toEqual(['claim.done_accepted', 'decision.recorded', 'audit.file_ownership_passed', 'task.completed']);
    // the claim as recorded before it was judged: who signed it, what it said
    const all = await events(rig, ids.task_id);
    const submitted = all.find((event) => event.event_type === 'claim.done_submitted');
    expect(submitted?.payload).toMatchObject({ claimed_by: AGENT, claim: { status: 'done_clean' } });
  });

  it('given a done_clean claim with regressions, when sent, then it is refused at once with DONE_REGRESSIONS and recorded as a decision; the task stays open', async () => {
    const ids = await workedTask('regr');
    const jws = await signClaim('done', ids.task_id, doneClaimOf({ regressions: ['the greeting is empty'] }), agent);
    const { reply } = await requestClaim(rig, 'done', { task_id: ids.task_id, claim_jws: jws });
    expect(reply).toMatchObject({ status: 'refused', refusals: [{ code: 'DONE_REGRESSIONS' }], verify_action_request_id: null });
    const decision = (await events(rig, ids.task_id)).find((event) => event.event_type === 'decision.recorded');
    expect(decision?.payload).toMatchObject({ subject_ref: `claim:${reply!.claim_id}`, outcome_event: 'claim.done_refused' });
    // sent again: the same standing, nothing appended
    const before = (await events(rig, ids.task_id)).length;
    expect((await requestClaim(rig, 'done', { task_id: ids.task_id, claim_jws: jws })).reply).toMatchObject({ status: 'refused', duplicate: true });
    expect((await events(rig, ids.task_id)).length).toBe(before);
    expect((await typesOf(ids)).includes('task.completed')).toBe(false);
  });

  it('given the verify run exits 1, when observed, then the claim is refused DONE_VERIFY_FAILED and a second claim is refused DONE_ALREADY_CLAIMED while the first is verified', async () => {
    const ids = await workedTask('fail');
    const first = (await requestClaim(rig, 'done', { task_id: ids.task_id, claim_jws: await signClaim('done', ids.task_id, doneClaimOf(), agent) })).reply!;
    const second = (await requestClaim(rig, 'done', { task_id: ids.task_id, claim_jws: await signClaim('done', ids.task_id, doneClaimOf({ agent: 'again' }), agent) })).reply!;
    expect(second).toMatchObject({ status: 'refused', refusals: [{ code: 'DONE_ALREADY_CLAIMED' }] });
    const verifyIds = verifyRunIds(ids, first.claim_id);
    await runAttempt(verifyIds, await verifyRequestOf(verifyIds), { exitCode: 1 });
    const refused = (await waitForEvents(rig, ids.task_id, 'claim.done_refused', 2)).find((event) => event.payload['claim_id'] === first.claim_id);
    expect(refused?.payload).toMatchObject({ reopened: true, refusals: [{ code: 'DONE_VERIFY_FAILED' }], verification: { status: 'observed', exit_code: 1 } });
  });

  it('given an execution that changed a file outside files_owned, when the accepted claim closes the task, then the file-ownership audit fails it', async () => {
    // a real write outside files_owned cannot pass policy: this execution's command touched README.md as a side effect
    const ids = await workedTask('audit', [written('src/greeting.txt'), written('README.md', 'modified')]);
    const claim = doneClaimOf({ status: 'failed', evidence: { ...doneClaimOf().evidence, verify_exit_code: 1, verify_stderr: 'not done' } });
    expect((await requestClaim(rig, 'done', { task_id: ids.task_id, claim_jws: await signClaim('done', ids.task_id, claim, agent) })).reply).toMatchObject({ status: 'accepted' });
    const audit = (await waitForEvents(rig, ids.task_id, 'audit.file_ownership_failed'))[0];
    expect(audit?.payload).toMatchObject({ modified_not_owned: [{ path: 'README.md' }] });
    await waitForEvents(rig, ids.task_id, 'task.failed');
  });
});

describe('claims: who may claim, and for what', () => {
  it('given a claim signed by another principal than the task owner, when sent, then ORCHESTRATOR_CLAIM_SIGNER_NOT_ALLOWED and nothing is recorded', async () => {
    const ids = await workedTask('owner');
    const before = (await events(rig, ids.task_id)).length;
    const answer = await requestClaim(rig, 'done', { task_id: ids.task_id, claim_jws: await signClaim('done', ids.task_id, doneClaimOf(), intruder) });
    expect(answer.code).toBe('ORCHESTRATOR_CLAIM_SIGNER_NOT_ALLOWED');
    expect((await events(rig, ids.task_id)).length).toBe(before);
  });

  it('given a tampered claim, a stale claim, a claim for another task and a task without a brief, when sent, then each is refused with its code', async () => {
    const ids = await workedTask('refuse');
    const jws = await signClaim('done', ids.task_id, doneClaimOf(), agent);
    const [header, payload, signature] = jws.split('.') as [string, string, string];
    const signed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { claim: Record<string, unknown> };
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...signed, claim: { ...signed.claim, status: 'pending' } })).toString('base64url')}.${signature}`;
    expect((await requestClaim(rig, 'done', { task_id: ids.task_id, claim_jws: tampered })).code).toBe('ORCHESTRATOR_CLAIM_SIGNATURE_INVALID');
    const stale = await signClaim('done', ids.task_id, doneClaimOf(), agent, new Date(Date.now() - 3_600_000));
    expect((await requestClaim(rig, 'done', { task_id: ids.task_id, claim_jws: stale })).code).toBe('ORCHESTRATOR_CLAIM_STALE');
    expect((await requestClaim(rig, 'done', { task_id: 'tsk-elsewhere', claim_jws: jws })).code).toBe('ORCHESTRATOR_CLAIM_MISMATCH');
    // a task created without a brief has no verify command to hold a done claim to
    const plain = taskIds(name('plain'));
    await append(rig, plain.task_id, ...ingressDrafts(plain, commandRequest(plain, ['true'])));
    const unbriefed = await signClaim('done', plain.task_id, doneClaimOf(), agent);
    expect((await requestClaim(rig, 'done', { task_id: plain.task_id, claim_jws: unbriefed })).code).toBe('ORCHESTRATOR_TASK_NOT_BRIEFED');
  });
});

describe('blocked claims against the running orchestrator', () => {
  it('given a legal block while the agent action runs, when sent, then the question is asked for a human; an illegal one is refused with its codes', async () => {
    const ids = taskIds(name('block'));
    await append(rig, ids.task_id, ...ingressDrafts(ids, briefedRequest(ids, briefOf())));
    await waitForCommand(rig, rig.config.subjects.policyEvaluate, ids.attempt_id);
    const legal = (await requestClaim(rig, 'blocked', { task_id: ids.task_id, claim_jws: await signClaim('blocked', ids.task_id, blockedClaimOf(), agent) })).reply!;
    expect(legal).toMatchObject({ kind: 'blocked', status: 'accepted', refusals: [] });
    expect(legal.question_id).toMatch(/^qst-/);
    const asked = (await waitForEvents(rig, ids.task_id, 'question.asked'))[0];
    expect(asked?.payload).toMatchObject({ approval_id: legal.question_id, kind: 'question', requested_by: AGENT });
    const illegal = await signClaim('blocked', ids.task_id, blockedClaimOf({ question: 'Should I proceed?', can_resume_without_answer: false }), agent);
    const refused = (await requestClaim(rig, 'blocked', { task_id: ids.task_id, claim_jws: illegal })).reply!;
    expect(refused.status).toBe('refused');
    expect(refused.refusals.map((r) => r.code).sort()).toEqual(['BLOCK_CANNOT_RESUME', 'BLOCK_PREFERENCE']);
  });
});
