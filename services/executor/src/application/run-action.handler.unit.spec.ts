import { ExecutionCompleted, hasErrorCode, type EventDraft, type RunAction } from '@writ/contracts';
import { KeySet, generateEd25519Key, sha256Hex, type Ed25519SigningKey } from '@writ/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { HANDLER_SETTINGS, IDS, T0, sampleRequest, sampleRunAction, signSampleGrant } from '../../test/grants.js';
import { MemoryTaskLog } from '../../test/memory-log.js';
import type { CellExecResult, WorkspaceSnapshot } from '../outbound/cells/index.js';
import { useIdFor } from './event-drafts.js';
import { ExecutorError } from './executor-errors.js';
import type { ArtifactStore, CellPort, CellSessions } from './ports.js';
import { RunActionHandler, type RunActionSettings } from './run-action.handler.js';

/**
 * The handler's decisions against an in-memory log and a scripted cell (the
 * real event store, NATS and Docker are exercised in executor.int.spec.ts).
 * Time is a counter the fake sleep advances: no timers, no real waiting.
 */

const SETTINGS: RunActionSettings = HANDLER_SETTINGS;

let key: Ed25519SigningKey;
beforeAll(async () => {
  key = await generateEd25519Key({ kid: 'approval-k1' });
});

const untouchable = new Proxy({} as CellPort & ArtifactStore, {
  get: (_target, name) => () => Promise.reject(new Error(`${String(name)} must not be called: nothing may run here`)),
});

/** A cell that runs nothing but reports an exit code, an empty workspace before, and one file after. */
function scriptedCell(calls: string[]): CellPort {
  const empty: WorkspaceSnapshot = { entries: new Map(), skipped: [] };
  const after: WorkspaceSnapshot = { entries: new Map([['out.txt', { kind: 'file', sha256: sha256Hex('hello\n'), size: 6, mode: 0o644 }]]), skipped: [] };
  let snapshots = 0;
  const result: CellExecResult = {
    exit_code: 0,
    stdout: Buffer.from('ok\n'),
    stderr: Buffer.alloc(0),
    stdout_truncated: false,
    stderr_truncated: false,
    stdout_bytes: 3,
    stderr_bytes: 0,
    timed_out: false,
    duration_ms: 12,
  };
  return {
    ensureImage: async () => ({ image: 'writ/cell:latest', image_id: 'sha256:img', repo_digests: [], inputs_hash: undefined }),
    openCell: async (taskId) => {
      calls.push('openCell');
      return { task_id: taskId, container_id: 'c1', container_name: 'n', image: 'writ/cell:latest', image_id: 'sha256:img', workspace_dir: '/x', spec_sha256: 's', reused: false };
    },
    snapshotWorkspace: async () => ((snapshots += 1) === 1 ? empty : after),
    exec: async (_taskId, options) => {
      calls.push(`exec ${options.argv.join(' ')}`);
      return result;
    },
    environment: async (taskId) => ({
      task_id: taskId,
      container_id: 'c1',
      running: true,
      image: 'writ/cell:latest',
      image_id: 'sha256:img',
      spec_sha256: 's',
      network_mode: 'none',
      readonly_rootfs: true,
      privileged: false,
      cap_drop: ['ALL'],
      cap_add: [],
      security_opt: ['no-new-privileges'],
      user: '10001:10001',
      memory: 268_435_456,
      memory_swap: 268_435_456,
      pids_limit: 128,
      nano_cpus: 1_000_000_000,
      ipc_mode: 'private',
      tmpfs: { '/tmp': 'rw,noexec' },
      mounts: [{ type: 'bind', source: '/var/lib/writ/cells/task-1/workspace', destination: '/workspace', rw: true, propagation: 'rprivate' }],
      env_names: ['PATH', 'HOME', 'LANG'],
    }),
    assertPlainPath: async () => undefined,
    readChangedFile: async () => Buffer.from('hello\n'),
  };
}

function memoryArtifacts(): ArtifactStore & { stored: Map<string, Uint8Array> } {
  const stored = new Map<string, Uint8Array>();
  return {
    stored,
    put: async (bytes) => {
      const sha256 = sha256Hex(bytes);
      stored.set(sha256, bytes);
      return { sha256, uri: `nats-obj://WRIT_ARTIFACTS/sha256-${sha256}`, byte_size: bytes.byteLength };
    },
    get: async (sha256) => stored.get(sha256) ?? null,
  };
}

