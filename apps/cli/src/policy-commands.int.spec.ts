import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ActionRequest, EventDraft, PrincipalRole, PublicEd25519Jwk } from '@writ/contracts';
import { registerInLog } from '../test/principal.fixture.js';
import { EventStore } from '@writ/eventstore';
import { connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { stringify as toYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, type CliIo, type SimulationReport } from './main.js';
import { ServiceProcess, operatorEnv } from '../test/service-process.fixture.js';

/**
 * `writ policy apply|list|show|simulate` against the real NATS and the BUILT
 * policy service (services/policy/dist/main.js, started as a child process on
 * this test's own subject root, streams and bucket; build it first:
 * `npx nx run @writ/policy:build`). The director is registered as an operator's registration is recorded.
 */

const MiB = 1024 ** 2;

let nc: NatsConnection;
let store: EventStore;
let dir: string;
let service: ServiceProcess | undefined;
const root = uniqueName('t');
const streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
const bucket = uniqueName('POL');
const env = { ...operatorEnv(), WRIT_SUBJECT_ROOT: root, WRIT_EVENTS_STREAM: streams.events, WRIT_NATS_URL: process.env['WRIT_NATS_URL'] ?? 'nats://127.0.0.1:4223', WRIT_POLICY_BUCKET: bucket };

/** Runs `writ <argv>` in process, capturing its output. */
async function writ(argv: string[], overrides: Partial<Record<string, string>> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env: { ...env, ...overrides }, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => new Date() };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** A principal with a key from `writ principal keygen`, registered as an operator's registration is recorded. */
async function principal(role: PrincipalRole): Promise<{ id: string; key: string }> {
  const id = uniqueName(role).replaceAll('_', '-');
  const key = join(dir, `${id}.private.json`);
  const keygen = await writ(['principal', 'keygen', '--kid', `${id}-k1`, '--out', key]);
  expect(keygen.code).toBe(0);
  await registerInLog(store, { id, type: 'user', roles: [role], jwk: JSON.parse(keygen.stdout) as PublicEd25519Jwk });
  return { id, key };
}

beforeAll(async () => {
  nc = await connectTestNats('cli-policy-test');
  store = await EventStore.open(nc, { stream: streams.events, subjectPrefix: `${root}.evt`, maxBytes: 64 * MiB });
  dir = await mkdtemp(join(tmpdir(), 'writ-cli-policy-'));
  service = ServiceProcess.start(
    'policy',
    {
      ...env,
      WRIT_INGRESS_STREAM: streams.ingress,
      WRIT_COMMANDS_STREAM: streams.commands,
      WRIT_DLQ_STREAM: streams.dlq,
      WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
      WRIT_BUS_MAX_BYTES: String(8 * MiB),
      WRIT_POLICY_BUCKET_MAX_BYTES: String(8 * MiB),
      WRIT_BUS_PULL_EXPIRES_MS: '1000',
    },
    join(dir, 'policy.log'),
  );
  // Ready once it answers a dry run (the profiles are loaded before it listens).
  await waitFor(
    async () => {
      service?.assertRunning();
      const reply = await nc.request(`${root}.qry.policy.evaluate`, '{}', { timeout: 1_000 }).catch(() => undefined);
      return reply === undefined ? undefined : true;
    },
    { what: 'the policy service to answer', timeoutMs: 30_000, intervalMs: 100 },
  );
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await deleteStreams(nc, ...Object.values(streams), `KV_${bucket}`);
  await nc.close();
  await rm(dir, { recursive: true, force: true });
});

const profileDoc = (id: string, destructive: 'require_approval' | 'deny') => ({
  id,
  description: 'Commands in the workspace.',
  action_classes: { read_local: { outcome: 'allow' }, execute_command: { outcome: 'allow' } },
  destructive_commands: destructive,
});

describe('writ policy apply', () => {
  it('given an invalid file, then it prints every problem as path: message, exits 1 and sends nothing', async () => {
    const id = uniqueName('bad').toLowerCase();
    const file = join(dir, `${id}.yaml`);
    await writeFile(file, toYaml({ id, description: '', action_classes: { teleport: { outcome: 'allow' } }, destructive_commands: 'sometimes', version: '7' }));
    const director = await principal('director');
    const result = await writ(['policy', 'apply', file, '--key', director.key, '--principal', director.id]);
    expect(result.code).toBe(1);
    const lines = result.stderr.split('\n');
    for (const path of ['description', 'destructive_commands', 'version']) expect(lines.some((line) => line.startsWith(`${path}: `))).toBe(true);
    expect(lines.some((line) => line.startsWith('action_classes'))).toBe(true);
    expect(lines.at(-1)).toMatch(/^error POLICY_PROFILE_INVALID: /);
    expect(await store.readEntity('policy', id)).toEqual([]);
  });

  it('given a valid file and no --key, then it is validated, CLI_KEY_REQUIRED names the version, and nothing is sent', async () => {
    const id = uniqueName('check').toLowerCase();
    const file = join(dir, `${id}.yaml`);
    await writeFile(file, toYaml(profileDoc(id, 'deny')));
    const result = await writ(['policy', 'apply', file]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/^error CLI_KEY_REQUIRED: .*sha256:[0-9a-f]{64}/m);
    expect(await store.readEntity('policy', id)).toEqual([]);
  });

  it('given a director, then a YAML profile is applied, listed and shown; re-applying what show --yaml prints is unchanged', async () => {
    const director = await principal('director');
    const id = uniqueName('team').toLowerCase();
    const file = join(dir, `${id}.yaml`);
    await writeFile(file, toYaml(profileDoc(id, 'deny')));

    const applied = await writ(['policy', 'apply', file, '--key', director.key, '--principal', director.id]);
    expect(applied).toMatchObject({ code: 0, stderr: '' });
    expect(applied.stdout).toMatch(new RegExp(`^applied ${id} sha256:[0-9a-f]{64} \\(was none\\)$`));
    const version = applied.stdout.split(' ')[2];

    const listed = await writ(['policy', 'list', '--json']);
    expect(JSON.parse(listed.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ profile_id: id, version, applied_by: director.id })]));
    expect((await writ(['policy', 'list'])).stdout).toContain(id);

    const shown = await writ(['policy', 'show', id, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ profile_id: id, version, applied_by: director.id, previous_version: null });
    const yaml = await writ(['policy', 'show', id, '--yaml']);
    const roundTrip = join(dir, `${id}.shown.yaml`);
    await writeFile(roundTrip, yaml.stdout);
    expect((await writ(['policy', 'apply', roundTrip, '--key', director.key, '--principal', director.id])).stdout).toBe(`unchanged ${id} ${version}`);
    expect(await store.readEntity('policy', id)).toHaveLength(1);
  });

  it('given an observer, then the policy service refuses it: exit 1 with POLICY_APPLY_FORBIDDEN', async () => {
    const observer = await principal('observer');
    const file = join(dir, 'observer.json');
    const id = uniqueName('obs').toLowerCase();
    await writeFile(file, JSON.stringify(profileDoc(id, 'deny')));
    const result = await writ(['policy', 'apply', file, '--key', observer.key, '--principal', observer.id]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error POLICY_APPLY_FORBIDDEN: /);
    expect(await store.readEntity('policy', id)).toEqual([]);
  });

  it('given an unknown id, then show exits 1 with CLI_POLICY_NOT_FOUND', async () => {
    expect((await writ(['policy', 'show', 'no_such_profile'])).stderr).toMatch(/^error CLI_POLICY_NOT_FOUND: /);
  });
});

