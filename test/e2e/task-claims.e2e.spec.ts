import path from 'node:path';
import type { EventEnvelope } from '@writ/contracts';
import { uniqueName } from '@writ/testing';
import { beforeAll, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.mjs';
import { scratchFiles } from './support/scratch-files.js';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * A task made from a brief and closed by its agent's done claim, end to end (docs/task-claims.md):
 * the seven built services on the real NATS, Postgres and Docker; the agent acts only through
 * the `writ` CLI (keygen, principal add, task create, task blocked, task done). Writ runs the
 * brief's verify command itself in the task's cell before it accepts done_clean, audits the
 * files the task changed against its files_owned, and only then completes the task.
 */

const STEP_MS = 120_000;

let stack: Stack;
const scratch = scratchFiles('writ-claims-e2e-');
const file = scratch.file;

beforeAll(async () => {
  stack = await startStack({ prefix: 'e2ec' });
}, 180_000);

stopStackAfterAll(() => stack);

it(
  'given a brief and its first action, when the agent claims done_clean, then Writ verifies it in the cell, audits the scope and completes the task; its question leaves the inbox',
  async () => {
    // given: an agent with its own key, registered through the CLI
    const agent = uniqueName('agent').replaceAll('_', '-');
    const privateJwk = path.join(scratch.dir(), `${agent}.private.jwk.json`);
    const publicJwk = await stack.cli(['principal', 'keygen', '--kid', `${agent}-k1`, '--out', privateJwk]);
    await stack.cli(['principal', 'add', '--id', agent, '--type', 'agent', '--role', 'executor', '--jwk', await file(`${agent}.public.jwk.json`, publicJwk.trim())]);
    const brief = {
      id: uniqueName('brief'),
      mission: 'Write the greeting.',
      purpose: 'The app greets its users.',
      context: {},
      whats_done: [],
      current_task: 'src/greeting.txt holds "hello"',
      done_criteria: 'src/greeting.txt holds exactly "hello"',
      verify_command: ['sh', '-c', 'test "$(cat src/greeting.txt)" = hello'],
      key_decisions: [],
      spec: { scope: { files_owned: ['src/**'] } },
      relevant_memories: [],
      ship: false,
      audit_gates: [],
      lifecycle: 'ephemeral',
    };
    const firstAction = {
      action_request_id: uniqueName('ar'),
      step: { kind: 'edit', title: 'write the greeting' },
      action_class: 'execute_command',
      target_resources: ['src/greeting.txt'],
      params: { argv: ['sh', '-c', 'mkdir -p src && echo hello > src/greeting.txt'] },
      expected_effects: ['src/greeting.txt holds hello'],
      reversibility_hint: 'reversible',
      reason: 'the brief asks for the greeting',
    };
    const keyArgs = ['--key', privateJwk, '--principal', agent];

    // when: the task is created from the brief
    const created = JSON.parse(await stack.cli(['task', 'create', '--brief', await file('brief.json', brief), '--action', await file('action.json', firstAction), ...keyArgs, '--json'])) as {
      task_id: string;
      status: string;
    };
    expect(created.status).toBe('accepted');
    const taskId = created.task_id;
    const taskCreated = (await stack.taskEvents(taskId)).find((event) => event.event_type === 'task.created');
    expect(taskCreated?.payload).toMatchObject({ files_owned: ['src/**'], brief: { id: brief.id } });
    expect(String(taskCreated?.payload['task_contract_ref'])).toMatch(/^brief:sha256:/);
    const first = await stack.waitForAction(firstAction.action_request_id, { timeoutMs: STEP_MS });
    expect(first.status).toBe('succeeded');
    // a briefed task does not complete with its steps: absence of done.json is not success
    expect((await stack.taskEvents(taskId)).map((event) => event.event_type)).not.toContain('task.completed');

    // a legal block whose fallback (the first action) ran: its question is in the approval inbox
    const blocked = {
      session: agent,
      blocked_at: new Date().toISOString(),
      reason: 'semantic_ambiguity',
      question: 'The brief says "greeting" and the mock-up shows "Hello!"; which text is meant?',
      best_guess: 'hello, as the done criteria say',
      fallback_action: 'Writing "hello", the text the done criteria check.',
      fallback_action_request_id: firstAction.action_request_id,
      can_resume_without_answer: true,
      human_required_for: null,
    };
    const block = JSON.parse(await stack.cli(['task', 'blocked', taskId, await file('blocked.json', blocked), ...keyArgs, '--json'])) as { status: string; question_id: string };
    expect(block.status).toBe('accepted');
    const inbox = await waitForRow(`/v1/approvals/${block.question_id}`, (row) => row.status === 'pending');
    expect(inbox.packet).toMatchObject({ kind: 'question', question: blocked.question });

    // the agent claims done_clean; the CLI follows the verdict while Writ runs the verify command
    const done = {
      agent,
      status: 'done_clean',
      started_at: new Date(Date.now() - 60_000).toISOString(),
      finished_at: new Date().toISOString(),
      mission: brief.mission,
      evidence: { verify_command: brief.verify_command, verify_exit_code: 0, verify_stdout: '', verify_stderr: '', artefacts: [] },
      regressions: [],
      pending_actions: [],
    };
    const verdict = JSON.parse(await stack.cli(['task', 'done', taskId, await file('done.json', done), ...keyArgs, '--wait', '110', '--json'])) as {
      status: string;
      verify_action_request_id: string;
    };

    // then
    expect(verdict.status).toBe('accepted');
    const verifyRun = await stack.waitForAction(verdict.verify_action_request_id, { timeoutMs: STEP_MS });
    expect(verifyRun.status).toBe('succeeded');
    await stack.waitForTaskEvent(taskId, (event) => event.event_type === 'task.completed', { what: 'task.completed', timeoutMs: STEP_MS });
    const log = await stack.taskEvents(taskId);
    const byType = (type: string): EventEnvelope | undefined => log.find((event) => event.event_type === type);
    expect(byType('claim.done_accepted')?.payload).toMatchObject({ status: 'done_clean', verification: { status: 'observed', exit_code: 0 } });
    expect(byType('audit.file_ownership_passed')?.payload).toMatchObject({ modified_not_owned: [], sacred_modified: [] });
    // the verify run is receipted like any action
    expect(log.some((event) => event.event_type === 'receipt.issued' && event.attempt_id === byType('claim.done_verification_requested')?.payload['attempt_id'])).toBe(true);
    // the question leaves the inbox with the task
    await waitForRow(`/v1/approvals/${block.question_id}`, (row) => row.status === 'cancelled');
  },
  STEP_MS * 3,
);

/** Polls a projection route until its row matches. */
async function waitForRow(route: string, until: (row: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  const deadline = Date.now() + STEP_MS;
  for (;;) {
    const answer = await stack.http(route);
    if (answer.status === 200 && until(answer.body)) return answer.body;
    if (Date.now() > deadline) throw new Error(`${route} did not reach the expected row: ${JSON.stringify(answer.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