function rig(options: { cells?: CellPort; artifacts?: ArtifactStore; onSleep?: (now: number) => void; start?: number; cellSessions?: CellSessions; unauthorized?: string } = {}) {
  const log = new MemoryTaskLog();
  let now = options.start ?? T0.getTime() + 60_000;
  const handler = new RunActionHandler(
    {
      log,
      keys: { verificationKeys: async () => KeySet.of([key]), unauthorized: async () => options.unauthorized },
      cells: options.cells ?? untouchable,
      artifacts: options.artifacts ?? untouchable,
      ...(options.cellSessions === undefined ? {} : { cellSessions: options.cellSessions }),
      clock: () => new Date(now),
      sleep: async (ms) => {
        now += ms;
        options.onSleep?.(now);
      },
    },
    SETTINGS,
  );
  return { log, handler, now: () => now };
}

function claimByAnotherProcess(useId: string, at: Date): EventDraft {
  return {
    event_id: `${useId}-claimed`,
    schema_version: 1,
    event_type: 'grant.use_claimed',
    entity_type: 'grant',
    entity_id: 'grant-1',
    occurred_at: at.toISOString(),
    actor_type: 'service',
    actor_id: 'writ-executor',
    payload: { use_id: useId, use_no: 1, task_id: IDS.task_id, attempt_id: IDS.attempt_id, action_class: 'execute_command', at: at.toISOString() },
    causation_id: useId,
    correlation_id: IDS.task_id,
    idempotency_key: `${useId}:grant.use_claimed`,
  };
}

describe('RunActionHandler: a use claimed but not completed is never run again (Hermit 19.3, 19.4)', () => {
  it('given another process claimed the use a moment ago, when its completion appears while we wait, then nothing is appended and nothing runs', async () => {
    const command = sampleRunAction(await signSampleGrant(key));
    const useId = useIdFor(command);
    let sleeps = 0;
    const { log, handler, now } = rig({
      onSleep: () => {
        sleeps += 1;
        if (sleeps === 2) {
          log.push(IDS.task_id, { ...claimByAnotherProcess(useId, new Date(now())), event_id: 'done', event_type: 'execution.completed', entity_type: 'attempt', entity_id: IDS.attempt_id, payload: { grant_id: 'grant-1', use_no: 1, outcome: 'completed' }, idempotency_key: `${useId}:execution.completed` });
        }
      },
    });
    log.push(IDS.task_id, claimByAnotherProcess(useId, new Date(now())));

    expect(await handler.handle(command)).toEqual({ status: 'already-done', reason: 'completed' });
    expect((await log.read(IDS.task_id)).map((event) => event.event_type)).toEqual(['grant.use_claimed', 'execution.completed']);
  });

  it('given a claim and no completion, when the use deadline passes (the grant timeout, host grace, claim grace), then execution.completed outcome unknown, caused by the claim', async () => {
    const command = sampleRunAction(await signSampleGrant(key, { claims: { constraints: { timeout_ms: 5_000 } } }));
    const useId = useIdFor(command);
    const { log, handler, now } = rig();
    const claimedAt = new Date(now());
    log.push(IDS.task_id, claimByAnotherProcess(useId, claimedAt));

    expect(await handler.handle(command)).toEqual({ status: 'unknown-recorded', use_no: 1 });
    expect(now() - claimedAt.getTime()).toBe(5_000 + SETTINGS.hostGraceMs + SETTINGS.claimGraceMs);
    const completed = (await log.read(IDS.task_id)).at(-1);
    expect(completed).toMatchObject({ event_type: 'execution.completed', entity_type: 'attempt', entity_id: IDS.attempt_id, causation_id: `${useId}-claimed`, idempotency_key: `${useId}:execution.completed` });
    expect(ExecutionCompleted.parse(completed?.payload)).toMatchObject({ outcome: 'unknown', exit_code: null, error: { code: 'EXECUTOR_OUTCOME_UNKNOWN' }, executor_id: 'executor-unit' });

    // delivered once more: settled, nothing new
    expect(await handler.handle(command)).toEqual({ status: 'already-done', reason: 'completed' });
    expect(await log.read(IDS.task_id)).toHaveLength(2);
  });

  it('given the service is stopping while it waits on a claim held elsewhere, then the delivery is handed back (EXECUTOR_NOT_READY), nothing appended', async () => {
    const command = sampleRunAction(await signSampleGrant(key));
    const { log, handler, now } = rig();
    log.push(IDS.task_id, claimByAnotherProcess(useIdFor(command), new Date(now())));
    handler.stop();
    await expect(handler.handle(command)).rejects.toSatisfy((error) => hasErrorCode(error, 'EXECUTOR_NOT_READY'));
    expect(await log.read(IDS.task_id)).toHaveLength(1);
  });
});