describe('writ policy simulate', () => {
  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

  function event(taskId: string, n: number, type: string, entity: Pick<EventDraft, 'entity_type' | 'entity_id' | 'attempt_id'>, payload: Record<string, unknown>, at: string): EventDraft {
    return {
      event_id: `${taskId}-${n}`,
      schema_version: 1,
      event_type: type,
      ...entity,
      occurred_at: at,
      actor_type: 'service',
      actor_id: 'writ-test',
      payload,
      causation_id: null,
      correlation_id: taskId,
      idempotency_key: `${taskId}:${n}`,
    };
  }

  /** A task that asked to run `argv` under `profile`, and the outcome policy recorded (null: none yet). */
  async function recordedTask(profile: string, argv: string[], recorded: { outcome: string; rule: string } | null, at: string): Promise<string> {
    const taskId = uniqueName('tsk').replaceAll('_', '-');
    const attemptId = `att-${taskId}`;
    const request = {
      action_request_id: `ar-${taskId}`,
      task_id: taskId,
      action_class: 'execute_command',
      target_resources: ['build'],
      params: { argv },
      expected_effects: [],
      reversibility_hint: 'reversible',
      reason: 'The task asks for it.',
      proposed_by: 'agent-1',
      proposed_at: at,
    } as unknown as ActionRequest;
    const drafts = [
      event(taskId, 1, 'task.created', { entity_type: 'task', entity_id: taskId }, { task_id: taskId, policy_profile_ref: profile, files_owned: ['**'], at }, at),
      event(taskId, 2, 'attempt.awaiting_policy', { entity_type: 'attempt', entity_id: attemptId, attempt_id: attemptId }, { action_request: request, at }, at),
    ];
    if (recorded !== null) {
      drafts.push(
        event(taskId, 3, 'policy.evaluated', { entity_type: 'decision', entity_id: `dec-${taskId}`, attempt_id: attemptId }, {
          policy_result: { attempt_id: attemptId, action_request_id: request.action_request_id, outcome: recorded.outcome, matched_rules: [recorded.rule], policy_version: 'sha256:' + '0'.repeat(64) },
        }, at),
      );
    }
    await store.append(taskId, drafts, 0);
    return taskId;
  }

  it('given a recorded log, then it reports exactly the decisions the candidate would change, and appends nothing', async () => {
    // given three tasks under the profile and one under another, in the window, and one under the profile before it
    const profile = uniqueName('sim').toLowerCase();
    const other = uniqueName('other').toLowerCase();
    const rm = await recordedTask(profile, ['rm', '-rf', 'build'], { outcome: 'require_approval', rule: 'destructive_command' }, minutesAgo(10));
    await recordedTask(profile, ['sh', '-c', 'echo hello > out.txt'], { outcome: 'allow', rule: 'action_class_allowed' }, minutesAgo(9));
    await recordedTask(profile, ['rm', '-rf', 'build'], null, minutesAgo(8));
    await recordedTask(other, ['rm', '-rf', 'build'], { outcome: 'require_approval', rule: 'destructive_command' }, minutesAgo(7));
    await recordedTask(profile, ['rm', '-rf', 'dist'], { outcome: 'require_approval', rule: 'destructive_command' }, minutesAgo(180));
    const candidate = join(dir, `${profile}.candidate.yaml`);
    await writeFile(candidate, toYaml(profileDoc(profile, 'deny')));
    const before = (await (await jetstreamManager(nc)).streams.info(streams.events)).state.last_seq;

    // when the candidate (destructive commands denied) is simulated over the last hour
    const result = await writ(['policy', 'simulate', '--profile', candidate, '--since', '1h', '--json']);

    // then only the recorded rm -rf of the profile changes, from require_approval to deny
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(result.stdout) as SimulationReport;
    expect(report).toMatchObject({ profile_id: profile, evaluated: 3, unchanged: 1, changed: 1, unrecorded: 1, by_transition: { 'require_approval → deny': 1 } });
    expect(report.changes).toEqual([
      expect.objectContaining({ task_id: rm, action_request_id: `ar-${rm}`, action_class: 'execute_command', was: 'require_approval', would_be: 'deny', rule: 'destructive_command' }),
    ]);
    expect(report.skipped).toBeGreaterThanOrEqual(1);
    expect((await (await jetstreamManager(nc)).streams.info(streams.events)).state.last_seq).toBe(before);

    // and with --all-tasks the other profile's task is judged by the candidate too
    const all = JSON.parse((await writ(['policy', 'simulate', '--profile', candidate, '--since', '1h', '--all-tasks', '--json'])).stdout) as SimulationReport;
    expect(all.changes.map((change) => change.task_id)).toEqual(expect.arrayContaining([rm]));
    expect(all.changes.filter((change) => change.would_be === 'deny').length).toBeGreaterThanOrEqual(2);

    // and the human report names the change and the summary
    const text = await writ(['policy', 'simulate', '--profile', candidate, '--since', '1h']);
    expect(text.stdout).toContain(`require_approval → deny`);
    expect(text.stdout).toContain('evaluated 3, unchanged 1, changed 1');
  });

  it('given an invalid --since, then it exits 2 with CLI_USAGE', async () => {
    const candidate = join(dir, 'usage.yaml');
    await writeFile(candidate, toYaml(profileDoc('usage_profile', 'deny')));
    const result = await writ(['policy', 'simulate', '--profile', candidate, '--since', 'yesterday-ish']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error CLI_USAGE: /);
  });
});
