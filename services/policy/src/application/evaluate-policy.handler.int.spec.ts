import { hasErrorCode } from '@writ/contracts';
import { EventStoreTaskLog } from '@writ/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinCatalog } from '../../test/profiles.js';
import { append, createRig, disposeRig, events, type Rig } from '../../test/rig.js';
import { commandRequest, evaluateCommandFor, ingressDrafts, taskIds } from '../../test/task-fixtures.js';
import { EvaluatePolicyHandler } from './evaluate-policy.handler.js';

/** The handler against the real log, without a consumer: what a redelivery or a competing instance does. */

let rig: Rig;

beforeAll(async () => {
  rig = await createRig('handler');
});

afterAll(async () => {
  await disposeRig(rig);
});

const profiles = builtinCatalog();
const handler = () => new EvaluatePolicyHandler({ log: new EventStoreTaskLog(rig.store), clock: () => new Date(), profiles, principalId: 'writ-policy' });

describe('EvaluatePolicyHandler against the real log', () => {
  it('given a command handled once, when it is handled again (by this or another instance), then it is a duplicate and the log holds one evaluation', async () => {
    const ids = taskIds(`twice-${Date.now()}`);
    const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    await append(rig, ids.task_id, ...ingressDrafts(ids, request));
    const command = evaluateCommandFor(ids, request);

    const first = await handler().handle(command);
    const second = await handler().handle(command);

    expect(first).toMatchObject({ status: 'evaluated', outcome: 'allow' });
    expect(second).toEqual({ status: 'duplicate', event_id: first.status === 'evaluated' ? first.event_id : '' });
    expect((await events(rig, ids.task_id)).filter((e) => e.event_type === 'policy.evaluated')).toHaveLength(1);
  });

  it('given two instances evaluating the same command at once, then one appends and the other is absorbed (dedupe or conflict), never two evaluations', async () => {
    const ids = taskIds(`race-${Date.now()}`);
    const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    await append(rig, ids.task_id, ...ingressDrafts(ids, request));
    const command = evaluateCommandFor(ids, request);

    const results = await Promise.allSettled([handler().handle(command), handler().handle(command)]);

    for (const result of results) {
      if (result.status === 'rejected') expect(hasErrorCode(result.reason, 'EVENTSTORE_CONFLICT')).toBe(true);
    }
    expect((await events(rig, ids.task_id)).filter((e) => e.event_type === 'policy.evaluated')).toHaveLength(1);
  });

  it('given a command whose request is not the one the attempt awaits, then it fails with POLICY_REQUEST_MISMATCH and appends nothing', async () => {
    const ids = taskIds(`mismatch-${Date.now()}`);
    const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    await append(rig, ids.task_id, ...ingressDrafts(ids, request));
    const forged = { ...evaluateCommandFor(ids, request), action_request: { ...request, action_request_id: 'ar-other' } };
    let error: unknown;
    try {
      await handler().handle(forged);
    } catch (caught) {
      error = caught;
    }
    expect(hasErrorCode(error, 'POLICY_REQUEST_MISMATCH')).toBe(true);
    expect((await events(rig, ids.task_id)).some((e) => e.event_type === 'policy.evaluated')).toBe(false);
  });
});