describe('RunActionHandler: verify, claim through the log, run, record', () => {
  it('given an expired grant, then grant.refused GRANT_EXPIRED; delivered again, nothing new', async () => {
    const command = sampleRunAction(await signSampleGrant(key));
    const { log, handler } = rig({ start: T0.getTime() + 3_600_000 });
    expect(await handler.handle(command)).toEqual({ status: 'refused', code: 'GRANT_EXPIRED' });
    expect(await handler.handle(command)).toEqual({ status: 'already-done', reason: 'refused' });
    const stream = await log.read(IDS.task_id);
    expect(stream.map((event) => [event.event_type, event.payload['code']])).toEqual([['grant.refused', 'GRANT_EXPIRED']]);
  });

  it('given a grant signed by an issuer key whose registration does not chain to the trust anchor, then grant.refused GRANT_ISSUER_UNAUTHORIZED and no cell is touched', async () => {
    const command = sampleRunAction(await signSampleGrant(key));
    // `untouchable` cells and artifacts throw on any use: nothing runs.
    const { log, handler } = rig({ unauthorized: 'REGISTRATION_UNSIGNED: principal.key_added of writ-approval carries no operator authorization' });
    expect(await handler.handle(command)).toEqual({ status: 'refused', code: 'GRANT_ISSUER_UNAUTHORIZED' });
    const stream = await log.read(IDS.task_id);
    expect(stream.map((event) => [event.event_type, event.payload['code']])).toEqual([['grant.refused', 'GRANT_ISSUER_UNAUTHORIZED']]);
    expect(String(stream[0]?.payload['message'])).toContain('REGISTRATION_UNSIGNED');
  });

  it('given a valid grant and another writer appending right after our claim, then the completion is re-read and appended after it, once', async () => {
    const calls: string[] = [];
    const artifacts = memoryArtifacts();
    const cells = scriptedCell(calls);
    const command = sampleRunAction(await signSampleGrant(key));
    const { log, handler } = rig({
      cells: {
        ...cells,
        exec: async (taskId, options) => {
          // the orchestrator reacts to grant.use_claimed while the action runs
          log.push(IDS.task_id, { ...claimByAnotherProcess('x', T0), event_id: 'attempt-executing', event_type: 'attempt.executing', entity_type: 'attempt', payload: {}, idempotency_key: 'attempt.executing' });
          return cells.exec(taskId, options);
        },
      },
      artifacts,
    });

    expect(await handler.handle(command)).toEqual({ status: 'executed', outcome: 'completed', use_no: 1, duration_ms: expect.any(Number) });
    expect(calls).toEqual(['openCell', 'exec sh -c echo hello > out.txt']);
    const stream = await log.read(IDS.task_id);
    expect(stream.map((event) => event.event_type)).toEqual(['grant.use_claimed', 'attempt.executing', 'execution.completed']);
    const payload = ExecutionCompleted.parse(stream[2]?.payload);
    expect(payload).toMatchObject({ outcome: 'completed', exit_code: 0, stdout_sha256: sha256Hex('ok\n'), changed_files: [{ path: 'out.txt', change: 'added' }] });
    expect(payload.artifacts.map((artifact) => artifact.task_local_alias ?? artifact.kind)).toEqual(['stdout', 'stderr', 'workspace.diff', 'environment', 'file.snapshot']);
    // the environment artifact names no host path
    const environment = payload.artifacts.find((artifact) => artifact.kind === 'environment.snapshot');
    expect(Buffer.from(artifacts.stored.get(environment?.content_hash ?? '') ?? []).toString()).not.toContain('/var/lib/writ');

    // delivered again: already completed, the cell is not touched
    expect(await handler.handle(command)).toEqual({ status: 'already-done', reason: 'completed' });
    expect(calls).toHaveLength(2);
  });

  it('given an action class the executor cannot run, then the use is claimed and recorded as errored EXECUTOR_ACTION_UNSUPPORTED without touching a cell', async () => {
    const jws = await signSampleGrant(key, { claims: { action_class: 'publication', resource_scope: { paths: [], hosts: ['example.com'] } } });
    const command = sampleRunAction(jws, {
      action_request: { ...sampleRunAction(jws).action_request, action_class: 'publication', params: { url: 'https://example.com/' }, target_resources: ['https://example.com/'] },
    });
    const { log, handler } = rig();
    expect(await handler.handle(command)).toEqual({ status: 'executed', outcome: 'errored', use_no: 1, duration_ms: expect.any(Number) });
    expect((await log.read(IDS.task_id)).at(-1)?.payload).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_ACTION_UNSUPPORTED' } });
  });
});

