import { uniqueName, waitFor } from '@writ/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { SERVICES, startStack, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * Invariant 10 end to end, with the seven built services as processes on the real NATS,
 * Postgres and Docker: messages that are not events, published where only events or signed
 * requests belong — a principal's subject, a subject of no aggregate, an agent's ingress
 * subject, the middle of a task waiting for approval — stall no consumer and break no chain.
 * The task is approved, runs and completes; `writ verify --task` passes and names each junk
 * message as quarantined; the projection catches up and counts them; every service is ready.
 */

const STEP_MS = 150_000;
/** Bytes that are not UTF-8, let alone JSON. */
const NOT_JSON = new Uint8Array([0xff, 0xfe, 0x00, 0x7b, 0x22]);

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ prefix: 'e2eq' });
}, 180_000);

stopStackAfterAll(() => stack);

describe('junk on the log and the bus (invariant 10)', () => {
  it(
    'stalls nothing and breaks no chain: the task waiting in it is approved, runs and completes; writ verify passes and names the junk; the views catch up; every service is ready',
    async () => {
      const agent = await stack.registerPrincipal();
      const director = await stack.registerPrincipal({ id: uniqueName('director').replaceAll('_', '-'), type: 'user', roles: ['director'] });

      // given junk on the agent's principal subject, on a subject of the log that names no aggregate, and on the agent's ingress subject
      await stack.js.publish(stack.subject(`evt.principal.${agent.id}`), NOT_JSON);
      await stack.js.publish(stack.subject(`evt.principal.${agent.id}`), JSON.stringify({ principal: 'not an event' }));
      await stack.js.publish(stack.subject('evt.junk.x'), NOT_JSON);
      await stack.submit(agent, undefined, { key: uniqueName('junk'), body: '\u00ff not a signed request' });

      // and a destructive request of the agent waiting for approval, with junk landing in the middle of its task
      const request = stack.actionRequest(agent, {
        step: { kind: 'edit', title: 'remove a directory' },
        target_resources: ['scratch'],
        params: { argv: ['rm', '-rf', 'scratch'] },
        expected_effects: ['the directory is gone'],
        reversibility_hint: 'irreversible',
        reason: 'clean up',
      });
      await stack.submit(agent, request);
      const waiting = await stack.waitForAction(request.action_request_id, { statuses: ['awaiting_approval'] });
      const taskId = String(waiting.task_id);
      await waitFor(
        async () => ((await stack.http('/v1/approvals?status=pending')).body.approvals as Array<Record<string, unknown>>).find((approval) => approval['approval_id'] === waiting.approval_id),
        { what: `approval ${waiting.approval_id} in the inbox`, timeoutMs: 30_000, intervalMs: 100 },
      );
      const inTask = [
        (await stack.js.publish(stack.subject(`evt.task.${taskId}`), NOT_JSON)).seq,
        (await stack.js.publish(stack.subject(`evt.task.${taskId}`), JSON.stringify({ hello: 'world' }))).seq,
      ];

      // when a director grants it
      expect(await stack.resolveApproval(director, taskId, String(waiting.approval_id), 'grant', { note: 'e2e grant after junk' })).toMatchObject({ status: 200, body: { status: 'granted' } });

      // then the same attempt runs and the task completes, receipted
      const done = await stack.waitForAction(request.action_request_id, { until: (row) => row.receipt_id !== null });
      expect(done).toMatchObject({ status: 'succeeded', task_id: taskId, attempt_id: waiting.attempt_id });
      // and the agent is still served: another request of it runs (its principal and ingress subjects hold junk)
      const next = stack.actionRequest(agent);
      await stack.submit(agent, next);
      expect(await stack.waitForAction(next.action_request_id)).toMatchObject({ status: 'succeeded' });

      // and writ verify --task passes, naming each junk message in the task as quarantined, not as a break
      const verified = await stack.cli(['verify', '--task', taskId]);
      expect(verified).toMatch(/^ {2}PASS\s+events\.chain\s+/m);
      for (const seq of inTask) expect(verified).toMatch(new RegExp(`^ {2}QUARANTINED\\s+events\\.quarantine\\s+stream seq ${seq}: `, 'm'));
      expect(verified).not.toMatch(/^ {2}(FAIL|SKIP) /m);
      // and so does its exported bundle
      const exported = await stack.cli(['export', taskId, '--out', `${taskId}.bundle.json`]);
      expect(exported).toMatch(/^wrote /m);

      // and the views reach the end of the log, with every junk message of the log counted
      const status = await waitFor(
        async () => {
          const answer = await stack.http('/v1/projections/status?checksums=false');
          return answer.status === 200 && answer.body.events_behind === 0 && answer.body.quarantined.total >= 5 ? answer.body : undefined;
        },
        { what: 'the projection to catch up past the junk', timeoutMs: 30_000, intervalMs: 200 },
      );
      expect(status.quarantined.by_reason).toMatchObject({ QUARANTINE_NOT_JSON: 2, QUARANTINE_WRONG_SUBJECT: 1, QUARANTINE_NOT_ENVELOPE: 2 });

      // and every service is ready
      for (const name of SERVICES) {
        const ready = await fetch(`${stack.services[name].url}/readyz`);
        expect({ name, status: ready.status }).toEqual({ name, status: 200 });
      }
    },
    STEP_MS,
  );
});
