import { sha256Hex } from '@writ/crypto';
import { uniqueName, waitFor } from '@writ/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Principal, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * `writ explain` and `writ decisions` on a task that went through the real
 * stack (support/stack.mjs: the seven built services on the real NATS,
 * Postgres and Docker): a destructive command waits for approval while two
 * write_local actions write notes.txt twice; then a director grants it. The
 * CLI reads the log itself, checks each receipt's signature against the
 * receipt service's keys in the log, and answers the questions of Hermit 21.
 */

const STEP_MS = 120_000;

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ prefix: 'e2eexplain' });
}, 180_000);

stopStackAfterAll(() => stack);

interface Story {
  readonly taskId: string;
  readonly holder: string;
  readonly v1: string;
  readonly v2: string;
  readonly director: Principal;
}

let story: Promise<Story> | undefined;

/** The task, run once for the file. */
function recordedTask(): Promise<Story> {
  story ??= (async () => {
    const agent = await stack.registerPrincipal();
    const director = await stack.registerPrincipal({ id: uniqueName('director').replaceAll('_', '-'), type: 'user', roles: ['director'] });
    const holder = stack.actionRequest(agent, { target_resources: ['scratch'], params: { argv: ['rm', '-rf', 'scratch'] }, reversibility_hint: 'irreversible', reason: 'clean up' });
    await stack.submit(agent, holder);
    const waiting = await stack.waitForAction(holder.action_request_id, { statuses: ['awaiting_approval'] });
    const taskId = String(waiting.task_id);
    await waitFor(
      async () => ((await stack.http('/v1/approvals?status=pending')).body.approvals as Array<Record<string, unknown>>).find((approval) => approval['approval_id'] === waiting.approval_id),
      { what: 'the approval in the inbox', timeoutMs: 30_000, intervalMs: 100 },
    );
    const write = async (content: string, reason: string) => {
      const request = stack.actionRequest(agent, { task_id: taskId, action_class: 'write_local', target_resources: ['notes.txt'], params: { path: 'notes.txt', content }, reason });
      await stack.submit(agent, request);
      expect(await stack.waitForAction(request.action_request_id)).toMatchObject({ status: 'succeeded' });
      return request.action_request_id;
    };
    const v1 = await write('v1\n', 'first draft');
    const v2 = await write('v2\n', 'second draft');
    const granted = await stack.resolveApproval(director, taskId, String(waiting.approval_id), 'grant', { note: 'scratch is disposable' });
    expect(granted.status).toBe(200);
    expect(await stack.waitForAction(holder.action_request_id)).toMatchObject({ status: 'succeeded' });
    // the approval's own receipt is issued beside the attempt's: wait for both
    await waitFor(async () => ((await stack.taskEvents(taskId)).filter((event) => event.event_type === 'receipt.issued').length >= 4 ? true : undefined), {
      what: 'four receipts',
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    return { taskId, holder: holder.action_request_id, v1, v2, director };
  })();
  return story;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the explanation document as JSON; matchers narrow it
type Json = any;

describe('writ explain', () => {
  it(
    'given a task from the real stack, when explained as JSON, then every action answers what, why, authority, changes, verification and rollback, each receipt signed by the receipt key in the log',
    async () => {
      // given
      const { taskId, holder, v1, v2, director } = await recordedTask();

      // when
      const explanation = JSON.parse(await stack.cli(['explain', taskId, '--json'])) as Json;

      // then the task and its three actions, in the order they were proposed
      expect(explanation).toMatchObject({ format: 'writ.explain/1', task: { task_id: taskId, status: 'completed' } });
      expect(explanation.actions.map((action: Json) => action.action_request_id)).toEqual([holder, v1, v2]);
      const [removal, first, second] = explanation.actions as Json[];
      // every receipt: signature verified against the issuer's key in the log, hash recomputed, chained
      const receipts = explanation.actions.flatMap((action: Json) => action.verification.receipts) as Json[];
      expect(receipts).toHaveLength(4);
      for (const receipt of receipts) {
        expect(receipt).toMatchObject({ signature: { ok: true, problem: null }, hash_recomputes: true, chained: true });
        expect(receipt.signature.kid).toBe(receipt.signer_ref);
        expect(receipt.transparency_log).not.toBe('not_read');
      }
      // the approved removal: why (policy), under whose authority (approval, resolver, witness, grant)
      expect(removal.why.policy).toMatchObject({ outcome: 'require_approval', matched_rules: ['destructive_command'] });
      expect(removal.authority.approval).toMatchObject({ status: 'granted', resolved_by: director.id, note: 'scratch is disposable', witness_validated: true });
      expect(removal.authority.grant).toMatchObject({ action_class: 'execute_command', uses_claimed: 1, max_uses: 1 });
      expect(removal.evidence.state_witness.fingerprints).toEqual({ scratch: 'absent' });
      // the writes: what changed, and how each can be undone from what the log holds
      expect(first.changed).toEqual([{ path: 'notes.txt', change: 'added', before_sha256: null, after_sha256: sha256Hex('v1\n') }]);
      expect(first.rollback).toMatchObject({ supported: true, steps: [{ action_class: 'delete_local', path: 'notes.txt' }] });
      expect(second.rollback).toMatchObject({ supported: true, steps: [{ action_class: 'write_local', path: 'notes.txt', restore_sha256: sha256Hex('v1\n'), expected_sha256: sha256Hex('v2\n') }] });
      expect(second.evidence.cell).toMatchObject({ network_mode: 'none', readonly_rootfs: true });
      // and the written content is never printed, only its size and hash
      expect(second.what.params).toEqual(['path: notes.txt', `content: 3 bytes, sha256 ${sha256Hex('v2\n')}`]);
    },
    STEP_MS,
  );

  it(
    'given an action id, when explained, then its task is found through the API and one action is printed in sections; with --task the log alone is read',
    async () => {
      // given
      const { taskId, v2 } = await recordedTask();

      // when
      const text = await stack.cli(['explain', v2, '--url', stack.apiUrl]);
      const direct = JSON.parse(await stack.cli(['explain', v2, '--task', taskId, '--json'])) as Json;

      // then
      const lines = text.trimEnd().split('\n');
      expect(lines[0]).toBe(`task ${taskId} — e2e`);
      expect(lines.filter((line) => /^action /.test(line))).toEqual([expect.stringContaining(v2)]);
      for (const heading of ['What happened', 'Why', 'Evidence', 'Authority', 'What changed', 'Can it be verified', 'Can it be replayed or rolled back']) {
        expect(lines).toContain(`  ${heading}`);
      }
      expect(lines).toEqual(expect.arrayContaining([expect.stringMatching(/^ {4}rollback: +supported \(compensating_local_actions\)/), expect.stringMatching(/signature verified/)]));
      expect(text).not.toContain('v2\\n');
      expect(direct.actions.map((action: Json) => action.action_request_id)).toEqual([v2]);
    },
    STEP_MS,
  );

  it(
    'given an id nobody knows, when explained, then it fails with CLI_EXPLAIN_NOT_FOUND',
    async () => {
      await expect(stack.cli(['explain', 'nobody-knows-this', '--url', stack.apiUrl])).rejects.toThrow(/CLI_EXPLAIN_NOT_FOUND/);
    },
    STEP_MS,
  );
});

describe('writ decisions', () => {
  it(
    "given the task, when its decisions are printed, then each policy result and the director's grant is an entry of the seed 003 log",
    async () => {
      // given
      const { taskId, director } = await recordedTask();

      // when
      const text = await stack.cli(['decisions', taskId]);
      const log = JSON.parse(await stack.cli(['decisions', taskId, '--json'])) as Json;

      // then
      expect(log.decisions.map((entry: Json) => entry.recorded_with)).toEqual(['policy.evaluated', 'policy.evaluated', 'policy.evaluated', 'approval.granted']);
      expect(log.decisions.at(-1)).toMatchObject({ decided_by: director.id, falsifier_check: 'holds' });
      const headings = text.split('\n').filter((line) => line.startsWith('### ['));
      expect(headings).toHaveLength(4);
      for (const field of ['Task', 'Classification', 'Decision', 'Rationale', 'Falsifier']) {
        expect(text.split('\n').filter((line) => line.startsWith(`- **${field}:** `))).toHaveLength(4);
      }
    },
    STEP_MS,
  );
});