describe('RunActionHandler: the task cell (Lazarus) before anything runs', () => {
  const writeCommand = async (path: string, proposer = 'agent-1') => {
    const jws = await signSampleGrant(key, { claims: { action_class: 'write_local' } });
    const base = sampleRunAction(jws).action_request;
    return sampleRunAction(jws, { action_request: { ...base, action_class: 'write_local', params: { path, content: 'x' }, target_resources: [path], proposed_by: proposer } });
  };

  it("given write_local into another participant's home, then errored EXECUTOR_CELL_WRITE_REFUSED and the cell never opens", async () => {
    const calls: string[] = [];
    const sessions: string[] = [];
    const { log, handler } = rig({
      cells: scriptedCell(calls),
      artifacts: memoryArtifacts(),
      cellSessions: { prepareForAction: async (cellId, principal) => (sessions.push(`${cellId} ${principal}`), { participant_id: 'agent-1', role: 'executor' }) },
    });
    expect(await handler.handle(await writeCommand('home/agent-2/memory.md'))).toEqual({ status: 'executed', outcome: 'errored', use_no: 1, duration_ms: expect.any(Number) });
    expect((await log.read(IDS.task_id)).at(-1)?.payload).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_CELL_WRITE_REFUSED' }, artifacts: [] });
    expect(sessions).toEqual([`${IDS.task_id} agent-1`]);
    expect(calls).toEqual([]);
  });

  it('given the write is into its own seat home, then it runs', async () => {
    const calls: string[] = [];
    const { handler } = rig({ cells: scriptedCell(calls), artifacts: memoryArtifacts(), cellSessions: { prepareForAction: async () => ({ participant_id: 'agent-1-exec', role: 'executor' }) } });
    expect(await handler.handle(await writeCommand('home/agent-1-exec/memory.md'))).toEqual({ status: 'executed', outcome: 'completed', use_no: 1, duration_ms: expect.any(Number) });
    expect(calls[0]).toBe('openCell');
  });

  it('given the task cell is closed, then errored with the cell code and nothing runs', async () => {
    const calls: string[] = [];
    const { log, handler } = rig({
      cells: scriptedCell(calls),
      artifacts: memoryArtifacts(),
      cellSessions: { prepareForAction: async () => Promise.reject(new ExecutorError('EXECUTOR_CELL_CLOSED', 'the cell of task-1 is CLOSED')) },
    });
    expect(await handler.handle(sampleRunAction(await signSampleGrant(key)))).toEqual({ status: 'executed', outcome: 'errored', use_no: 1, duration_ms: expect.any(Number) });
    expect((await log.read(IDS.task_id)).at(-1)?.payload).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_CELL_CLOSED' } });
    expect(calls).toEqual([]);
  });
});

describe('RunActionHandler: an outage before the exec is not a result of the action (issue 13)', () => {
  it('given the log times out while the executor prepares the action, then not_run and the use released (the action goes on with a new use), never errored', async () => {
    const calls: string[] = [];
    const { log, handler } = rig({
      cells: scriptedCell(calls),
      artifacts: memoryArtifacts(),
      cellSessions: { prepareForAction: async () => Promise.reject(new ExecutorError('EVENTSTORE_UNAVAILABLE' as never, 'read event failed: timeout')) },
    });
    expect(await handler.handle(sampleRunAction(await signSampleGrant(key)))).toEqual({ status: 'executed', outcome: 'not_run', use_no: 1, duration_ms: expect.any(Number) });
    const recorded = await log.read(IDS.task_id);
    expect(recorded.find((event) => event.event_type === 'execution.completed')?.payload).toMatchObject({ outcome: 'not_run', error: { code: 'EVENTSTORE_UNAVAILABLE' } });
    expect(recorded.find((event) => event.event_type === 'grant.use_released')?.payload).toMatchObject({ reason_code: 'EVENTSTORE_UNAVAILABLE' });
    expect(calls).toEqual([]);
  });

  it('given Docker fails with no Writ code while the cell opens, then not_run as well (nothing ran)', async () => {
    const calls: string[] = [];
    const { handler } = rig({ cells: { ...scriptedCell(calls), openCell: async () => Promise.reject(new Error('connect ENOENT /var/run/docker.sock')) }, artifacts: memoryArtifacts() });
    expect(await handler.handle(sampleRunAction(await signSampleGrant(key)))).toEqual({ status: 'executed', outcome: 'not_run', use_no: 1, duration_ms: expect.any(Number) });
  });
});

