import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ReceiptIssued, type Receipt } from '@writ/contracts';
import { exportEd25519PrivateJwk, generateEd25519Key, sha256Hex } from '@writ/crypto';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Principal, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * Rollback as a governed action (Hermit 18.6, issue 6) through the whole real
 * stack (support/stack.mjs: the seven built services on the real NATS,
 * Postgres and Docker): an agent writes notes.txt twice; `writ rollback` of
 * the second write's receipt submits one rollback request; policy sends it to
 * a director; once granted, the executor writes the first version back, byte
 * for byte, and a `rollback` receipt names the receipt it rolled back, which
 * stays as it was. A destructive command left pending keeps the task open.
 */

const STEP_MS = 180_000;

let stack: Stack;
let keysDir: string;

beforeAll(async () => {
  stack = await startStack({ prefix: 'e2erollback' });
  keysDir = await mkdtemp(path.join(tmpdir(), 'writ-e2e-rollback-'));
}, 180_000);

stopStackAfterAll(() => stack);

afterAll(async () => {
  if (keysDir) await rm(keysDir, { recursive: true, force: true });
});

/** The task's receipts as the log holds them, in order. */
async function receipts(taskId: string): Promise<Receipt[]> {
  return (await stack.taskEvents(taskId)).filter((event) => event.event_type === 'receipt.issued').map((event) => ReceiptIssued.parse(event.payload).receipt);
}

/** The receipt that ends the attempt of an action (not an approval's own). */
async function receiptOfAction(taskId: string, actionRequestId: string): Promise<Receipt> {
  return waitFor(async () => (await receipts(taskId)).find((receipt) => receipt.action_request_ref === `action_request:${actionRequestId}` && receipt.receipt_class !== 'approval_resolution'), {
    what: `the receipt of ${actionRequestId}`,
    timeoutMs: 30_000,
    intervalMs: 100,
  });
}

/** An agent registered through the CLI whose private JWK is in a file, as `writ rollback --key` reads it. */
async function agentWithKeyFile(): Promise<{ agent: Principal; keyFile: string }> {
  const id = uniqueName('agent').replaceAll('_', '-');
  const key = await generateEd25519Key({ kid: `${id}-k1`, extractable: true });
  const publicFile = path.join(keysDir, `${id}.public.jwk.json`);
  const keyFile = path.join(keysDir, `${id}.private.jwk.json`);
  await writeFile(publicFile, JSON.stringify(key.publicJwk));
  await writeFile(keyFile, JSON.stringify(await exportEd25519PrivateJwk(key)), { mode: 0o600 });
  await stack.cli(['principal', 'add', '--id', id, '--type', 'agent', '--role', 'executor', '--jwk', publicFile, '--json']);
  return { agent: { id, kid: key.kid, key, publicJwk: key.publicJwk }, keyFile };
}

