import 'reflect-metadata';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusClient } from '@writ/bus';
import { hasErrorCode } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { createLogger } from '@writ/telemetry';
import { connectTestNats, deleteStreams, uniqueName } from '@writ/testing';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceObserved } from '@writ/contracts';
import { createExecutorApp, type ExecutorApp } from './bootstrap.js';
import type { ExecutorConfig } from './config.js';
import { testConfig, testStreams } from '../test/executor-rig.js';

/**
 * `<root>.qry.executor.observe` answered by the real executor started in-process, asked
 * over the real NATS: the read-only observation behind approval's state witness. The
 * workspaces are laid out on the host where the cells would mount them; nothing runs in a
 * cell, no grant is involved, and nothing is appended to the log.
 */

const MiB = 1024 ** 2;
const quiet = createLogger('executor-observe-test', { level: 'silent' });

let nc: NatsConnection;
let client: BusClient;
let cellsRoot: string;
let config: ExecutorConfig;
let executor: ExecutorApp;
let store: EventStore;

async function workspace(taskId: string, files: Record<string, string>): Promise<string> {
  const dir = path.join(cellsRoot, taskId, 'workspace');
  await mkdir(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  return dir;
}

function observe(taskId: string, resources: string[]): Promise<WorkspaceObserved> {
  return client.request<unknown>(config.subjects.observe, { task_id: taskId, resources }).then((reply) => WorkspaceObserved.parse(reply));
}

beforeAll(async () => {
  nc = await connectTestNats('executor-observe-int');
  cellsRoot = await mkdtemp(path.join(tmpdir(), 'writ-executor-observe-'));
  config = testConfig(cellsRoot);
  executor = await createExecutorApp({ ...config, executorId: 'executor-observe-test' }, { logger: quiet, busLogger: quiet, nestLogLevels: false });
  client = new BusClient(nc);
  store = await EventStore.open(nc, { stream: config.streams.events, subjectPrefix: config.subjects.eventsPrefix, maxBytes: 64 * MiB });
});

afterAll(async () => {
  await executor?.close();
  await client?.close();
  if (nc !== undefined) {
    await deleteStreams(nc, ...testStreams(config));
    await nc.close();
  }
  await rm(cellsRoot, { recursive: true, force: true });
});

describe('executor: observe (state witness)', () => {
  it('answers file, directory, absent, symlink, refused and unobservable fingerprints on the rooted query subject', async () => {
    const taskId = uniqueName('task-observe');
    const dir = await workspace(taskId, { 'out.txt': 'hello\n', 'build/app.js': 'console.log(1)\n' });
    await symlink('/etc/passwd', path.join(dir, 'passwd'));
    expect(config.subjects.observe).toBe(`${config.subjects.root}.qry.executor.observe`);

    const reply = await observe(taskId, ['out.txt', 'build', 'gone', 'passwd', 'passwd/x', '../other-task/workspace/out.txt', '/etc/hostname', 'https://example.org/x']);

    expect(reply.fingerprints).toEqual({
      'out.txt': `sha256:${sha256Hex('hello\n')}`,
      build: `dir:${sha256Hex(JSON.stringify([['app.js', `sha256:${sha256Hex('console.log(1)\n')}`]]))}`,
      gone: 'absent',
      passwd: 'symlink:/etc/passwd',
      'passwd/x': 'refused',
      '../other-task/workspace/out.txt': 'refused',
      '/etc/hostname': 'refused',
      'https://example.org/x': 'unobservable',
    });
    expect(Date.parse(reply.observed_at)).not.toBeNaN();
  });

  it('observes the same state the same way, and a change between two observations shows', async () => {
    const taskId = uniqueName('task-drift');
    const dir = await workspace(taskId, { 'build/a.o': 'a' });
    const first = await observe(taskId, ['build']);
    expect((await observe(taskId, ['build'])).fingerprints).toEqual(first.fingerprints);
    await writeFile(path.join(dir, 'build/a.o'), 'changed');
    expect((await observe(taskId, ['build'])).fingerprints['build']).not.toBe(first.fingerprints['build']);
  });

  it('runs nothing and records nothing: no cell is created and the task log stays empty', async () => {
    const taskId = uniqueName('task-readonly');
    await workspace(taskId, { 'a.txt': 'a' });
    await observe(taskId, ['a.txt', '.']);
    expect(await store.read(taskId)).toEqual([]);
    const containers = await new Docker().listContainers({ all: true, filters: { name: [`writ-cell-${taskId}`] } });
    expect(containers).toEqual([]);
  });

  it('replies CONTRACT_INVALID to a request without resources or with a task id that is not an Id', async () => {
    const noResources = await client.request(config.subjects.observe, { task_id: 'task-x', resources: [] }).catch((e: unknown) => e);
    const badTask = await client.request(config.subjects.observe, { task_id: '../etc', resources: ['a'] }).catch((e: unknown) => e);
    expect(hasErrorCode(noResources, 'CONTRACT_INVALID')).toBe(true);
    expect(hasErrorCode(badTask, 'CONTRACT_INVALID')).toBe(true);
  });
});
