import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { exportEd25519PrivateJwk, generateEd25519Key } from '@writ/crypto';
import { SIGNED_REQUESTS, signRequest } from '@writ/runtime';
import { uniqueName, waitFor } from '@writ/testing';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startStack, type Principal, type Stack } from './support/stack.mjs';
import { launchConsoleBrowser, logInToConsole } from './support/console-browser.js';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * The supervision console (apps/console) in a real browser: Debian's chromium
 * driven by playwright-core, against the whole stack (support/stack.mjs), the
 * console served by the projection at /console/. A director logs in with a
 * private JWK, approves a pending destructive command through the UI (the
 * resolution signed in the browser) and the command runs; another tab shows
 * the action's status change without a reload; a receipt verifies PASS in the
 * browser (signature, chain, inclusion against the signed tree head) and the
 * same receipt, tampered on its way (request interception), shows FAIL; an
 * agent sees only its own work; no request ever carries the private key.
 * Screenshots of each page go to var/console-screenshots/.
 */

const STEP_MS = 180_000;
const SCREENSHOTS = path.join(REPO_ROOT, 'var', 'console-screenshots');

interface Party {
  readonly principal: Principal;
  /** The private JWK as a key file holds it. */
  readonly jwkText: string;
  /** Its private scalar: must appear in no request. */
  readonly d: string;
}

interface Story {
  readonly agent: Party;
  readonly director: Party;
  readonly taskId: string;
  readonly holderId: string;
  readonly allowedId: string;
  readonly destructiveId: string;
  readonly approvalId: string;
}

let stack: Stack;
let browser: Browser;
let story: Story;
/** Every request any console page made, with what it carried. */
const seen: { url: string; headers: Record<string, string>; body: string | null }[] = [];

beforeAll(async () => {
  stack = await startStack({ prefix: 'e2econsole', readyTimeoutMs: 240_000 });
  browser = await launchConsoleBrowser();
  await mkdir(SCREENSHOTS, { recursive: true });
  story = await recordStory();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  if (stack !== undefined) await rm(path.join(REPO_ROOT, 'var', 'tmp', stack.root), { recursive: true, force: true });
}, 30_000);

stopStackAfterAll(() => stack);

/** A principal registered through `writ principal add` with a key whose private JWK the test can hand to the browser. */
async function party(type: 'agent' | 'user', roles: readonly string[]): Promise<Party> {
  const id = uniqueName(type === 'agent' ? 'agent' : 'director').replaceAll('_', '-');
  const key = await generateEd25519Key({ kid: `${id}-k1`, extractable: true });
  const dir = path.join(REPO_ROOT, 'var', 'tmp', stack.root);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const publicFile = path.join(dir, `${id}.public.jwk.json`);
  await writeFile(publicFile, JSON.stringify(key.publicJwk));
  await stack.cli(['principal', 'add', '--id', id, '--type', type, ...roles.flatMap((role) => ['--role', role]), '--jwk', publicFile, '--no-creds', '--json']);
  const jwk = await exportEd25519PrivateJwk(key);
  return { principal: { id, kid: key.kid, key, publicJwk: key.publicJwk }, jwkText: JSON.stringify(jwk), d: jwk.d };
}

/** One task: a destructive holder that keeps it open, an allowed command that leaves build/marker, then `rm -rf build` waiting for a director. */
async function recordStory(): Promise<Story> {
  const agent = await party('agent', ['executor']);
  const director = await party('user', ['director']);
  const holder = stack.actionRequest(agent.principal, { target_resources: ['scratch'], params: { argv: ['rm', '-rf', 'scratch'] }, reversibility_hint: 'irreversible', reason: 'keep the task open' });
  await stack.submit(agent.principal, holder);
  const waiting = await stack.waitForAction(holder.action_request_id, { statuses: ['awaiting_approval'], timeoutMs: STEP_MS });
  const taskId = String(waiting.task_id);
  const allowed = stack.actionRequest(agent.principal, {
    task_id: taskId,
    target_resources: ['build', 'out.txt'],
    params: { argv: ['sh', '-c', 'mkdir -p build && echo built > build/marker && echo hello > out.txt'] },
    reason: 'build it',
  });
  await stack.submit(agent.principal, allowed);
  expect(await stack.waitForAction(allowed.action_request_id, { timeoutMs: STEP_MS })).toMatchObject({ status: 'succeeded' });
  const destructive = stack.actionRequest(agent.principal, { task_id: taskId, target_resources: ['build'], params: { argv: ['rm', '-rf', 'build'] }, reversibility_hint: 'irreversible', reason: 'clean the build' });
  await stack.submit(agent.principal, destructive);
  const pending = await stack.waitForAction(destructive.action_request_id, { statuses: ['awaiting_approval'], timeoutMs: STEP_MS });
  return { agent, director, taskId, holderId: holder.action_request_id, allowedId: allowed.action_request_id, destructiveId: destructive.action_request_id, approvalId: String(pending.approval_id) };
}

