import { IngressAccepted, IngressRejected, type ActionRequest } from '@writ/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRequest, idsOf, ingressOutcome, publishRaw, registerPrincipal, sign, startTestIngress, type TestAgent, type TestIngress } from '../test/fixtures.js';

/**
 * Newly bound input (Hermit 11.5, 16.7): a request may name an earlier
 * request of the same task it replaces (`supersedes`). Ingress accepts it only
 * for an earlier request of that task, by the same principal, whose attempt
 * has not started executing; every other case is refused with
 * INGRESS_SUPERSEDES_INVALID (or the task checks' own code) and touches no task.
 */

let t: TestIngress;
let agent: TestAgent;

beforeAll(async () => {
  t = await startTestIngress();
  agent = await registerPrincipal(t.store);
});

afterAll(async () => {
  await t?.stop();
});

const subjectOf = (principalId: string) => t.config.subjects.ingressAction(principalId);

/** Submits `request` as `who` and waits for its outcome; returns the ingress events. */
async function submit(who: TestAgent, request: ActionRequest) {
  const jws = await sign(request, who.key);
  await publishRaw(t.nc, subjectOf(who.id), jws, request.action_request_id);
  return ingressOutcome(t.store, idsOf(who.id, request.action_request_id, jws).ingressId);
}

/** An accepted first request of the agent: its task and attempt. */
async function firstRequest(): Promise<{ request: ActionRequest; taskId: string; attemptId: string }> {
  const request = actionRequest(agent.id);
  const accepted = IngressAccepted.parse((await submit(agent, request))[1]!.payload);
  return { request, taskId: accepted.task_id, attemptId: accepted.attempt_id };
}

/** A later request in `taskId` (no task spec) that supersedes `supersedes`. */
function revision(taskId: string | undefined, supersedes: string, who = agent): ActionRequest {
  const { task: _task, ...rest } = actionRequest(who.id, { params: { argv: ['sh', '-c', 'echo bonjour > hello.txt'] } });
  return { ...rest, ...(taskId === undefined ? {} : { task_id: taskId }), supersedes } as ActionRequest;
}

async function expectRefused(events: Awaited<ReturnType<typeof submit>>, code: string, taskId?: string, headBefore?: number): Promise<void> {
  expect(events.map((e) => e.event_type)).toEqual(['ingress.received', 'ingress.rejected']);
  expect(IngressRejected.parse(events[1]!.payload).reason_code).toBe(code);
  if (taskId !== undefined) expect((await t.store.head(taskId)).taskSeq).toBe(headBefore);
}

describe('ingress: a request that supersedes an earlier one', () => {
  it('given an earlier request of the same task and principal still awaiting policy, then the revision is accepted into the task with its supersedes', async () => {
    const first = await firstRequest();
    const revised = revision(first.taskId, first.request.action_request_id);
    const accepted = IngressAccepted.parse((await submit(agent, revised))[1]!.payload);
    expect(accepted).toMatchObject({ task_id: first.taskId, created_task: false });
    const awaiting = (await t.store.read(first.taskId)).map((e) => e.event).filter((e) => e.event_type === 'attempt.awaiting_policy');
    expect(awaiting.at(-1)).toMatchObject({ attempt_id: accepted.attempt_id, payload: { action_request: { supersedes: first.request.action_request_id } } });
  });

  it('given supersedes without task_id, then INGRESS_SUPERSEDES_INVALID and no task is created', async () => {
    const first = await firstRequest();
    const orphan = { ...actionRequest(agent.id), supersedes: first.request.action_request_id };
    const events = await submit(agent, orphan);
    await expectRefused(events, 'INGRESS_SUPERSEDES_INVALID');
    expect((await t.store.head(idsOf(agent.id, orphan.action_request_id, '').newTaskId)).taskSeq).toBe(0);
  });

  it('given supersedes naming no request of the task, then INGRESS_SUPERSEDES_INVALID and the task is unchanged', async () => {
    const first = await firstRequest();
    const head = (await t.store.head(first.taskId)).taskSeq;
    await expectRefused(await submit(agent, revision(first.taskId, 'ar-never-submitted')), 'INGRESS_SUPERSEDES_INVALID', first.taskId, head);
  });

  it('given a request of another task, then INGRESS_SUPERSEDES_INVALID (supersession stays inside one task)', async () => {
    const first = await firstRequest();
    const other = await firstRequest();
    const head = (await t.store.head(first.taskId)).taskSeq;
    await expectRefused(await submit(agent, revision(first.taskId, other.request.action_request_id)), 'INGRESS_SUPERSEDES_INVALID', first.taskId, head);
  });

  it('given another principal naming the agent’s request, then it is refused and the task is unchanged', async () => {
    const first = await firstRequest();
    const intruder = await registerPrincipal(t.store);
    const head = (await t.store.head(first.taskId)).taskSeq;
    // the task check answers first: the intruder learns nothing about the task's requests
    await expectRefused(await submit(intruder, revision(first.taskId, first.request.action_request_id, intruder)), 'INGRESS_PRINCIPAL_MISMATCH', first.taskId, head);
  });

  it('given the earlier request already claimed its grant (executing), then INGRESS_SUPERSEDES_INVALID and the task is unchanged', async () => {
    const first = await firstRequest();
    const head = (await t.store.head(first.taskId)).taskSeq;
    const at = new Date().toISOString();
    // the executor claimed the use of the attempt's grant: it may be running
    await t.store.append(
      first.taskId,
      [
        {
          event_id: `${first.attemptId}-claimed`,
          schema_version: 1,
          event_type: 'grant.use_claimed',
          entity_type: 'grant',
          entity_id: `gnt-${first.attemptId}`,
          attempt_id: first.attemptId,
          occurred_at: at,
          actor_type: 'executor',
          actor_id: 'writ-executor',
          payload: { use_id: 'use-1', use_no: 1, task_id: first.taskId, attempt_id: first.attemptId, action_class: 'execute_command', at },
          causation_id: null,
          correlation_id: first.taskId,
        },
      ],
      head,
    );
    await expectRefused(await submit(agent, revision(first.taskId, first.request.action_request_id)), 'INGRESS_SUPERSEDES_INVALID', first.taskId, head + 1);
  });

  it('given the earlier request was already superseded, then a second revision of it is refused', async () => {
    const first = await firstRequest();
    await submit(agent, revision(first.taskId, first.request.action_request_id));
    const head = (await t.store.head(first.taskId)).taskSeq;
    const at = new Date().toISOString();
    await t.store.append(
      first.taskId,
      [
        {
          event_id: `${first.attemptId}-superseded`,
          schema_version: 1,
          event_type: 'attempt.superseded',
          entity_type: 'attempt',
          entity_id: first.attemptId,
          attempt_id: first.attemptId,
          occurred_at: at,
          actor_type: 'service',
          actor_id: 'writ-orchestrator',
          payload: { cause: 'input_drift', at },
          causation_id: null,
          correlation_id: first.taskId,
        },
      ],
      head,
    );
    await expectRefused(await submit(agent, revision(first.taskId, first.request.action_request_id)), 'INGRESS_SUPERSEDES_INVALID', first.taskId, head + 1);
  });
});
