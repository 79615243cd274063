import { KeySet, verifyJws } from '@writ/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { SERVICES, startStack, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * Writ in one process (apps/serve, `writ serve --all`, `scripts/writ-up.sh --single-process`):
 * the seven services in ONE child, each with its own bus credential, port and configuration, on
 * the real NATS, Postgres and Docker. The governed path must behave exactly as it does with one
 * process per service. (Every spec can run this way: WRIT_E2E_SINGLE_PROCESS=1.)
 */
const STEP_MS = 90_000;
const decoder = new TextDecoder();

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ prefix: 'single', singleProcess: true });
}, 180_000);

stopStackAfterAll(() => stack);

/** A receipt's JWS verified against `GET /v1/keys`: its signed body. */
async function verifiedReceipt(receiptId: string): Promise<Record<string, unknown>> {
  const keySet = await KeySet.fromJwks((await stack.http('/v1/keys')).body);
  const receipt = await stack.http(`/v1/receipts/${receiptId}`);
  expect(receipt.status).toBe(200);
  return JSON.parse(decoder.decode((await verifyJws(String(receipt.body.jws), keySet)).payload)) as Record<string, unknown>;
}

describe('every service in one process', () => {
  it('runs all seven in one process, each ready on its own port', async () => {
    const pids = new Set(SERVICES.map((name) => stack.services[name].pid));
    expect(pids.size).toBe(1);
    const ports = new Set(SERVICES.map((name) => stack.services[name].port));
    expect(ports.size).toBe(SERVICES.length);
    for (const name of SERVICES) expect((await fetch(`${stack.services[name].url}/readyz`)).status, name).toBe(200);
  });

  it(
    'given an allowed action, then it runs in a cell and ends succeeded with a receipt that verifies; given a denied one, then nothing runs and its refusal is receipted',
    async () => {
      // given an agent registered through the CLI
      const agent = await stack.registerPrincipal();
      // when it submits an allowed action and a denied one
      const allowed = stack.actionRequest(agent);
      const denied = stack.deniedActionRequest(agent);
      await stack.submit(agent, allowed);
      await stack.submit(agent, denied);
      // then the allowed one succeeds under a grant, and its receipt verifies against the published keys
      const done = await stack.waitForAction(allowed.action_request_id, { until: (row: { receipt_id: string | null }) => row.receipt_id !== null });
      expect(done).toMatchObject({ status: 'succeeded' });
      expect(done.grant_id).not.toBeNull();
      expect(await verifiedReceipt(String(done.receipt_id))).toMatchObject({ result_code: 'succeeded' });
      const log = await stack.taskEvents(String(done.task_id));
      expect(log.filter((event) => event.event_type === 'execution.completed')).toHaveLength(1);
      // and the denied one ends denied, with no grant and a receipt of the refusal
      const refused = await stack.waitForAction(denied.action_request_id, { statuses: ['denied'], until: (row: { receipt_id: string | null }) => row.receipt_id !== null });
      expect(refused.grant_id).toBeNull();
      expect(await verifiedReceipt(String(refused.receipt_id))).toMatchObject({ result_code: 'refused' });
    },
    STEP_MS,
  );
});
