import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, type CliIo } from '../main.js';

// The checks `writ task create|done|blocked` make before anything is signed or sent:
// NATS points at a closed port, so a command that got past them would fail CLI_NATS_UNREACHABLE instead.
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'writ-task-claims-'));
  await writeFile(join(dir, 'key.json'), '{}');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writ(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env: { WRIT_NATS_URL: 'nats://127.0.0.1:1' }, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => new Date() };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

async function file(name: string, content: unknown): Promise<string> {
  await writeFile(join(dir, name), JSON.stringify(content));
  return name;
}

const BRIEF = {
  id: 'brief-1',
  mission: 'Write the greeting.',
  purpose: '',
  context: {},
  whats_done: [],
  current_task: '',
  done_criteria: 'src/greeting.txt says hello',
  verify_command: ['sh', 'verify.sh'],
  key_decisions: [],
  spec: { scope: { files_owned: ['src/**'] } },
  relevant_memories: [],
  ship: false,
  audit_gates: [],
  lifecycle: 'ephemeral',
};
const ACTION = { action_request_id: 'ar-1', action_class: 'read_local', target_resources: ['src/a.ts'], params: { path: 'src/a.ts' }, expected_effects: [], reversibility_hint: 'reversible', reason: 'look' };
const KEY = ['--key', 'key.json', '--principal', 'agent-1'];

describe('writ task create|done|blocked: refused before anything is sent', () => {
  it('given a brief missing three sections, when creating a task, then CONTRACT_INVALID names each of them', async () => {
    const { done_criteria: _d, spec: _s, lifecycle: _l, ...partial } = BRIEF;
    const result = await writ(['task', 'create', '--brief', await file('partial.json', partial), '--action', await file('a.json', ACTION), ...KEY]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CONTRACT_INVALID: /);
    for (const section of ['done_criteria', 'spec', 'lifecycle']) expect(result.stderr).toContain(`${section}:`);
  });

  it('given a first action that names a task_id, when creating a task, then CLI_USAGE: the task is made from the brief', async () => {
    const result = await writ(['task', 'create', '--brief', await file('brief.json', BRIEF), '--action', await file('b.json', { ...ACTION, task_id: 'tsk-1' }), ...KEY]);
    expect(result).toMatchObject({ code: 2 });
    expect(result.stderr).toMatch(/^error CLI_USAGE: /);
  });

  it('given a first action that carries its own task spec, when creating a task, then CLI_USAGE: the task spec comes from the brief', async () => {
    const result = await writ(['task', 'create', '--brief', await file('brief2.json', BRIEF), '--action', await file('c.json', { ...ACTION, task: { title: 't' } }), ...KEY]);
    expect(result.stderr).toMatch(/^error CLI_USAGE: /);
  });

  it('given a done.json whose status is not one of seed 003, when claimed, then CONTRACT_INVALID before signing', async () => {
    const done = { agent: 'a', status: 'done_with_concerns', started_at: '2030-01-01T00:00:00Z', finished_at: '2030-01-01T00:00:01Z', mission: 'm', evidence: {}, regressions: [], pending_actions: [] };
    const result = await writ(['task', 'done', 'tsk-1', await file('done.json', done), ...KEY]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CONTRACT_INVALID: DoneClaim is invalid/);
  });

  it('given a blocked.json without can_resume_without_answer, when claimed, then CONTRACT_INVALID', async () => {
    const blocked = { session: 's', blocked_at: '2030-01-01T00:00:00Z', reason: 'credential_missing', question: 'q', best_guess: 'g', fallback_action: 'f', human_required_for: null };
    const result = await writ(['task', 'blocked', 'tsk-1', await file('blocked.json', blocked), ...KEY]);
    expect(result.stderr).toMatch(/^error CONTRACT_INVALID: BlockedClaim is invalid: can_resume_without_answer/);
  });

  it('given `writ task --help`, then create, done, blocked and correct are listed beside showing a task', async () => {
    const result = await writ(['task', '--help']);
    expect(result.code).toBe(0);
    for (const command of ['create', 'done', 'blocked', 'correct']) expect(result.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
  });
});