describe('RunActionHandler: a use reconciled from its record after a restart keeps the evidence a live run keeps', () => {
  /** A handler whose journal holds `command` (this host ran it) and whose cell record says it exited 0 with `stdout`. */
  async function reconciled(command: RunAction, stdout: string, head?: { readonly ref: string | null; readonly commit: string | null }) {
    const log = new MemoryTaskLog();
    const useId = useIdFor(command);
    await log.append(IDS.task_id, [{ ...claimByAnotherProcess(useId, T0), actor_id: 'writ-executor', payload: { ...claimByAnotherProcess(useId, T0).payload, action_class: command.action_request.action_class } }], 0);
    const artifacts = memoryArtifacts();
    const cells: CellPort = { ...scriptedCell([]), gitHead: async () => head };
    const record = { started: true, fenced: false, exit_code: 0, timed_out: false, pgid: 7, stdout: Buffer.from(stdout), stderr: Buffer.alloc(0), stdout_rest: 0, stderr_rest: 0 };
    const handler = new RunActionHandler(
      {
        log,
        keys: { verificationKeys: async () => KeySet.of([key]), unauthorized: async () => undefined },
        cells,
        artifacts,
        clock: () => new Date(T0.getTime() + 1_000),
        sleep: async () => undefined,
        journal: { write: async () => undefined, remove: async () => undefined, list: async () => [{ useId, command }] },
        records: { read: async () => record, fence: async () => false, remove: async () => undefined, killGroup: async () => undefined, hostsCell: async () => true },
      },
      SETTINGS,
    );
    expect(await handler.reconcileJournal()).toEqual({ settled: 1 });
    const completed = ExecutionCompleted.parse((await log.read(IDS.task_id)).at(-1)?.payload);
    const kept = (kind: string) => {
      const artifact = completed.artifacts.find((a) => a.kind === kind);
      return artifact === undefined ? undefined : JSON.parse(Buffer.from(artifacts.stored.get(artifact.content_hash) ?? new Uint8Array()).toString('utf8')) as Record<string, unknown>;
    };
    return { completed, kept, artifacts };
  }

  it('given a network_read whose record holds the relayed response, when reconciled, then http.response and http.body are kept as a live run keeps them', async () => {
    const request = sampleRequest({ action_class: 'network_read', target_resources: ['http://api.example.test/v1'], params: { url: 'http://api.example.test/v1' } });
    const jws = await signSampleGrant(key, { claims: { action_class: 'network_read', resource_scope: { paths: [], hosts: ['api.example.test'] } } });

    const { completed, kept } = await reconciled(sampleRunAction(jws, { action_request: request }), 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello');

    expect(completed).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(kept('http.response')).toMatchObject({ format: 'writ.http-response/1', request: { method: 'GET', url: 'http://api.example.test/v1' }, status: 200, body_sha256: sha256Hex('hello') });
    expect(completed.artifacts.map((a) => a.kind)).toEqual(expect.arrayContaining(['http.body', 'http.response', 'command.transcript']));
  });

  it('given a vcs_mutation, when reconciled, then vcs.head holds HEAD as the repository says now and before: null (nobody read it before the crash)', async () => {
    const request = sampleRequest({ action_class: 'vcs_mutation', target_resources: ['repo:app'], params: { argv: ['git', 'commit', '-m', 'x'], cwd: 'app' } });
    const jws = await signSampleGrant(key, { claims: { action_class: 'vcs_mutation', resource_scope: { paths: ['app'], hosts: [], repos: [{ repo: 'app', refs: ['refs/heads/*'] }] } } });
    const commit = 'a'.repeat(40);

    const { kept } = await reconciled(sampleRunAction(jws, { action_request: request }), '', { ref: 'refs/heads/main', commit });

    expect(kept('vcs.head')).toEqual({ format: 'writ.vcs-head/1', repo: 'app', before: null, after: { ref: 'refs/heads/main', commit } });
  });

  it('given an execute_command, when reconciled, then only the transcript and environment are kept, as before', async () => {
    const { completed } = await reconciled(sampleRunAction(await signSampleGrant(key)), 'ok\n');

    expect(completed.artifacts.map((a) => a.kind).sort()).toEqual(['command.transcript', 'command.transcript', 'environment.snapshot']);
  });
});
