import { readFile } from 'node:fs/promises';
import type { EventEnvelope } from '@writ/contracts';
import { KeySet, verifyJws } from '@writ/crypto';
import { waitFor } from '@writ/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * The last crash window of issue 13, end to end on the seven built services (support/stack.mjs):
 * a use claimed by an executor that is then SIGKILLed before the use's process started is proven
 * not run by the executor started again, and by then the grant has expired. The action is not
 * dropped: its grant is renewed on the same authority while the attempt executes, and it runs
 * once under the renewal. Waits are on events and rows, never sleeps (the one wait on a clock is
 * for the grant's own expiry).
 */

/** Grants live 20 s here, so one expires while the executor is down. */
const GRANT_TTL_SECONDS = 20;
const decoder = new TextDecoder();

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ prefix: 'e2e_renew', serviceEnv: { approval: { WRIT_GRANT_TTL_SECONDS: String(GRANT_TTL_SECONDS) } } });
}, 180_000);

stopStackAfterAll(() => stack);

const ofType = (type: string) => (event: EventEnvelope) => event.event_type === type;
const ofAttempt = (attemptId: string) => (event: EventEnvelope) => event.attempt_id === attemptId;
const claimsOf = (event: EventEnvelope) => event.payload['claims'] as { jti: string; exp: number; issued_by_principal_id: string; policy_result_ref?: string };

/** The receipt's compact JWS, verified against `GET /v1/keys`: the signed body. */
async function verifiedReceipt(receiptId: string): Promise<Record<string, unknown>> {
  const keySet = await KeySet.fromJwks((await stack.http('/v1/keys')).body);
  const receipt = await stack.http(`/v1/receipts/${receiptId}`);
  expect(receipt.status).toBe(200);
  const verified = await verifyJws(String(receipt.body.jws), keySet);
  return JSON.parse(decoder.decode(verified.payload)) as Record<string, unknown>;
}

