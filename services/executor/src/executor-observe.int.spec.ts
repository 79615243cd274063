import 'reflect-metadata';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { hasErrorCode, WorkspaceObserved } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutorRig } from '../test/executor-rig.js';

/**
 * `<root>.qry.executor.observe` answered by the real executor started in-process, asked
 * over the real NATS: the read-only observation behind approval's state witness. The
 * workspaces are laid out on the host where the cells would mount them; nothing runs in a
 * cell, no grant is involved, and nothing is appended to the log.
 */

const rig = new ExecutorRig();

async function workspace(taskId: string, files: Record<string, string>): Promise<string> {
  const dir = rig.hostFile(taskId, '');
  await mkdir(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  return dir;
}

function observe(taskId: string, resources: string[]): Promise<WorkspaceObserved> {
  return rig.client.request<unknown>(rig.config.subjects.observe, { task_id: taskId, resources }).then((reply) => WorkspaceObserved.parse(reply));
}

beforeAll(() => rig.start('executor-observe-int', { cellsRoots: ['writ-executor-observe-'], executorIds: ['executor-observe-test'], cellImage: false }));

afterAll(() => rig.close());

describe('executor: observe (state witness)', () => {
  it('answers file, directory, absent, symlink, refused and unobservable fingerprints on the rooted query subject', async () => {
    const taskId = uniqueName('task-observe');
    const dir = await workspace(taskId, { 'out.txt': 'hello\n', 'build/app.js': 'console.log(1)\n' });
    await symlink('/etc/passwd', path.join(dir, 'passwd'));
    expect(rig.config.subjects.observe).toBe(`${rig.config.subjects.root}.qry.executor.observe`);

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
    expect(await rig.store.read(taskId)).toEqual([]);
    const containers = await rig.docker.listContainers({ all: true, filters: { name: [`writ-cell-${taskId}`] } });
    expect(containers).toEqual([]);
  });

  it('replies CONTRACT_INVALID to a request without resources or with a task id that is not an Id', async () => {
    const noResources = await rig.client.request(rig.config.subjects.observe, { task_id: 'task-x', resources: [] }).catch((e: unknown) => e);
    const badTask = await rig.client.request(rig.config.subjects.observe, { task_id: '../etc', resources: ['a'] }).catch((e: unknown) => e);
    expect(hasErrorCode(noResources, 'CONTRACT_INVALID')).toBe(true);
    expect(hasErrorCode(badTask, 'CONTRACT_INVALID')).toBe(true);
  });
});
