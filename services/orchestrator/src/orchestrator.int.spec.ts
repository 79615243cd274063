import { headers as natsHeaders } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@writ/testing';
import {
  approvalRequestedDraft,
  approvalResolvedDraft,
  DIRECTOR,
  commandRequest,
  directorJws,
  executionCompletedDraft,
  grantIssuedDraft,
  ingressDrafts,
  laterUseClaimedDraft,
  notRunDrafts,
  policyEvaluatedDraft,
  receiptIssuedDraft,
  taskIds,
  useClaimedDraft,
  writeRequest,
  type TaskIds,
} from '../test/task-fixtures.js';
import { append, createRig, disposeRig, events, startApp, stopApp, storedCommands, waitForCommand, waitForCommandWhere, waitForEvents, waitForIdle, type Rig } from '../test/rig.js';
import { approvalIdFor } from './application/ids.js';
import type { OrchestratorApp } from './bootstrap.js';

/**
 * The orchestrator as a real service: started in-process on its own subject
 * root and streams, driven by appending to the real JetStream log the events
 * the other services would append, observed through the log and the commands
 * stream. Waits are on events and checkpoints, never sleeps.
 */

let rig: Rig;
let orchestrator: OrchestratorApp;
const name = (suffix: string) => `${suffix}-${Math.random().toString(16).slice(2, 8)}`;

beforeAll(async () => {
  rig = await createRig('int');
  orchestrator = await startApp(rig);
});

afterAll(async () => {
  await disposeRig(rig);
});

const subjects = () => rig.config.subjects;
const types = async (ids: TaskIds) => (await events(rig, ids.task_id)).map((e) => e.event_type);
const count = (list: string[], type: string) => list.filter((t) => t === type).length;

/** Ingress's events for a new task, then waits for the EvaluatePolicy they call for. */
async function newTask(ids: TaskIds, request: ReturnType<typeof commandRequest>): Promise<void> {
  await append(rig, ids.task_id, ...ingressDrafts(ids, request));
  await waitForCommand(rig, subjects().policyEvaluate, ids.attempt_id);
}

/** Takes an allowed task to an attached grant, through the service. */
async function toGrantAttached(ids: TaskIds, request: ReturnType<typeof commandRequest>) {
  await newTask(ids, request);
  await append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'local_edit_allowed'));
  await waitForCommand(rig, subjects().approvalIssueGrant, ids.attempt_id);
  const grant = grantIssuedDraft(ids, request);
  await append(rig, ids.task_id, grant);
  await waitForEvents(rig, ids.task_id, 'attempt.grant_attached');
  return grant;
}

/** A task whose attempt awaits approval `approvalId`, requested: what a director (or a forger) resolves next. */
async function awaitingApproval(ids: TaskIds) {
  const request = commandRequest(ids, ['rm', '-rf', 'build']);
  await newTask(ids, request);
  await append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'local_edit_allowed'));
  await waitForEvents(rig, ids.task_id, 'attempt.awaiting_approval');
  const approvalId = approvalIdFor(ids.task_id, ids.attempt_id, 1);
  const requested = approvalRequestedDraft(ids, approvalId);
  await append(rig, ids.task_id, requested);
  return { request, approvalId, requested };
}

/** Commands on `subject` about the attempt, as the commands stream stored them. */
async function commandsFor(subject: string, ids: TaskIds) {
  return (await storedCommands(rig, subject)).filter((command) => command['attempt_id'] === ids.attempt_id);
}

