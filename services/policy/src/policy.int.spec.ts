import type { EvaluatePolicy } from '@writ/contracts';
import { waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinVersion } from '../test/profiles.js';
import { append, createRig, disposeRig, events, startApp, waitForEvents, waitForIdle, type Rig } from '../test/rig.js';
import { commandRequest, evaluateCommandFor, ingressDrafts, taskIds, writeRequest, type TaskIds } from '../test/task-fixtures.js';
import type { PolicyApp } from './bootstrap.js';

/**
 * The policy service as a real process-in-a-test: its own subject root and
 * streams on the real NATS; the test plays ingress (appends the task's
 * creation) and the orchestrator (publishes EvaluatePolicy), then waits for
 * `policy.evaluated` in the log.
 */

let rig: Rig;
let policy: PolicyApp;
const unique = (name: string) => `${name}-${Math.random().toString(16).slice(2, 8)}`;

beforeAll(async () => {
  rig = await createRig('int');
  policy = await startApp(rig);
});

afterAll(async () => {
  await disposeRig(rig);
});

async function ask(ids: TaskIds, command: EvaluatePolicy, msgId = `${ids.attempt_id}:cmd:policy.evaluate:1`): Promise<void> {
  await rig.bus.publish(rig.config.subjects.policyEvaluate, command, { msgId });
}

async function evaluate(ids: TaskIds, request: ReturnType<typeof commandRequest>, profile?: string) {
  await append(rig, ids.task_id, ...ingressDrafts(ids, request));
  await ask(ids, evaluateCommandFor(ids, request, profile));
  const [evaluated] = await waitForEvents(rig, ids.task_id, 'policy.evaluated');
  return evaluated!;
}

describe('policy service', () => {
  it('answers /healthz and /readyz', async () => {
    expect((await fetch(`${policy.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${policy.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, checks: { consumers_bound: ['policy'] } });
  });

  it("allows `sh -c 'echo hello > out.txt'` under local_edit_allowed with files_owned ['**']", async () => {
    const ids = taskIds(unique('allow'));
    const evaluated = await evaluate(ids, commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']));
    expect(evaluated).toMatchObject({
      entity_type: 'decision',
      step_id: ids.step_id,
      attempt_id: ids.attempt_id,
      actor_type: 'service',
      actor_id: 'writ-policy',
      correlation_id: ids.task_id,
      idempotency_key: `${ids.attempt_id}:policy.evaluated:1`,
      payload: {
        policy_result: { ...ids, outcome: 'allow', policy_profile_ref: `local_edit_allowed@${builtinVersion('local_edit_allowed')}`, evaluated_by: 'writ-policy' },
        decision: { decision_type: 'safety', decided_by: 'writ-policy', evidence_refs: [] },
      },
    });
    // caused by the attempt's entry into awaiting_policy
    const entry = (await events(rig, ids.task_id)).find((e) => e.event_type === 'attempt.awaiting_policy');
    expect(evaluated.causation_id).toBe(entry?.event_id);
  });

  it('requires approval for `rm -rf build` under local_edit_allowed', async () => {
    const ids = taskIds(unique('approve'));
    const evaluated = await evaluate(ids, commandRequest(ids, ['rm', '-rf', 'build']));
    expect(evaluated.payload).toMatchObject({ policy_result: { outcome: 'require_approval', matched_rules: ['destructive_command'], approver_roles: ['director'] } });
  });

  it('denies `rm -rf build` under destructive_denied', async () => {
    const ids = taskIds(unique('deny'));
    const evaluated = await evaluate(ids, commandRequest(ids, ['rm', '-rf', 'build'], 'destructive_denied'));
    expect(evaluated.payload).toMatchObject({ policy_result: { outcome: 'deny', matched_rules: ['destructive_command'] } });
  });

  it('downgrades a write under readonly_analysis to a read, carrying the rewritten request it references', async () => {
    const ids = taskIds(unique('downgrade'));
    const request = writeRequest(ids);
    const evaluated = await evaluate(ids, request);
    expect(evaluated.payload).toMatchObject({
      policy_result: {
        outcome: 'downgrade',
        downgrade: { rewritten_action_request_ref: `action_request:${request.action_request_id}-dg`, restricted_mode: 'readonly' },
      },
      rewritten_action_request: { action_request_id: `${request.action_request_id}-dg`, action_class: 'read_local' },
    });
  });

  it('records an unknown profile as a deny with reason POLICY_PROFILE_UNKNOWN (not a crash)', async () => {
    const ids = taskIds(unique('unknown'));
    const evaluated = await evaluate(ids, commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']), 'no_such_profile');
    expect(evaluated.payload).toMatchObject({ policy_result: { outcome: 'deny', matched_rules: ['policy_profile_unknown'], policy_version: 'unknown' } });
    expect((evaluated.payload as { policy_result: { reasoning_summary: string } }).policy_result.reasoning_summary).toContain('POLICY_PROFILE_UNKNOWN');
  });

  it('given the same command redelivered (same msg id, and again under a new one), then the log holds one policy.evaluated', async () => {
    const ids = taskIds(unique('redeliver'));
    const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    await evaluate(ids, request);
    await ask(ids, evaluateCommandFor(ids, request));
    await ask(ids, evaluateCommandFor(ids, request), `${ids.attempt_id}:redelivered`);
    await waitForIdle(rig);
    expect((await events(rig, ids.task_id)).filter((e) => e.event_type === 'policy.evaluated')).toHaveLength(1);
  });

  it('dead-letters a command for an attempt the log does not hold (POLICY_ATTEMPT_UNKNOWN) and appends nothing', async () => {
    const ids = taskIds(unique('ghost'));
    await ask(ids, evaluateCommandFor(ids, commandRequest(ids, ['true'])));
    const letter = await waitFor(
      async () => (await rig.jsm.streams.getMessage(rig.config.env.WRIT_DLQ_STREAM, { last_by_subj: rig.config.subjects.deadLetter }).catch(() => null)) ?? undefined,
      { what: 'the dead letter' },
    );
    expect(letter.header.get('Writ-Dlq-Error-Code')).toBe('POLICY_ATTEMPT_UNKNOWN');
    expect(await events(rig, ids.task_id)).toEqual([]);
  });
});