async function grantApproval(approvalId: string, taskId: string, director: Principal, note: string): Promise<void> {
  await waitFor(async () => ((await stack.http('/v1/approvals?status=pending')).body.approvals as Array<Record<string, unknown>>).find((approval) => approval['approval_id'] === approvalId), {
    what: `approval ${approvalId} in the inbox`,
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  const granted = await stack.resolveApproval(director, taskId, approvalId, 'grant', { note });
  expect(granted.status, JSON.stringify(granted.body)).toBe(200);
}

describe('writ rollback', () => {
  it(
    'given a write_local that overwrote notes.txt, when its receipt is rolled back and a director approves, then notes.txt holds the first version again and a rollback receipt names the original, which is unchanged',
    async () => {
      // given: a task kept open by a pending destructive command, and two writes of notes.txt
      const { agent, keyFile } = await agentWithKeyFile();
      const director = await stack.registerPrincipal({ id: uniqueName('director').replaceAll('_', '-'), type: 'user', roles: ['director'] });
      const holder = stack.actionRequest(agent, { target_resources: ['scratch'], params: { argv: ['rm', '-rf', 'scratch'] }, reversibility_hint: 'irreversible', reason: 'keep the task open' });
      await stack.submit(agent, holder);
      const waiting = await stack.waitForAction(holder.action_request_id, { statuses: ['awaiting_approval'] });
      const taskId = String(waiting.task_id);
      const write = async (content: string) => {
        const request = stack.actionRequest(agent, { task_id: taskId, action_class: 'write_local', target_resources: ['notes.txt'], params: { path: 'notes.txt', content }, reason: `write ${content.trim()}` });
        await stack.submit(agent, request);
        expect(await stack.waitForAction(request.action_request_id)).toMatchObject({ status: 'succeeded' });
        return request.action_request_id;
      };
      await write('v1\n');
      const second = await write('v2\n');
      const original = await receiptOfAction(taskId, second);
      expect(original.rollback).toMatchObject({
        method: 'compensating_local_actions',
        steps: [{ action_class: 'write_local', path: 'notes.txt', expected_sha256: sha256Hex('v2\n'), restore_sha256: sha256Hex('v1\n') }],
      });
      const frozen = JSON.stringify(original);

      // when: the receipt is rolled back through the CLI, and a director approves
      const submitted = JSON.parse(await stack.cli(['rollback', original.receipt_id, '--task', taskId, '--key', keyFile, '--principal', agent.id, '--json'])) as { action_request_id: string; duplicate: boolean };
      expect(submitted.duplicate).toBe(false);
      const pending = await stack.waitForAction(submitted.action_request_id, { statuses: ['awaiting_approval'] });
      await grantApproval(String(pending.approval_id), taskId, director, 'undo the second draft');

      // then: the rollback ran, and notes.txt is the first version again, byte for byte
      expect(await stack.waitForAction(submitted.action_request_id)).toMatchObject({ status: 'succeeded' });
      expect(await readFile(stack.workspaceFile(taskId, 'notes.txt'), 'utf8')).toBe('v1\n');
      // a rollback receipt names the receipt it rolled back; the original is not touched
      const undone = await receiptOfAction(taskId, submitted.action_request_id);
      expect(undone).toMatchObject({ receipt_class: 'rollback', result_code: 'succeeded', approval_resolution: { status: 'granted', resolved_by: director.id } });
      expect(undone.input_refs).toContain(`receipt:${original.receipt_id}`);
      expect(undone.result_summary).toContain(`rolls back receipt ${original.receipt_id}`);
      const again = (await receipts(taskId)).filter((receipt) => receipt.receipt_id === original.receipt_id);
      expect(again.map((receipt) => JSON.stringify(receipt))).toEqual([frozen]);
      // and explain shows the rollback under the original action
      const explanation = JSON.parse(await stack.cli(['explain', second, '--task', taskId, '--json'])) as { actions: Array<{ rolled_back_by: unknown[] }> };
      expect(explanation.actions[0]?.rolled_back_by).toEqual([
        { action_request_id: submitted.action_request_id, rolled_back_receipt_id: original.receipt_id, status: 'succeeded', receipt_id: undone.receipt_id, result_code: 'succeeded' },
      ]);
      // the task's receipt bundle resolves receipt:<id> to the original and verifies offline
      const bundle = path.join(keysDir, `${taskId}.bundle.json`);
      expect(JSON.parse(await stack.cli(['export', taskId, '--out', bundle, '--wait', '60', '--json']))).toMatchObject({ ok: true });
      const bundled = JSON.parse(await readFile(bundle, 'utf8')) as { receipts: Array<{ receipt: { receipt_id: string }; references: Array<{ ref: string; binding: string }> }> };
      const references = bundled.receipts.find((entry) => entry.receipt.receipt_id === undone.receipt_id)?.references ?? [];
      expect(references).toEqual(expect.arrayContaining([expect.objectContaining({ ref: `receipt:${original.receipt_id}`, binding: 'object' })]));
      await stack.cli(['verify', bundle]);
      // a second submission of the same rollback dedupes at ingress
      const twice = JSON.parse(await stack.cli(['rollback', original.receipt_id, '--task', taskId, '--key', keyFile, '--principal', agent.id, '--json'])) as { action_request_id: string; duplicate: boolean };
      expect(twice).toMatchObject({ action_request_id: submitted.action_request_id, duplicate: true });
    },
    STEP_MS,
  );

  it(
    'given a receipt that names no rollback method, when it is rolled back, then the CLI refuses with CLI_ROLLBACK_UNAVAILABLE and its statement, and submits nothing',
    async () => {
      // given: an approval resolution's receipt (it changed nothing outside the log)
      const { agent, keyFile } = await agentWithKeyFile();
      const director = await stack.registerPrincipal({ id: uniqueName('director').replaceAll('_', '-'), type: 'user', roles: ['director'] });
      const removal = stack.actionRequest(agent, { target_resources: ['scratch'], params: { argv: ['rm', '-rf', 'scratch'] }, reversibility_hint: 'irreversible', reason: 'clean up' });
      await stack.submit(agent, removal);
      const waiting = await stack.waitForAction(removal.action_request_id, { statuses: ['awaiting_approval'] });
      const taskId = String(waiting.task_id);
      await grantApproval(String(waiting.approval_id), taskId, director, 'fine');
      await stack.waitForAction(removal.action_request_id);
      const resolution = await waitFor(async () => (await receipts(taskId)).find((receipt) => receipt.receipt_class === 'approval_resolution'), { what: 'the approval receipt', timeoutMs: 30_000, intervalMs: 100 });

      // when, then
      await expect(stack.cli(['rollback', resolution.receipt_id, '--task', taskId, '--key', keyFile, '--principal', agent.id])).rejects.toThrow(
        /CLI_ROLLBACK_UNAVAILABLE.*an approval resolution changes no state outside the log/s,
      );
      expect((await stack.taskEvents(taskId)).filter((event) => event.event_type === 'attempt.awaiting_policy')).toHaveLength(1);
    },
    STEP_MS,
  );
});