describe('a use proven never started, then its grant expired (issue 13)', () => {
  it(
    'given the executor SIGKILLed after claiming a use and before its process started, and the grant expired while it was down, then the use is released not_run, the grant renewed while the attempt executes, the action runs once and succeeds, its receipt cites the renewal, and writ verify passes',
    async () => {
      // given: a first action of the task holds the task's cell for a few seconds (the executor runs one action per cell at a time)
      const agent = await stack.registerPrincipal();
      const holder = stack.actionRequest(agent, { target_resources: ['first.txt'], params: { argv: ['sh', '-c', 'sleep 6; echo first >> first.txt'] } });
      await stack.submit(agent, holder);
      const holding = await stack.waitForAction(holder.action_request_id, { statuses: ['executing'] });
      const taskId = String(holding.task_id);
      await stack.waitForTaskEvent(taskId, (event) => event.event_type === 'execution.started' && event.attempt_id === holding.attempt_id, { what: 'the first action started' });
      // and a second action of the task, whose use the executor claims and then waits to run behind the first
      const request = stack.actionRequest(agent, { task_id: taskId, target_resources: ['count.txt'], params: { argv: ['sh', '-c', 'echo ran >> count.txt'] } });
      await stack.submit(agent, request);
      const claimed = await stack.waitForTaskEvent(
        taskId,
        (event) => event.event_type === 'grant.use_claimed' && event.attempt_id !== undefined && event.attempt_id !== holding.attempt_id,
        { what: 'the second action\'s use claimed', timeoutMs: 30_000 },
      );
      const attemptId = String(claimed.attempt_id);
      const first = claimsOf(await stack.waitForTaskEvent(taskId, (event) => event.event_type === 'grant.issued' && event.entity_id === claimed.entity_id));

      // when: the executor dies before that use's process started (SIGKILL: nothing drains), and stays down past the grant's expiry
      await stack.killService('executor');
      let restarted = false;
      try {
        expect((await stack.taskEvents(taskId)).filter(ofAttempt(attemptId)).some(ofType('execution.started'))).toBe(false);
        await waitFor(() => (Date.now() >= first.exp * 1000 ? true : undefined), { what: 'the grant to expire', timeoutMs: (GRANT_TTL_SECONDS + 5) * 1000, intervalMs: 200 });
        await stack.startService('executor');
        restarted = true;

        // then: the action succeeds, once, under a renewal of its grant
        const action = await stack.waitForAction(request.action_request_id, { timeoutMs: 150_000, until: (row: { receipt_id: string | null }) => row.receipt_id !== null });
        expect(action).toMatchObject({ status: 'succeeded', attempt_id: attemptId });
        const log = (await stack.taskEvents(taskId)).filter(ofAttempt(attemptId));
        const grants = log.filter(ofType('grant.issued')).map(claimsOf);
        expect(grants.map((grant) => grant.jti)).toHaveLength(2);
        const [original, renewal] = grants;
        expect(original?.jti).toBe(first.jti);
        // the same authority: the same policy result and issuer
        expect(renewal?.issued_by_principal_id).toBe(original?.issued_by_principal_id);
        expect(renewal?.policy_result_ref).toBe(original?.policy_result_ref);
        // the claimed use was proven never started: released, not_run; the next run was refused as expired
        const completions = log.filter(ofType('execution.completed')).map((event) => event.payload as { grant_id: string; outcome: string; exit_code: number | null });
        expect(completions.map((c) => [c.grant_id, c.outcome])).toEqual([
          [original?.jti, 'not_run'],
          [renewal?.jti, 'completed'],
        ]);
        expect(completions[1]?.exit_code).toBe(0);
        expect(log.filter(ofType('grant.use_released')).map((event) => event.entity_id)).toEqual([original?.jti]);
        expect(log.filter(ofType('grant.refused')).map((event) => [event.entity_id, event.payload['code']])).toEqual([[original?.jti, 'GRANT_EXPIRED']]);
        // renewed while executing: one attempt.executing, then attempt.grant_renewed naming the use that never started
        expect(log.filter(ofType('attempt.executing'))).toHaveLength(1);
        expect(log.filter(ofType('attempt.grant_renewed')).map((event) => event.payload)).toMatchObject([{ grant_id: renewal?.jti, renews_grant_id: original?.jti, not_run_uses: [1] }]);
        expect(log.filter(ofType('grant.use_claimed')).map((event) => event.entity_id)).toEqual([original?.jti, renewal?.jti]);
        expect(log.filter(ofType('attempt.failed'))).toEqual([]);
        // the side effect happened exactly once
        expect(await readFile(stack.workspaceFile(taskId, 'count.txt'), 'utf8')).toBe('ran\n');
        // the receipt: succeeded, citing the renewal, saying what happened to the first grant
        const receipt = await verifiedReceipt(String(action.receipt_id));
        expect(receipt).toMatchObject({ result_code: 'succeeded', capability_grant_ref: `grant:${renewal?.jti}` });
        expect(String(receipt['result_summary'])).toContain(`grant ${renewal?.jti} renewed grant ${original?.jti} on the same authority: use 1 of ${original?.jti} never started (proven not run and released)`);

        // and the first action, killed mid-run, is settled from its record, once; the task closes and its whole chain verifies
        expect(await stack.waitForAction(holder.action_request_id, { timeoutMs: 60_000, until: (row: { receipt_id: string | null }) => row.receipt_id !== null })).toMatchObject({ status: 'succeeded' });
        expect(await readFile(stack.workspaceFile(taskId, 'first.txt'), 'utf8')).toBe('first\n');
        await waitFor(
          async () => {
            const task = await stack.http(`/v1/tasks/${taskId}`);
            return task.status === 200 && task.body.status === 'completed' ? true : undefined;
          },
          { what: 'the task to complete', timeoutMs: 60_000, intervalMs: 200 },
        );
        await stack.cli(['verify', '--task', taskId, '--wait', '60']);
      } finally {
        if (!restarted) await stack.startService('executor');
      }
    },
    300_000,
  );
});
