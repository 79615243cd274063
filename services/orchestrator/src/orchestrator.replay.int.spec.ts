import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { append, createRig, disposeRig, events, startApp, stopApp, waitForCommand, waitForEvents, waitForIdle, type Rig } from '../test/rig.js';
import { commandRequest, executionCompletedDraft, grantIssuedDraft, ingressDrafts, policyEvaluatedDraft, receiptIssuedDraft, taskIds, useClaimedDraft } from '../test/task-fixtures.js';
import type { OrchestratorApp } from './bootstrap.js';

/**
 * Redelivery of a whole log: a settled task, then the orchestrator restarted
 * on a fresh durable (every event delivered again). On its own streams, so
 * only this task is replayed.
 */

let rig: Rig;
let orchestrator: OrchestratorApp;

beforeAll(async () => {
  rig = await createRig('replay');
  orchestrator = await startApp(rig);
});

afterAll(async () => {
  await disposeRig(rig);
});

/** A task driven through policy and its grant until the orchestrator sent the run command. */
async function taskAwaitingItsRun(name: string) {
  const subjects = rig.config.subjects;
  const ids = taskIds(`${name}-${Date.now()}`);
  const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
  await append(rig, ids.task_id, ...ingressDrafts(ids, request));
  await waitForCommand(rig, subjects.policyEvaluate, ids.attempt_id);
  await append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'local_edit_allowed'));
  await waitForCommand(rig, subjects.approvalIssueGrant, ids.attempt_id);
  const grant = grantIssuedDraft(ids, request);
  await append(rig, ids.task_id, grant);
  await waitForCommand(rig, subjects.executorRun, ids.attempt_id);
  return { ids, request, grant };
}

describe('orchestrator service: replay', () => {
  it('given a settled task, when a fresh durable redelivers every event, then nothing is appended and no command is published for it', async () => {
    const subjects = rig.config.subjects;
    const { ids, request, grant } = await taskAwaitingItsRun('replay');
    await append(rig, ids.task_id, useClaimedDraft(ids, grant, request), executionCompletedDraft(ids));
    await waitForCommand(rig, subjects.receiptIssue, ids.attempt_id);
    await append(rig, ids.task_id, receiptIssuedDraft(ids, 'succeeded'));
    await waitForEvents(rig, ids.task_id, 'task.completed');
    await waitForIdle(rig);
    const before = await events(rig, ids.task_id);
    const publishedBefore = rig.published.length;

    // when the orchestrator restarts on a new durable, every event of the log is delivered again
    await stopApp(rig, orchestrator);
    await rig.jsm.consumers.delete(rig.config.env.WRIT_EVENTS_STREAM, 'orchestrator');
    orchestrator = await startApp(rig);
    await waitForIdle(rig);

    // then the settled task gained no event, and no command of the governed path was sent again; only the
    // (idempotent, same msg id) close of its cell is repeated, so a cell that outlived a crash still goes
    expect((await events(rig, ids.task_id)).map((e) => e.event_id)).toEqual(before.map((e) => e.event_id));
    const again = rig.published.slice(publishedBefore);
    expect(again.filter((command) => command.subject !== subjects.executorCloseCell)).toEqual([]);
    expect(again.filter((command) => command.payload['task_id'] === ids.task_id)).toEqual([
      { subject: subjects.executorCloseCell, payload: { task_id: ids.task_id, reason: 'task.completed' } },
    ]);
  });

  it('(completion → receipt window) given the orchestrator was down (killed) when the executor recorded the completion, so no receipt was asked for, when it starts again, then it asks for the receipt once and the task settles', async () => {
    // given a task whose grant was attached and the run command sent
    const subjects = rig.config.subjects;
    const { ids, request, grant } = await taskAwaitingItsRun('window');
    await waitForIdle(rig);
    // when the orchestrator is gone while the executor records the use and its completion
    await stopApp(rig, orchestrator);
    await append(rig, ids.task_id, useClaimedDraft(ids, grant, request), executionCompletedDraft(ids));
    const publishedBefore = rig.published.length;
    orchestrator = await startApp(rig);
    // then, started again, it asks for the receipt of the attempt (once) and the receipt settles the task
    await waitForCommand(rig, subjects.receiptIssue, ids.attempt_id);
    await append(rig, ids.task_id, receiptIssuedDraft(ids, 'succeeded'));
    await waitForEvents(rig, ids.task_id, 'task.completed');
    await waitForIdle(rig);
    const asked = rig.published.slice(publishedBefore).filter((command) => command.subject === subjects.receiptIssue && command.payload['attempt_id'] === ids.attempt_id);
    expect(asked).toHaveLength(1);
    const log = (await events(rig, ids.task_id)).map((event) => event.event_type);
    expect(log.filter((type) => type === 'attempt.receipt_pending')).toHaveLength(1);
    expect(log.at(-1)).toBe('task.completed');
  });
});
