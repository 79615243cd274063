import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { exportEd25519PrivateJwk, importEd25519PrivateJwk } from '@writ/crypto';
import { uniqueName } from '@writ/testing';
import { beforeAll, expect, it } from 'vitest';
import { launchConsoleBrowser, logInToConsole } from './support/console-browser.js';
import { REPO_ROOT, startStack, type Principal, type Stack } from './support/stack.mjs';
import { scratchFiles } from './support/scratch-files.js';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * Seed 004 exit criterion 10 ("durable memory writes require evidence and
 * trust metadata"), its memory part (issue 17), end to end on one stack of
 * the seven built services (real NATS, Postgres, Docker): an agent promotes
 * memory only through the `writ` CLI, as a `memory_write` ActionRequest that
 * goes through policy (and approval where its profile says), is performed by
 * the executor under its grant and receipted. An unsupported promotion
 * degrades to a working state candidate; a complete one citing a verified
 * belief is promoted, read back from the projection, and its receipt verifies
 * offline in a `writ export` bundle; a tier above the source belief is
 * refused; an approval-requiring profile holds it until a director grants it;
 * an invalidation keeps the record, marked invalidated.
 */

const STEP_MS = 120_000;
const SCREENSHOTS = path.join(REPO_ROOT, 'var', 'console-screenshots');

let stack: Stack;
const scratch = scratchFiles('writ-memory-e2e-');
const file = scratch.file;

beforeAll(async () => {
  stack = await startStack({ prefix: 'e2em' });
}, 180_000);

stopStackAfterAll(() => stack);

/** A profile as data: commands allowed (destructive ones with approval), and memory_write as `memory` says. */
const profile = (id: string, memory: Record<string, unknown>) => ({
  id,
  description: `e2e: commands, and memory writes (${String(memory['outcome'])})`,
  action_classes: { execute_command: { outcome: 'allow' }, memory_write: memory },
  destructive_commands: 'require_approval',
});

it(
  'exit criterion 10 (memory): a promotion is governed and receipted, needs evidence and trust metadata, never outranks its source, waits for approval where the profile says, and is invalidated, never deleted',
  async () => {
    // given principals registered through the CLI: a director, and an agent
    const register = async (type: string, role: string) => {
      const id = uniqueName(type).replaceAll('_', '-');
      const privateJwk = path.join(scratch.dir(), `${id}.private.jwk.json`);
      const publicJwk = await stack.cli(['principal', 'keygen', '--kid', `${id}-k1`, '--out', privateJwk]);
      await stack.cli(['principal', 'add', '--id', id, '--type', type, '--role', role, '--jwk', await file(`${id}.public.jwk.json`, publicJwk.trim())]);
      return { id, privateJwk };
    };
    const reviewer = await register('user', 'director');
    const { id: agentId, privateJwk } = await register('agent', 'executor');
    // and two profiles the director applied: one allows memory_write, the other requires approval for it
    const allowed = uniqueName('memory_allowed');
    const reviewed = uniqueName('memory_reviewed');
    for (const [id, memory] of [[allowed, { outcome: 'allow' }], [reviewed, { outcome: 'require_approval' }]] as const) {
      await stack.cli(['policy', 'apply', await file(`${id}.json`, profile(id, memory)), '--key', reviewer.privateJwk, '--principal', reviewer.id]);
    }
    // and the agent's first action in a task under the allowing profile, run and receipted
    const key = await importEd25519PrivateJwk(JSON.parse(await readFile(privateJwk, 'utf8')));
    const agent: Principal = { id: agentId, kid: `${agentId}-k1`, key, publicJwk: key.publicJwk };
    const firstAction = async (policyProfile: string) => {
      // the task is held open by a destructive command awaiting approval (nobody resolves it), so later actions may join it
      const task = { title: 'memory e2e', goal: 'learn something worth keeping', policy_profile: policyProfile, files_owned: ['**'] };
      const holder = stack.actionRequest(agent, { task, target_resources: ['scratch'], params: { argv: ['rm', '-rf', 'scratch'] }, reversibility_hint: 'irreversible', reason: 'hold the task open' });
      await stack.submit(agent, holder);
      const held = await stack.waitForAction(holder.action_request_id, { statuses: ['awaiting_approval'], timeoutMs: STEP_MS });
      const request = stack.actionRequest(agent, { task_id: String(held.task_id) });
      await stack.submit(agent, request);
      const action = await stack.waitForAction(request.action_request_id, { timeoutMs: STEP_MS });
      expect(action.status, JSON.stringify(action)).toBe('succeeded');
      return { taskId: String(action.task_id), receiptId: String(action.receipt_id) };
    };
    const { taskId, receiptId } = await firstAction(allowed);
    const signer = ['--key', privateJwk, '--principal', agentId];
    // and a verified belief citing that receipt, and an observed one, asserted through the CLI
    const belief = (id: string, tier: string, evidence: unknown) => ({ belief_id: id, claim: 'out.txt holds hello', scope: `task:${taskId}`, confidence: 0.9, trust_tier: tier, evidence_refs: [evidence] });
    await stack.cli(['belief', 'assert', taskId, await file('verified.json', belief('bel-verified', 'verified', { kind: 'receipt', id: receiptId })), ...signer, '--json']);
    await stack.cli(['belief', 'assert', taskId, await file('observed.json', belief('bel-observed', 'observed', { kind: 'observation', id: 'obs-1' })), ...signer, '--json']);
    /** `writ memory promote`, then the action's end as the projection shows it, with its receipt. */
    const promote = async (task: string, args: readonly string[], statuses?: readonly string[]) => {
      const actionRequestId = uniqueName('ar-mem').replaceAll('_', '-');
      await stack.cli(['memory', 'promote', task, ...args, '--action-request-id', actionRequestId, ...signer, '--json']);
      return stack.waitForAction(actionRequestId, { timeoutMs: STEP_MS, ...(statuses === undefined ? {} : { statuses }) });
    };
    /** The receipt body as the receipt service signed it (`GET /v1/receipts/<id>`). */
    const receiptOf = async (action: { receipt_id: unknown }) => (await stack.http(`/v1/receipts/${String(action.receipt_id)}`)).body.receipt as Record<string, unknown>;
    const complete = ['--claim', 'out.txt holds hello', '--scope', 'repo:e2e', '--evidence', `receipt:${receiptId}`, '--reason', 'later tasks read out.txt', '--invalidation', 'manual', '--retention', 'project'];

    // (1) when a promotion without evidence nor trust metadata is proposed
    const degraded = await promote(taskId, ['--memory-id', 'mem-degraded', '--claim', 'the greeting is hello']);
    // then it ran as a receipted memory_write that says it degraded, no record exists, and a working state candidate holds it
    expect(degraded.status, JSON.stringify(degraded)).toBe('succeeded');
    const degradedReceipt = await receiptOf(degraded);
    expect(degradedReceipt).toMatchObject({ receipt_class: 'memory_promotion', result_summary: expect.stringMatching(/NOT promoted.*EVIDENCE_MISSING.*TRUST_TIER_MISSING.*degraded to a working state candidate/) });
    const state = await stack.waitForRoute(`/v1/tasks/${taskId}/working-state`, (status, body) => status === 200 && JSON.stringify(body).includes('memory_candidate.mem_degraded'), { timeoutMs: STEP_MS });
    expect(state.body.entries).toEqual(expect.arrayContaining([expect.objectContaining({ key: 'memory_candidate.mem_degraded', kind: 'uncertainty' })]));
    expect((await stack.http('/v1/memory/mem-degraded')).status).toBe(404);
    expect((await stack.entityEvents('memory', 'mem-degraded')).map((event) => event.event_type)).toEqual(['memory.promotion_degraded']);

    // (2) when a complete promotion citing the verified belief and its receipt is proposed under the allowing profile
    const promoted = await promote(taskId, ['--memory-id', 'mem-hello', ...complete, '--trust-tier', 'verified', '--source', 'belief:bel-verified']);
    // then it is promoted by the executor alone, receipted, and read back from the projection with its authority
    expect(promoted.status, JSON.stringify(promoted)).toBe('succeeded');
    expect(promoted.policy_outcome).toBe('allow');
    const promotedReceipt = await receiptOf(promoted);
    expect(promotedReceipt).toMatchObject({ receipt_class: 'memory_promotion', result_code: 'succeeded', result_summary: expect.stringContaining('promoted memory mem-hello') });
    const [memoryEvent] = await stack.entityEvents('memory', 'mem-hello');
    expect(memoryEvent).toMatchObject({ event_type: 'memory.promoted', actor_id: 'writ-executor', seal: { principal_id: 'writ-executor' } });
    expect(promotedReceipt['output_refs']).toEqual(expect.arrayContaining([`sha256:${memoryEvent?.hash}`]));
    const record = await stack.waitForRoute('/v1/memory/mem-hello', (status, body) => status === 200 && body['receipt_ref'] !== null, { timeoutMs: STEP_MS });
    expect(record.body).toMatchObject({
      memory_id: 'mem-hello',
      status: 'active',
      trust_tier: 'verified',
      evidence_refs: [{ kind: 'receipt', id: receiptId }],
      promotion_reason: 'later tasks read out.txt',
      source_kind: 'belief',
      source_id: 'bel-verified',
      promoted_by: agentId,
      policy_result_ref: expect.stringMatching(/^policy_result:/),
      approval_ref: null,
      receipt_ref: `receipt:${String(promoted.receipt_id)}`,
    });
    const shown = JSON.parse(await stack.cli(['memory', 'show', 'mem-hello', '--url', stack.apiUrl, '--json'])) as Record<string, unknown>;
    expect(shown['memory_id']).toBe('mem-hello');
    // and its receipt verifies offline in a `writ export` bundle
    const bundle = path.join(scratch.dir(), `${taskId}.bundle.json`);
    expect(JSON.parse(await stack.cli(['export', taskId, '--out', bundle, '--wait', '60', '--json']))).toMatchObject({ ok: true });
    const exported = JSON.parse(await readFile(bundle, 'utf8')) as { receipts: Array<{ receipt: Record<string, unknown> }> };
    expect(exported.receipts.map((r) => r.receipt['receipt_id'])).toContain(promoted.receipt_id);
    await stack.cli(['verify', bundle]);

    // (4) when a promotion claims a tier above its source belief (verified, from the observed belief)
    const escalated = await promote(taskId, ['--memory-id', 'mem-escalated', ...complete, '--trust-tier', 'verified', '--source', 'belief:bel-observed']);
    // then it is refused: nothing written, and its receipt says why
    expect(escalated.status, JSON.stringify(escalated)).toBe('failed');
    expect(await receiptOf(escalated)).toMatchObject({ receipt_class: 'memory_promotion', result_code: 'failed', result_summary: expect.stringContaining('KNOWLEDGE_TRUST_TIER_ESCALATION') });
    expect(await stack.entityEvents('memory', 'mem-escalated')).toEqual([]);

    // a malformed promotion (a trust tier that does not exist), sent past the CLI's own check, is refused at ingress with its code
    const malformed = stack.actionRequest(agent, {
      task_id: taskId,
      action_class: 'memory_write',
      target_resources: ['memory:repo:e2e'],
      params: { memory: { op: 'promote', memory_id: 'mem-malformed', claim: 'x', trust_tier: 'gospel' } },
    });
    await stack.submit(agent, malformed);
    expect(await stack.waitForAction(malformed.action_request_id, { timeoutMs: STEP_MS })).toMatchObject({ status: 'rejected', reason_code: 'INGRESS_REQUEST_INVALID', task_id: null });
    expect(await stack.entityEvents('memory', 'mem-malformed')).toEqual([]);

    // (5) when the record is invalidated (a memory_write too, governed and receipted)
    const invalidationId = uniqueName('ar-mem').replaceAll('_', '-');
    await stack.cli(['memory', 'invalidate', 'mem-hello', '--task', taskId, '--reason', 'out.txt changed', '--action-request-id', invalidationId, ...signer, '--json']);
    const invalidation = await stack.waitForAction(invalidationId, { timeoutMs: STEP_MS });
    expect(invalidation.status, JSON.stringify(invalidation)).toBe('succeeded');
    // then the record is kept, marked invalidated, with the invalidation's receipt
    const kept = await stack.waitForRoute('/v1/memory/mem-hello', (status, body) => status === 200 && body['invalidation_receipt_ref'] !== null, { timeoutMs: STEP_MS });
    expect(kept.body).toMatchObject({ status: 'invalidated', claim: 'out.txt holds hello', invalidation_reason: 'out.txt changed', invalidated_by: agentId, invalidation_receipt_ref: `receipt:${String(invalidation.receipt_id)}` });
    expect((await stack.entityEvents('memory', 'mem-hello')).map((event) => event.event_type)).toEqual(['memory.promoted', 'memory.invalidated']);

    // (3) when a task under the reviewing profile proposes a complete promotion
    const reviewedTask = await firstAction(reviewed);
    const waiting = await promote(
      reviewedTask.taskId,
      ['--memory-id', 'mem-reviewed', '--claim', 'out.txt holds hello', '--scope', 'repo:e2e', '--evidence', `receipt:${reviewedTask.receiptId}`, '--reason', 'reviewed', '--invalidation', 'manual', '--retention', 'project', '--trust-tier', 'observed', '--source', 'artifact:art-out'],
      ['awaiting_approval'],
    );
    // then it waits for a director, and nothing is written meanwhile
    expect(waiting).toMatchObject({ status: 'awaiting_approval', policy_outcome: 'require_approval' });
    expect(await stack.entityEvents('memory', 'mem-reviewed')).toEqual([]);
    expect((await stack.http('/v1/memory/mem-reviewed')).status).toBe(404);
    // and once a director grants it, it is promoted with the approval it was promoted under
    const director = await stack.registerPrincipal({ type: 'user', roles: ['director'] });
    expect((await stack.resolveApproval(director, reviewedTask.taskId, String(waiting.approval_id), 'grant')).status).toBe(200);
    const granted = await stack.waitForAction(waiting.action_request_id, { timeoutMs: STEP_MS });
    expect(granted.status, JSON.stringify(granted)).toBe('succeeded');
    const approvedRecord = await stack.waitForRoute('/v1/memory/mem-reviewed', (status, body) => status === 200 && body['receipt_ref'] !== null, { timeoutMs: STEP_MS });
    expect(approvedRecord.body).toMatchObject({ status: 'active', approval_ref: `approval:${String(waiting.approval_id)}`, trust_tier: 'observed' });

    // the agent lists its records, another agent reads none of them
    const listed = JSON.parse(await stack.cli(['memory', 'list', '--url', stack.apiUrl, ...signer, '--json'])) as { memory: Array<{ memory_id: string; status: string }> };
    expect(listed.memory.map((m) => [m.memory_id, m.status]).sort()).toEqual([
      ['mem-hello', 'invalidated'],
      ['mem-reviewed', 'active'],
    ]);
    const stranger = await stack.registerPrincipal({ type: 'agent', roles: ['executor'] });
    expect((await stack.http('/v1/memory', { as: stranger })).body).toEqual({ memory: [] });

    // and a director sees both in the console (chromium): the invalidated one marked, each record naming the receipt it was promoted under
    const watcher = await stack.registerPrincipal({ type: 'user', roles: ['director'], extractable: true });
    const browser = await launchConsoleBrowser();
    try {
      const page = await (await browser.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
      await logInToConsole(page, stack.apiUrl, watcher.id, JSON.stringify(await exportEd25519PrivateJwk(watcher.key)));
      await page.evaluate(() => {
        window.location.hash = '#/memory';
      });
      const row = (id: string) => page.locator(`[data-testid=memory-row][data-memory=${id}]`);
      await row('mem-reviewed').waitFor({ timeout: 30_000 });
      expect(await row('mem-hello').locator('[data-testid=memory-status-value]').getAttribute('data-status')).toBe('invalidated');
      expect(await row('mem-reviewed').textContent()).toContain(String(approvedRecord.body['receipt_ref']));
      await row('mem-hello').locator('a').first().click();
      await page.locator('[data-testid=memory-record-status][data-status=invalidated]').waitFor({ timeout: 30_000 });
      expect(await page.locator('[data-testid=memory-record]').textContent()).toContain('out.txt changed');
      await mkdir(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOTS, 'memory-record.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  },
  STEP_MS * 6,
);