describe('orchestrator service: health', () => {
  it('answers /healthz, and /readyz once NATS is connected, the streams exist and the consumer is bound', async () => {
    const health = await fetch(`${orchestrator.url}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${orchestrator.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      ready: true,
      checks: { nats_connected: true, streams_ensured: true, bus: 'connected', consumers_bound: ['orchestrator', 'orchestrator-participants'], consumers_stalled: [], quarantined: { total: 0 } },
    });
  });
});

describe("orchestrator service: a director's decision is honoured only for its signature (DESIGN invariant 9)", () => {
  it('given an approval.granted appended with no signature, when handled, then approval.resolution_refused APPROVAL_RESOLUTION_UNSIGNED, the attempt still awaits approval, and no grant or receipt is asked for', async () => {
    // given
    const ids = taskIds(name('forged-unsigned'));
    const { approvalId, requested } = await awaitingApproval(ids);
    // when
    const forged = approvalResolvedDraft(ids, approvalId, requested, 'grant', { unsigned: true });
    await append(rig, ids.task_id, forged);
    // then
    const [refused] = await waitForEvents(rig, ids.task_id, 'approval.resolution_refused');
    expect(refused).toMatchObject({ entity_id: approvalId, actor_id: 'writ-orchestrator', payload: { resolution_event_id: forged.event_id, code: 'APPROVAL_RESOLUTION_UNSIGNED' } });
    await waitForIdle(rig);
    expect(await types(ids)).not.toContain('attempt.authorized');
    expect(await commandsFor(subjects().approvalIssueGrant, ids)).toEqual([]);
    expect(await commandsFor(subjects().receiptIssue, ids)).toEqual([]);
    // and the refusal is recorded once, however often the log is handled again
    expect(count(await types(ids), 'approval.resolution_refused')).toBe(1);
  });

  it("given a forged approval.granted, when the real director's signed grant follows, then the SAME attempt is authorized on the real one", async () => {
    // given
    const ids = taskIds(name('forged-then-real'));
    const { approvalId, requested } = await awaitingApproval(ids);
    await append(rig, ids.task_id, approvalResolvedDraft(ids, approvalId, requested, 'grant', { unsigned: true }));
    await waitForEvents(rig, ids.task_id, 'approval.resolution_refused');
    // when
    const real = approvalResolvedDraft(ids, approvalId, requested, 'grant', { at: '2030-01-01T00:00:05.000Z' });
    await append(rig, ids.task_id, { ...real, event_id: `${real.event_id}-real`, idempotency_key: `${String(real.idempotency_key)}:real` });
    // then
    const [authorized] = await waitForEvents(rig, ids.task_id, 'attempt.authorized');
    expect(authorized).toMatchObject({ attempt_id: ids.attempt_id, payload: { via: 'approval', approval_id: approvalId } });
    expect(await waitForCommand(rig, subjects().approvalIssueGrant, ids.attempt_id)).toMatchObject({ approval_id: approvalId });
  });

  it("given an approval.granted carrying the director's signature over another packet, when handled, then APPROVAL_RESOLUTION_PACKET_STALE and no grant is asked for", async () => {
    // given
    const ids = taskIds(name('forged-stale'));
    const { approvalId, requested } = await awaitingApproval(ids);
    const unsigned = approvalResolvedDraft(ids, approvalId, requested, 'grant', { unsigned: true });
    const stale = directorJws({ approval_id: approvalId, decision: 'grant', packet_hash: `sha256:${'0'.repeat(64)}`, resolved_by: DIRECTOR, resolved_at: '2030-01-01T00:00:03.000Z' });
    // when
    await append(rig, ids.task_id, { ...unsigned, payload: { ...unsigned.payload, resolution_jws: stale } });
    // then
    const [refused] = await waitForEvents(rig, ids.task_id, 'approval.resolution_refused');
    expect(refused?.payload).toMatchObject({ code: 'APPROVAL_RESOLUTION_PACKET_STALE' });
    await waitForIdle(rig);
    expect(await commandsFor(subjects().approvalIssueGrant, ids)).toEqual([]);
  });
});

describe('orchestrator service: the governed path', () => {
  it('given a new attempt, then it asks policy; allow → attempt.authorized and IssueGrant to the executor fleet', async () => {
    const ids = taskIds(name('allow'));
    const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    await append(rig, ids.task_id, ...ingressDrafts(ids, request));
    const evaluate = await waitForCommand(rig, subjects().policyEvaluate, ids.attempt_id);
    expect(evaluate).toMatchObject({ ...ids, policy_profile: 'local_edit_allowed', files_owned: ['**'], action_request: { action_request_id: request.action_request_id } });

    await append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'local_edit_allowed'));
    const [authorized] = await waitForEvents(rig, ids.task_id, 'attempt.authorized');
    expect(authorized).toMatchObject({ attempt_id: ids.attempt_id, actor_type: 'service', actor_id: 'writ-orchestrator', correlation_id: ids.task_id, payload: { via: 'policy_allow' } });
    const grant = await waitForCommand(rig, subjects().approvalIssueGrant, ids.attempt_id);
    expect(grant).toMatchObject({ ...ids, issued_to: 'writ-executor', approval_id: null, policy_result_id: `pr-${ids.attempt_id}-1` });
  });

  it('given require_approval → the attempt awaits approval and RequestApproval is issued; approval.granted → the SAME attempt is authorized', async () => {
    const ids = taskIds(name('approve'));
    const request = commandRequest(ids, ['rm', '-rf', 'build']);
    await newTask(ids, request);
    await append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'local_edit_allowed'));
    const [waiting] = await waitForEvents(rig, ids.task_id, 'attempt.awaiting_approval');
    const approvalId = approvalIdFor(ids.task_id, ids.attempt_id, 1);
    expect(waiting?.payload).toMatchObject({ approval_id: approvalId });
    const asked = await waitForCommand(rig, subjects().approvalRequest, ids.attempt_id);
    expect(asked).toMatchObject({ approval_id: approvalId, requested_by: 'agent-1', risk_band: 'high' });

    const requested = approvalRequestedDraft(ids, approvalId);
    await append(rig, ids.task_id, requested);
    await append(rig, ids.task_id, approvalResolvedDraft(ids, approvalId, requested, 'grant'));
    const [authorized] = await waitForEvents(rig, ids.task_id, 'attempt.authorized');
    expect(authorized).toMatchObject({ attempt_id: ids.attempt_id, payload: { via: 'approval', approval_id: approvalId } });
    expect(await waitForCommand(rig, subjects().approvalIssueGrant, ids.attempt_id)).toMatchObject({ approval_id: approvalId });
    expect(count(await types(ids), 'attempt.created')).toBe(1);
  });

  it('given approval.granted with a validated state witness → the SAME attempt is authorized, its grant is attached and it is asked to run', async () => {
    const ids = taskIds(name('witness-ok'));
    const request = commandRequest(ids, ['rm', '-rf', 'build']);
    await newTask(ids, request);
    await append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'local_edit_allowed'));
    const [waiting] = await waitForEvents(rig, ids.task_id, 'attempt.awaiting_approval');
    expect(waiting?.payload).toMatchObject({ policy: { witness_required: true } });
    const approvalId = approvalIdFor(ids.task_id, ids.attempt_id, 1);
    const requested = approvalRequestedDraft(ids, approvalId);
    const granted = approvalResolvedDraft(ids, approvalId, requested, 'grant');
    expect(granted.payload).toMatchObject({ witness_validated: true });
    await append(rig, ids.task_id, requested, granted);

    const [authorized] = await waitForEvents(rig, ids.task_id, 'attempt.authorized');
    expect(authorized).toMatchObject({ attempt_id: ids.attempt_id, payload: { via: 'approval', approval_id: approvalId } });
    expect(await waitForCommand(rig, subjects().approvalIssueGrant, ids.attempt_id)).toMatchObject({ ...ids, approval_id: approvalId });
    const grant = grantIssuedDraft(ids, request, { approvalId });
    await append(rig, ids.task_id, grant);
    const [attached] = await waitForEvents(rig, ids.task_id, 'attempt.grant_attached');
    expect(attached).toMatchObject({ attempt_id: ids.attempt_id, payload: { grant_id: `gnt-${ids.attempt_id}` } });
    expect(await waitForCommand(rig, subjects().executorRun, ids.attempt_id)).toMatchObject({ ...ids, grant_id: `gnt-${ids.attempt_id}` });
    const log = await types(ids);
    expect(count(log, 'attempt.created')).toBe(1);
    expect(log).not.toContain('attempt.failed');
  });

  it('given approval.invalidated (witness drift) → the same attempt re-enters policy, is evaluated again, and waits for a new approval', async () => {
    const ids = taskIds(name('witness-drift'));
    const { request, approvalId: first, requested } = await awaitingApproval(ids);
    await append(rig, ids.task_id, approvalResolvedDraft(ids, first, requested, 'grant', { currentFingerprints: { build: 'sha256:bbbb' } }));

    const [reentered] = await waitForEvents(rig, ids.task_id, 'attempt.policy_reentered');
    expect(reentered).toMatchObject({ attempt_id: ids.attempt_id, payload: { cause: 'approval_invalidated' } });
    const evaluations = await waitFor(
      async () => {
        const found = (await storedCommands(rig, subjects().policyEvaluate)).filter((c) => c['attempt_id'] === ids.attempt_id);
        return found.length >= 2 ? found : undefined;
      },
      { what: 'a second EvaluatePolicy for the attempt', timeoutMs: 20_000, intervalMs: 25 },
    );
    expect(evaluations).toHaveLength(2);

    await append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'local_edit_allowed', { entry: 2 }));
    const second = approvalIdFor(ids.task_id, ids.attempt_id, 2);
    const asked = await waitFor(
      async () => (await storedCommands(rig, subjects().approvalRequest)).find((c) => c['attempt_id'] === ids.attempt_id && c['approval_id'] === second),
      { what: 'RequestApproval for the second entry', timeoutMs: 20_000, intervalMs: 25 },
    );
    expect(asked).toMatchObject({ ...ids, approval_id: second });
    await waitForIdle(rig);
    const log = await types(ids);
    expect(count(log, 'attempt.created')).toBe(1);
    expect(count(log, 'attempt.awaiting_approval')).toBe(2);
    expect(log).not.toContain('attempt.authorized');
    expect((await storedCommands(rig, subjects().approvalIssueGrant)).filter((c) => c['attempt_id'] === ids.attempt_id)).toEqual([]);
  });

  it('given approval.denied → the attempt fails approval_denied and IssueReceipt(approval_denied); its receipt fails step and task', async () => {
    const ids = taskIds(name('deny-approval'));
    const { approvalId, requested } = await awaitingApproval(ids);
    await append(rig, ids.task_id, approvalResolvedDraft(ids, approvalId, requested, 'deny'));
    await waitForEvents(rig, ids.task_id, 'attempt.approval_denied');
    const ofAttempt = (cause: string) => (c: Record<string, unknown>) => c['attempt_id'] === ids.attempt_id && c['cause'] === cause;
    expect(await waitForCommandWhere(rig, subjects().receiptIssue, ofAttempt('approval_denied'), 'the denial receipt')).toMatchObject({ ...ids, cause: 'approval_denied' });
    // the resolution itself is receipted apart
    expect(await waitForCommandWhere(rig, subjects().receiptIssue, ofAttempt('approval_resolved'), 'the resolution receipt')).toEqual({ ...ids, cause: 'approval_resolved', approval_id: approvalId });
    await append(rig, ids.task_id, receiptIssuedDraft(ids, 'refused', { cause: 'approval_denied' }));
    await waitForEvents(rig, ids.task_id, 'task.failed');
    expect(await types(ids)).toEqual(expect.arrayContaining(['step.attempt_closed', 'step.failed', 'task.failed']));
  });

  it('given policy denies → attempt.policy_denied and IssueReceipt(policy_denied); nothing is granted', async () => {
    const ids = taskIds(name('deny'));
    const request = commandRequest(ids, ['rm', '-rf', 'build'], 'destructive_denied');
    await newTask(ids, request);
    await append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'destructive_denied'));
    const [denied] = await waitForEvents(rig, ids.task_id, 'attempt.policy_denied');
    expect(denied?.payload).toMatchObject({ reasons: [{ code: 'destructive_command' }] });
    expect(await waitForCommand(rig, subjects().receiptIssue, ids.attempt_id)).toMatchObject({ cause: 'policy_denied' });
    await waitForIdle(rig);
    expect((await storedCommands(rig, subjects().approvalIssueGrant)).filter((c) => c['attempt_id'] === ids.attempt_id)).toEqual([]);
  });

  it('given policy downgrades a write → attempt.downgraded and IssueGrant for the rewritten read', async () => {
    const ids = taskIds(name('downgrade'));
    const request = writeRequest(ids);
    await append(rig, ids.task_id, ...ingressDrafts(ids, request));
    await waitForCommand(rig, subjects().policyEvaluate, ids.attempt_id);
    await append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'readonly_analysis'));
    const [downgraded] = await waitForEvents(rig, ids.task_id, 'attempt.downgraded');
    expect(downgraded?.payload).toMatchObject({ action_request: { action_class: 'read_local' }, restricted_mode: 'readonly' });
    expect(await waitForCommand(rig, subjects().approvalIssueGrant, ids.attempt_id)).toMatchObject({ action_request: { action_class: 'read_local' } });
  });

  it('given grant.issued → attempt.grant_attached and RunAction with the grant JWS; then claim, completion and receipt close the attempt, step and task', async () => {
    const ids = taskIds(name('run'));
    const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    const grant = await toGrantAttached(ids, request);
    const run = await waitForCommand(rig, subjects().executorRun, ids.attempt_id);
    expect(run).toMatchObject({ ...ids, grant_id: `gnt-${ids.attempt_id}`, grant_jws: (grant.payload as { jws: string }).jws, action_request: { action_request_id: request.action_request_id } });

    await append(rig, ids.task_id, useClaimedDraft(ids, grant, request));
    await waitForEvents(rig, ids.task_id, 'attempt.executing');
    await append(rig, ids.task_id, executionCompletedDraft(ids));
    const [pending] = await waitForEvents(rig, ids.task_id, 'attempt.receipt_pending');
    expect(pending?.payload).toMatchObject({ result_code: 'succeeded' });
    expect(await waitForCommand(rig, subjects().receiptIssue, ids.attempt_id)).toMatchObject({ ...ids, cause: 'settled' });

    await append(rig, ids.task_id, receiptIssuedDraft(ids, 'succeeded'));
    await waitForEvents(rig, ids.task_id, 'task.completed');
    const log = await types(ids);
    expect(log.slice(-3)).toEqual(['attempt.succeeded', 'step.succeeded', 'task.completed']);
    expect(log.indexOf('attempt.observing')).toBeLessThan(log.indexOf('attempt.receipt_pending'));
    // the step ended with the attempt, and the finished task's cell is closed
    expect((await events(rig, ids.task_id)).find((event) => event.event_type === 'step.succeeded')).toMatchObject({ entity_type: 'step', entity_id: ids.step_id });
    const closeCell = await waitFor(
      async () => (await storedCommands(rig, subjects().executorCloseCell)).find((command) => command['task_id'] === ids.task_id),
      { what: `executor.close-cell for ${ids.task_id}`, timeoutMs: 20_000, intervalMs: 25 },
    );
    expect(closeCell).toEqual({ task_id: ids.task_id, reason: 'task.completed' });
  });

  it('given an unknown outcome → the attempt stays observing, IssueReceipt is issued, the receipt is recorded, and the action is never run again', async () => {
    const ids = taskIds(name('unknown'));
    const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    const grant = await toGrantAttached(ids, request);
    await append(rig, ids.task_id, useClaimedDraft(ids, grant, request), executionCompletedDraft(ids, { outcome: 'unknown' }));
    await waitForEvents(rig, ids.task_id, 'attempt.observing');
    expect(await waitForCommand(rig, subjects().receiptIssue, ids.attempt_id)).toMatchObject({ cause: 'settled' });
    await append(rig, ids.task_id, receiptIssuedDraft(ids, 'unknown_outcome'));
    await waitForEvents(rig, ids.task_id, 'attempt.unknown_outcome_receipted');
    await waitForIdle(rig);
    const log = await types(ids);
    expect(log).not.toContain('attempt.receipt_pending');
    expect(log).not.toContain('task.completed');
    const runs = rig.published.filter((p) => p.subject === subjects().executorRun && p.payload['attempt_id'] === ids.attempt_id);
    expect(runs).toHaveLength(1);
  });
});

describe('orchestrator service: a use proven never started is not a result of the action (issue 13)', () => {
  it('given a claimed use recorded not_run and released, then the attempt stays executing and RunAction run 2 of the same grant is issued once; its completion settles the attempt succeeded', async () => {
    // given: executing on its grant
    const ids = taskIds(name('not-run'));
    const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    const grant = await toGrantAttached(ids, request);
    await append(rig, ids.task_id, useClaimedDraft(ids, grant, request));
    await waitForEvents(rig, ids.task_id, 'attempt.executing');

    // when: the executor proves the use never started
    await append(rig, ids.task_id, ...notRunDrafts(ids, 1));

    // then: run 2, a new use of the same grant; no observation, no failure
    const again = await waitForCommandWhere(rig, subjects().executorRun, (command) => command['attempt_id'] === ids.attempt_id && command['run_no'] === 2, 'RunAction run 2');
    expect(again).toMatchObject({ ...ids, grant_id: `gnt-${ids.attempt_id}`, run_no: 2, action_request: { action_request_id: request.action_request_id } });
    await waitForIdle(rig);
    expect(await types(ids)).not.toContain('attempt.observing');
    expect(await types(ids)).not.toContain('attempt.failed');

    // and: run 2 claimed and completed → settled on it
    await append(rig, ids.task_id, laterUseClaimedDraft(ids, 2, request), executionCompletedDraft(ids, { useNo: 2 }));
    const [pending] = await waitForEvents(rig, ids.task_id, 'attempt.receipt_pending');
    expect(pending?.payload).toMatchObject({ result_code: 'succeeded' });
    const runs = (await commandsFor(subjects().executorRun, ids)).map((command) => command['run_no'] ?? 1);
    expect(runs).toEqual([1, 2]);
  });
});

describe('orchestrator service: idempotence and competition', () => {
  it('dead-letters an event that is not an envelope (CONTRACT_INVALID), so error codes reach the ack table', async () => {
    const dlq = rig.config.env.WRIT_DLQ_STREAM;
    const subject = `${subjects().events}.task.${name('garbage')}`;
    const h = natsHeaders();
    h.set('Nats-Msg-Id', subject);
    await rig.nc.request(subject, new TextEncoder().encode('{"not":"an envelope"}'), { headers: h, timeout: 5_000 });
    const letter = await waitFor(async () => (await rig.jsm.streams.getMessage(dlq, { last_by_subj: subjects().deadLetter }).catch(() => null)) ?? undefined, {
      what: 'the dead letter',
    });
    expect(letter.header.get('Writ-Dlq-Error-Code')).toBe('CONTRACT_INVALID');
    expect(letter.header.get('Writ-Dlq-Reason')).toBe('terminal');
  });

  it('two instances on the same durable yield one outcome per event and one command per step', async () => {
    const second = await startApp(rig);
    try {
      const tasks = Array.from({ length: 4 }, (_, i) => {
        const ids = taskIds(name(`compete${i}`));
        return { ids, request: commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']) };
      });
      // given both instances handle these tasks' events as they come
      await Promise.all(tasks.map(({ ids, request }) => append(rig, ids.task_id, ...ingressDrafts(ids, request))));
      await Promise.all(tasks.map(({ ids }) => waitForCommand(rig, subjects().policyEvaluate, ids.attempt_id)));
      await Promise.all(tasks.map(({ ids, request }) => append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'local_edit_allowed'))));
      await Promise.all(tasks.map(({ ids }) => waitForCommand(rig, subjects().approvalIssueGrant, ids.attempt_id)));
      await Promise.all(
        tasks.map(async ({ ids, request }) => {
          const grant = grantIssuedDraft(ids, request);
          await append(rig, ids.task_id, grant);
          await waitForCommand(rig, subjects().executorRun, ids.attempt_id);
          await append(rig, ids.task_id, useClaimedDraft(ids, grant, request), executionCompletedDraft(ids));
        }),
      );
      await Promise.all(tasks.map(({ ids }) => waitForCommand(rig, subjects().receiptIssue, ids.attempt_id)));
      await Promise.all(tasks.map(({ ids }) => append(rig, ids.task_id, receiptIssuedDraft(ids, 'succeeded'))));
      await Promise.all(tasks.map(({ ids }) => waitForEvents(rig, ids.task_id, 'task.completed')));
      await waitForIdle(rig);
      // then each step happened once per task, and each command was stored once
      for (const { ids } of tasks) {
        const log = await types(ids);
        for (const type of ['attempt.authorized', 'attempt.grant_attached', 'attempt.executing', 'attempt.observing', 'attempt.receipt_pending', 'attempt.succeeded', 'step.succeeded', 'task.completed']) {
          expect(count(log, type), `${ids.task_id} ${type}`).toBe(1);
        }
        for (const subject of [subjects().policyEvaluate, subjects().approvalIssueGrant, subjects().executorRun, subjects().receiptIssue]) {
          expect((await storedCommands(rig, subject)).filter((c) => c['attempt_id'] === ids.attempt_id), `${ids.task_id} ${subject}`).toHaveLength(1);
        }
      }
    } finally {
      await stopApp(rig, second);
    }
  });
});
