import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { OutcomeResolution } from '@writ/contracts';
import { importEd25519PublicJwk, verifyJws } from '@writ/crypto';
import { NATS_URL, connectTestNats, uniqueName } from '@writ/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { run, type CliIo } from './main.js';
import { operatorEnv } from '../test/service-process.fixture.js';

// `writ action resolve` against the real NATS on a test-unique subject root. A stand-in
// answers `<root>.qry.executor.resolve-outcome` (the CLI never imports a service): it checks
// what the CLI signed and replies as the executor does, success or a refusal code.

const NOW = new Date('2031-05-01T12:30:00.000Z');
const root = uniqueName('t');
let nc: NatsConnection;
let dir: string;
let director: { privateFile: string; publicJwk: Record<string, unknown> };
const subscriptions: Subscription[] = [];

async function writ(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env: { ...operatorEnv(), WRIT_NATS_URL: NATS_URL, WRIT_SUBJECT_ROOT: root }, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => NOW };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

function standIn(answer: (request: Record<string, unknown>) => Promise<Record<string, unknown>>): { seen: Record<string, unknown>[] } {
  const sub = nc.subscribe(`${root}.qry.executor.resolve-outcome`);
  subscriptions.push(sub);
  const state = { seen: [] as Record<string, unknown>[] };
  void (async () => {
    for await (const msg of sub as AsyncIterable<Msg>) {
      const request = msg.json<Record<string, unknown>>();
      state.seen.push(request);
      const reply = await answer(request);
      if (typeof reply['code'] === 'string') {
        const headers = natsHeaders();
        headers.set('Writ-Error-Code', reply['code']);
        msg.respond(JSON.stringify(reply), { headers });
      } else {
        msg.respond(JSON.stringify(reply));
      }
    }
  })();
  return state;
}

beforeAll(async () => {
  nc = await connectTestNats('cli-action-resolve');
  dir = await mkdtemp(join(tmpdir(), 'writ-cli-resolve-'));
  const privateFile = join(dir, 'director.private.json');
  const keygen = await writ(['principal', 'keygen', '--kid', 'director-k1', '--out', privateFile]);
  expect(keygen.code).toBe(0);
  director = { privateFile, publicJwk: JSON.parse(keygen.stdout) as Record<string, unknown> };
});

afterEach(() => {
  for (const sub of subscriptions.splice(0)) sub.unsubscribe();
});

afterAll(async () => {
  await nc.close();
  await rm(dir, { recursive: true, force: true });
});

describe('writ action resolve', () => {
  it('given an attempt with an unknown outcome, when a director resolves it, then a signed OutcomeResolution reaches the executor and its reply is printed', async () => {
    const service = standIn(async (request) => {
      const { payload } = await verifyJws(String(request['resolution_jws']), await importEd25519PublicJwk(director.publicJwk));
      const resolution = OutcomeResolution.parse(JSON.parse(new TextDecoder().decode(payload)));
      return { task_id: resolution.task_id, attempt_id: resolution.attempt_id, status: 'resolved', outcome: resolution.outcome, resolved_by: resolution.resolved_by, resolved_at: NOW.toISOString(), event_id: 'exr-1' };
    });
    const result = await writ(['action', 'resolve', 'att-1', '--task', 'task-1', '--outcome', 'failed', '--note', 'the file is not on the server', '--key', director.privateFile, '--principal', 'director-1']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`resolved att-1 (task task-1) as failed by director-1 at ${NOW.toISOString()}`);
    expect(service.seen).toHaveLength(1);
    expect(service.seen[0]).toMatchObject({ task_id: 'task-1', attempt_id: 'att-1' });
    const { payload } = await verifyJws(String(service.seen[0]?.['resolution_jws']), await importEd25519PublicJwk(director.publicJwk));
    expect(JSON.parse(new TextDecoder().decode(payload))).toEqual({
      task_id: 'task-1',
      attempt_id: 'att-1',
      outcome: 'failed',
      note: 'the file is not on the server',
      resolved_by: 'director-1',
      resolved_at: NOW.toISOString(),
    });
  });

  it("given the executor refuses, then it exits 1 with the executor's code", async () => {
    standIn(async () => ({ code: 'EXECUTOR_OUTCOME_NOT_UNKNOWN', message: 'the execution of attempt att-2 has outcome completed' }));
    const result = await writ(['action', 'resolve', 'att-2', '--task', 'task-2', '--outcome', 'succeeded', '--note', 'n', '--key', director.privateFile, '--principal', 'director-1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error EXECUTOR_OUTCOME_NOT_UNKNOWN: /);
  });

  it('given an outcome other than succeeded or failed, then it is a usage error and nothing is sent', async () => {
    const service = standIn(async () => ({ code: 'UNEXPECTED', message: 'should not be asked' }));
    const result = await writ(['action', 'resolve', 'att-3', '--task', 'task-3', '--outcome', 'unknown', '--note', 'n', '--key', director.privateFile, '--principal', 'director-1']);
    expect(result.code).toBe(2);
    expect(service.seen).toEqual([]);
  });
});