async function newPage(context?: BrowserContext): Promise<Page> {
  const page = await (context ?? (await browser.newContext({ viewport: { width: 1400, height: 1000 } }))).newPage();
  page.on('request', (request: Request) => {
    seen.push({ url: request.url(), headers: request.headers(), body: request.postData() });
  });
  page.on('pageerror', (error) => process.stderr.write(`[console pageerror] ${error.message}\n`));
  return page;
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Opens the console as `who`: the private JWK pasted into the login form (a file picker takes the same text). */
async function logIn(page: Page, who: Party, screenshot?: string): Promise<void> {
  await logInToConsole(page, stack.apiUrl, who.principal.id, who.jwkText, screenshot === undefined ? undefined : () => shot(page, screenshot));
}

async function go(page: Page, hash: string): Promise<void> {
  await page.evaluate((target) => {
    window.location.hash = target;
  }, hash);
}

describe('the console in a real browser', () => {
  let director: Page;

  it(
    'given the console served at /console/, when it is fetched, then its page and assets carry a strict CSP and name only this origin',
    async () => {
      // when
      const page = await fetch(`${stack.apiUrl}/console/`);
      const html = await page.text();
      // then
      expect(page.status).toBe(200);
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(html).not.toMatch(/https?:\/\//);
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      const script = /src="(assets\/console-[A-Z0-9]+\.js)"/.exec(html)?.[1];
      const asset = await fetch(`${stack.apiUrl}/console/${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toContain('immutable');
      expect(await fetch(`${stack.apiUrl}/console/assets/..%2F..%2Fpackage.json`).then((answer) => answer.status)).toBe(404);
    },
    STEP_MS,
  );

  it(
    'given a director with its private JWK, when it logs in, then the inbox lists the pending destructive command first',
    async () => {
      // given / when
      director = await newPage();
      await logIn(director, story.director, 'login');
      await go(director, '#/approvals');
      // then
      const row = director.locator(`[data-testid=pending-table] [data-approval="${story.approvalId}"]`);
      await row.waitFor({ timeout: 30_000 });
      expect(await row.textContent()).toContain('rm -rf build');
      await shot(director, 'approvals-inbox');
      await go(director, '#/tasks');
      await director.locator(`[data-testid=task-row][data-task="${story.taskId}"]`).waitFor({ timeout: 30_000 });
      await shot(director, 'tasks');
      // and the search (the API's q) finds the task by a piece of its id in any case, and nothing for what no task holds
      await director.fill('[data-testid=task-search]', story.taskId.slice(4, 14).toUpperCase());
      await director.press('[data-testid=task-search]', 'Enter');
      await director.locator(`[data-testid=task-row][data-task="${story.taskId}"]`).waitFor({ timeout: 30_000 });
      await director.fill('[data-testid=task-search]', 'no task holds this text');
      await director.press('[data-testid=task-search]', 'Enter');
      await director.locator('[data-testid=tasks]', { hasText: 'No task matches.' }).waitFor({ timeout: 30_000 });
    },
    STEP_MS,
  );

  it(
    'given the pending command, when the director approves it in the UI, then the resolution signed in the browser is accepted and the command runs to succeeded, shown live in another tab without a reload',
    async () => {
      // given: a second tab watching the action (its own login: the key lives in one tab's memory only)
      const watcher = await newPage();
      await logIn(watcher, story.director);
      await go(watcher, `#/actions/${story.destructiveId}`);
      await watcher.locator('[data-testid=action-status][data-status=awaiting_approval]').waitFor({ timeout: 30_000 });
      await watcher.evaluate(() => {
        (window as unknown as { notReloaded?: boolean }).notReloaded = true;
      });
      expect(existsSync(stack.workspaceFile(story.taskId, 'build/marker'))).toBe(true);

      // when
      await go(director, `#/approvals/${story.approvalId}`);
      await director.locator('[data-testid=packet-check]').waitFor({ timeout: 30_000 });
      await director.fill('[data-testid=resolution-note]', 'the build is disposable');
      await shot(director, 'approval');
      await director.click('[data-testid=approve]');

      // then: the approval service accepted the director's browser-signed resolution
      await director.locator('[data-testid=resolution-reply]').waitFor({ timeout: 30_000 });
      expect(await director.locator('[data-testid=resolution-reply] [data-status]').getAttribute('data-status')).toBe('granted');
      const granted = await stack.waitForTaskEvent(story.taskId, (event) => event.event_type === 'approval.granted' && event.entity_id === story.approvalId, { timeoutMs: 30_000 });
      expect(granted.payload).toMatchObject({ resolved_by: story.director.principal.id, note: 'the build is disposable' });
      // and the command ran
      expect(await stack.waitForAction(story.destructiveId, { timeoutMs: STEP_MS })).toMatchObject({ status: 'succeeded' });
      expect(existsSync(stack.workspaceFile(story.taskId, 'build/marker'))).toBe(false);
      // and the other tab saw it happen, without a reload
      await watcher.locator('[data-testid=action-status][data-status=succeeded]').waitFor({ timeout: 30_000 });
      expect(await watcher.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
      expect(await watcher.locator('[data-testid=live-mode]').textContent()).toMatch(/live/);
      await shot(watcher, 'action');
      await watcher.close();
    },
    STEP_MS,
  );

  it(
    "given the agent's working state and beliefs on the task, when the director opens its knowledge tab, then they are listed (a secret withheld) with each attempt's context pack and its items",
    async () => {
      // given: a working state revision and a belief, signed by the agent and posted as it posts them
      const agent = story.agent.principal;
      const post = async (kind: 'working-state' | 'beliefs', payload: Record<string, unknown>) => {
        const signer = { principalId: agent.id, key: agent.key, now: new Date() };
        const fields = { task_id: story.taskId, ...payload } as never;
        const { jws } = kind === 'working-state' ? await signRequest(SIGNED_REQUESTS.workingStateRevision, fields, signer) : await signRequest(SIGNED_REQUESTS.beliefRequest, fields, signer);
        const answer = await stack.http(`/v1/tasks/${story.taskId}/${kind}`, { method: 'POST', headers: { authorization: '', 'content-type': 'application/json' }, body: JSON.stringify({ request_jws: jws }) });
        expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 200 });
      };
      await post('working-state', {
        request_id: 'req-console-ws',
        expected_revision: 0,
        set: [
          { key: 'objective.main', kind: 'objective', value: 'keep the build clean' },
          { key: 'handle.deploy', kind: 'resource_handle', value: { secret_ref: 'vault:deploy/token' }, sensitivity: 'secret' },
        ],
        remove: [],
      });
      await post('beliefs', {
        request_id: 'req-console-belief',
        change: { op: 'assert', belief: { belief_id: 'bel-console', claim: 'the build directory is disposable', scope: `task:${story.taskId}`, confidence: 0.7, trust_tier: 'observed', evidence_refs: [{ kind: 'observation', id: 'obs-console' }] } },
      });
      await stack.waitForRoute(`/v1/tasks/${story.taskId}/beliefs`, (status, body) => status === 200 && (body['beliefs'] as unknown[]).length > 0, { as: story.director.principal, timeoutMs: 30_000 });
      // when
      await go(director, `#/tasks/${story.taskId}`);
      await director.click('[data-testid=tab-knowledge]');
      // then: the entries, the secret one withheld, and the belief with its tier
      const entries = director.locator('[data-testid=working-state-entry]');
      await entries.first().waitFor({ timeout: 30_000 });
      expect(await director.locator('[data-testid=working-state-entry][data-key="objective.main"]').textContent()).toContain('keep the build clean');
      const secret = (await director.locator('[data-testid=working-state-entry][data-key="handle.deploy"]').textContent()) ?? '';
      expect(secret).toContain('withheld');
      expect(secret).not.toContain('vault:deploy/token');
      expect(await director.locator('[data-testid=belief][data-belief=bel-console] [data-testid=belief-tier]').textContent()).toContain('observed');
      // and each attempt's context pack, whose items open on demand
      const pack = director.locator('[data-testid=context-pack]').first();
      await pack.waitFor({ timeout: 30_000 });
      await pack.locator('[data-testid=show-pack]').click();
      await pack.locator('[data-testid=pack-items] li').first().waitFor({ timeout: 30_000 });
      expect(await pack.locator('[data-testid=pack-items]').textContent()).toContain('task_contract');
      await shot(director, 'task-knowledge');
      // (back to the default tab: the page keeps its tab while its route stays the same)
      await director.click('[data-testid=tab-explain]');
    },
    STEP_MS,
  );

  it(
    "given the agent's message about its task, when the director opens the agent's conversations, then the focus and the message's text and binding are shown",
    async () => {
      // given: a note the agent signed and posted (the signed body is the credential)
      const agent = story.agent.principal;
      const conversation = uniqueName('conv').replaceAll('_', '-');
      const fields = { message_id: 'm-console', conversation_id: conversation, kind: 'note', text: 'keep the marker file out of the build', explicit_task_ref: story.taskId };
      const { jws } = await signRequest(SIGNED_REQUESTS.ingressMessage, fields as never, { principalId: agent.id, key: agent.key, now: new Date() });
      const sent = await stack.http('/v1/messages', { method: 'POST', headers: { authorization: '', 'content-type': 'application/json' }, body: JSON.stringify({ message_jws: jws }) });
      expect(sent, JSON.stringify(sent.body)).toMatchObject({ status: 200, body: { resolution: 'append_note', task_id: story.taskId } });
      // (the conversation views are not published, so the page reads them once: wait until the binding is folded)
      await stack.waitForRoute(
        `/v1/focus?principal_id=${agent.id}`,
        (status, body) => status === 200 && (body['focus'] as Array<{ conversation_id: string; focus_task_id: string | null }>).some((row) => row.conversation_id === conversation && row.focus_task_id === story.taskId),
        { as: story.director.principal, timeoutMs: 30_000 },
      );
      // when
      await go(director, `#/conversations?of=${encodeURIComponent(agent.id)}`);
      const row = director.locator(`[data-testid=conversation-row][data-conversation="${conversation}"]`);
      await row.waitFor({ timeout: 30_000 });
      // then: the focus is the task, and the conversation shows the message where it was bound
      expect(await row.locator('[data-testid=conversation-focus]').textContent()).toContain(story.taskId);
      await row.locator('a').first().click();
      const message = director.locator('[data-testid=message]').first();
      await message.waitFor({ timeout: 30_000 });
      expect(await message.textContent()).toContain('keep the marker file out of the build');
      expect(await message.locator('[data-testid=message-binding]').textContent()).toContain('append_note');
      await shot(director, 'conversation');
    },
    STEP_MS,
  );

  it(
    "given the task, when its page is opened, then the explain view tells each action's what, why, authority and receipts",
    async () => {
      // when
      await go(director, `#/tasks/${story.taskId}`);
      const approved = director.locator(`[data-testid=story][data-action="${story.destructiveId}"]`);
      await approved.locator('[data-testid=story-status][data-status=succeeded]').waitFor({ timeout: 30_000 });
      // then
      const text = (await approved.textContent()) ?? '';
      expect(text).toContain('rm -rf build');
      expect(text).toContain('require_approval');
      expect(text).toContain(story.approvalId);
      expect(text).toContain(story.director.principal.id);
      expect(text).toContain('deleted build/marker');
      await shot(director, 'task-explain');
      await director.click('[data-testid=tab-timeline]');
      await director.locator('[data-testid=timeline] [data-event="approval.granted"]').waitFor({ timeout: 10_000 });
      await shot(director, 'task-timeline');
      await director.click('[data-testid=tab-receipts]');
      await director.locator('[data-testid=receipt-row]').first().waitFor({ timeout: 10_000 });
      await shot(director, 'task-receipts');
    },
    STEP_MS,
  );

  it(
    'given the receipt of the approved command, when its page verifies it in the browser, then every check passes: signature, chain, and inclusion against the signed tree head',
    async () => {
      // given: the receipt, sequenced in the transparency log
      const { receipt_id: receiptId } = await stack.waitForAction(story.destructiveId, { until: (row) => typeof row.receipt_id === 'string', timeoutMs: 30_000 });
      await waitFor(async () => ((await stack.http(`/v1/receipts/${receiptId}/inclusion-proof`)).status === 200 ? true : undefined), {
        what: 'the receipt in a signed tree head',
        timeoutMs: 60_000,
        intervalMs: 250,
      });
      // when
      await go(director, `#/receipts/${receiptId}`);
      const verdict = director.locator('[data-testid=verdict]');
      await verdict.waitFor({ timeout: 30_000 });
      // then
      expect(await verdict.getAttribute('data-verdict')).toBe('PASS');
      const checks = await director.locator('[data-testid=check]').evaluateAll((rows) => rows.map((row) => [row.getAttribute('data-check'), row.getAttribute('data-result')]));
      expect(Object.fromEntries(checks)).toEqual({
        'receipt.contract': 'pass',
        'receipt.hash': 'pass',
        'receipt.signature': 'pass',
        'receipt.payload': 'pass',
        'receipt.signer': 'pass',
        'receipt.chain': 'pass',
        'tlog.tree_head': 'pass',
        'tlog.leaf': 'pass',
        'tlog.inclusion': 'pass',
      });
      await shot(director, 'receipt-pass');

      // when the same receipt reaches the browser changed on its way (request interception)
      await director.route(`**/v1/receipts/${receiptId}`, async (route) => {
        const answer = await route.fetch();
        const row = (await answer.json()) as { receipt: Record<string, unknown> };
        row.receipt['result_summary'] = 'succeeded: nothing was deleted';
        await route.fulfill({ response: answer, json: row });
      });
      await director.click('[data-testid=verify-again]');
      // then it fails, naming what failed
      await director.locator('[data-testid=verdict][data-verdict=FAIL]').waitFor({ timeout: 30_000 });
      const failed = await director.locator('[data-testid=check][data-result=fail]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-check')));
      expect(failed).toEqual(expect.arrayContaining(['receipt.hash', 'receipt.payload', 'tlog.leaf']));
      expect(await director.locator('[data-testid=check][data-check="receipt.hash"]').textContent()).toContain('RECEIPT_HASH_MISMATCH');
      await shot(director, 'receipt-tampered-fail');
      await director.unroute(`**/v1/receipts/${receiptId}`);
    },
    STEP_MS,
  );

  it(
    'given the cells and participants pages, when opened by the director, then they list the task cell and its seats',
    async () => {
      await go(director, '#/cells');
      await director.locator('[data-testid=cell-row]').first().waitFor({ timeout: 30_000 });
      await shot(director, 'cells');
      await go(director, `#/cells/${story.taskId}`);
      await director.locator('[data-testid=cell]').waitFor({ timeout: 30_000 });
      await shot(director, 'cell');
      await go(director, '#/participants');
      await director.locator('[data-testid=seats]').waitFor({ timeout: 30_000 });
      await shot(director, 'participants');
      await go(director, `#/participants/${story.director.principal.id}`);
      await director.locator('[data-testid=principal]').waitFor({ timeout: 30_000 });
      expect(await director.locator('[data-testid=principal]').textContent()).toContain('director');
      await shot(director, 'participant');
    },
    STEP_MS,
  );

  it(
    "given an agent, when it logs in, then its task list and inbox hold its own work only, and another principal's resource answers with the API's code",
    async () => {
      // given / when
      const agent = await newPage();
      await logIn(agent, story.agent);
      // then: no inbox or cells in its navigation; its task list (GET /v1/tasks, scoped to it) holds its own task only
      expect(await agent.locator('[data-testid=nav-approvals]').count()).toBe(0);
      await agent.locator(`[data-testid=task-row][data-task="${story.taskId}"]`).waitFor({ timeout: 30_000 });
      const listed = await agent.locator('[data-testid=task-row]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-task')));
      for (const taskId of listed) expect((await stack.http(`/v1/tasks/${taskId}`, { as: story.agent.principal })).status).toBe(200);
      await shot(agent, 'agent-tasks');
      // its own task opens
      await go(agent, `#/tasks/${story.taskId}`);
      await agent.locator('[data-testid=task-status]').waitFor({ timeout: 30_000 });
      // the inbox, typed in, lists the approvals of its own tasks only (the API scopes the list)
      await go(agent, '#/approvals');
      await agent.locator('[data-testid=approval-row]').first().waitFor({ timeout: 30_000 });
      // another principal's resource answers as a missing one
      await go(agent, `#/participants/${story.director.principal.id}`);
      await agent.locator('[data-testid=error][data-code=PROJECTION_NOT_FOUND]').waitFor({ timeout: 30_000 });
      await shot(agent, 'agent-forbidden');
      await agent.close();
    },
    STEP_MS,
  );

  it(
    'given a grant the executor has not used yet, when the director revokes it in the UI, then the revocation signed in the browser is recorded and the executor refuses the grant: the command never runs',
    async () => {
      // given: the executor down, an allowed command of the task holds its grant
      await stack.killService('executor');
      let restarted = false;
      try {
        const request = stack.actionRequest(story.agent.principal, {
          task_id: story.taskId,
          target_resources: ['revoked.txt'],
          params: { argv: ['sh', '-c', 'echo ran > revoked.txt'] },
          reason: 'a command the director stops',
        });
        await stack.submit(story.agent.principal, request);
        const authorized = await stack.waitForAction(request.action_request_id, {
          statuses: ['authorized', 'executing'],
          until: (row: { grant_id: string | null }) => row.grant_id !== null,
          timeoutMs: STEP_MS,
        });
        const grantId = String(authorized.grant_id);

        // when: the director revokes it on the task's grants tab
        await go(director, `#/tasks/${story.taskId}`);
        await director.click('[data-testid=tab-grants]');
        const row = director.locator(`[data-testid=grant-row][data-grant="${grantId}"]`);
        await row.locator('[data-testid=revoke]').waitFor({ timeout: 30_000 });
        await row.locator('[data-testid=revoke-reason]').fill('not this command');
        await shot(director, 'grant-revoke');
        await row.locator('[data-testid=revoke]').click();

        // then: the approval service accepted the browser-signed revocation
        await row.locator('[data-testid=revoke-reply] [data-status=revoked]').waitFor({ timeout: 30_000 });
        const revoked = await stack.waitForTaskEvent(story.taskId, (event) => event.event_type === 'grant.revoked' && event.entity_id === grantId, { timeoutMs: 30_000 });
        expect(revoked.payload).toMatchObject({ revoked_by: story.director.principal.id, reason: 'not this command' });

        // and the executor, back, refuses the grant: the action ends without running
        await stack.startService('executor');
        restarted = true;
        const action = await stack.waitForAction(request.action_request_id, { timeoutMs: STEP_MS, until: (row: { receipt_id: string | null }) => row.receipt_id !== null });
        expect(action.status).toBe('failed');
        expect(existsSync(stack.workspaceFile(story.taskId, 'revoked.txt'))).toBe(false);
        const refusal = (await stack.taskEvents(story.taskId)).find((event) => event.event_type === 'grant.refused' && event.entity_id === grantId);
        expect(refusal?.payload).toMatchObject({ code: 'GRANT_REVOKED' });
      } finally {
        if (!restarted) await stack.startService('executor');
      }
    },
    STEP_MS * 2,
  );

  it(
    'given every request the console pages made, when inspected, then none carried a private key: each API call carried a short-lived writ-http+jws bearer token signed in the browser',
    async () => {
      // given
      const api = seen.filter((request) => new URL(request.url).pathname.startsWith('/v1/'));
      expect(api.length).toBeGreaterThan(10);
      // then: neither key's private scalar, nor its JWK, in any URL, header or body
      for (const request of seen) {
        const carried = `${request.url}\n${JSON.stringify(request.headers)}\n${request.body ?? ''}`;
        for (const party of [story.director, story.agent]) {
          expect(carried).not.toContain(party.d);
          expect(carried).not.toContain(party.jwkText);
        }
      }
      // and the bearer tokens are what docs/security.md specifies
      const tokens = api.map((request) => request.headers['authorization']).filter((value): value is string => value !== undefined);
      expect(tokens.length).toBeGreaterThan(10);
      for (const authorization of new Set(tokens)) {
        const [header, claims] = authorization
          .replace(/^Bearer /, '')
          .split('.')
          .slice(0, 2)
          .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>);
        expect(header).toMatchObject({ alg: 'EdDSA', typ: 'writ-http+jws' });
        expect(claims?.['aud']).toBe(`writ-http:${stack.root}`);
        expect(Number(claims?.['exp']) - Number(claims?.['iat'])).toBeLessThanOrEqual(120);
      }
      // and nothing was kept in the page's storage
      expect(await director.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }))).toBe('{}{}');
      await director.close();
    },
    STEP_MS,
  );
});
