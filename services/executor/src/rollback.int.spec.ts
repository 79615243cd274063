import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ExecutionCompleted, type ActionRequest, type RollbackStep } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutorRig, newIds, request, runAction } from '../test/executor-rig.js';

/**
 * Rollback as the executor runs it (Hermit 18.6), against the real NATS and the
 * real Docker Engine: a write_local keeps the pre-image of the file it changes
 * (`file.preimage`); a granted rollback of a receipt writes it back byte for
 * byte and removes a file the action added; a rollback whose paths changed
 * since, or whose receipt the log does not hold, changes nothing. The receipts
 * are appended by hand (this file runs no receipt service) with the fields the
 * executor reads. Everything is test-unique (root, streams, bucket, label,
 * cells root) and removed afterwards.
 */

const rig = new ExecutorRig();

beforeAll(async () => {
  await rig.start('executor-rollback-int', {
    cellsRoots: ['writ-rollback-'],
    env: { WRIT_CELL_POOL_SIZE: '0' },
    executorIds: ['executor-rollback'],
    approval: { kid: 'approval-k1', displayName: 'approval (test)' },
  });
}, 300_000);

afterAll(() => rig.close(), 60_000);

// ---- fixtures -------------------------------------------------------------------------------

/** Runs one granted action of the task (its own step and attempt) and resolves with its execution.completed. */
async function act(taskId: string, actionClass: ActionRequest['action_class'], params: ActionRequest['params'], targets: string[]): Promise<ExecutionCompleted> {
  const ids = newIds('rb', taskId);
  const grant = await rig.mint({ ids, actionClass, paths: ['notes'] });
  await rig.publishRunAction(runAction(ids, grant, request(ids, { action_class: actionClass, params, target_resources: targets })));
  const done = await rig.waitForTaskEvent(taskId, `${actionClass} completed`, (event) => event.event_type === 'execution.completed' && event.payload['grant_id'] === grant.grant_id);
  return ExecutionCompleted.parse(done.payload);
}

const write = (taskId: string, file: string, bytes: Uint8Array) => act(taskId, 'write_local', { path: file, content: Buffer.from(bytes).toString('base64'), encoding: 'base64' }, [file]);

/** Appends `receipt.issued` carrying what the executor reads of a receipt: its id, hash and rollback steps. */
async function recordReceipt(taskId: string, steps: RollbackStep[]): Promise<{ receipt_id: string; receipt_hash: string }> {
  const receipt = { receipt_id: uniqueName('rct'), receipt_hash: sha256Hex(randomBytes(16)) };
  const at = new Date().toISOString();
  const draft = {
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: 'receipt.issued',
    entity_type: 'receipt' as const,
    entity_id: receipt.receipt_id,
    occurred_at: at,
    actor_type: 'service' as const,
    actor_id: 'writ-receipt',
    payload: { receipt: { ...receipt, rollback: { method: 'compensating_local_actions', statement: 'test', prerequisites: [], steps } }, jws: 'x.y.z', cause: 'settled' },
    causation_id: null,
    correlation_id: taskId,
    idempotency_key: `${receipt.receipt_id}:receipt.issued`,
  };
  await rig.store.append(taskId, [draft], (await rig.store.read(taskId)).length);
  return receipt;
}

const rollback = (taskId: string, receipt: { receipt_id: string; receipt_hash: string }, steps: RollbackStep[]) =>
  act(taskId, 'rollback', { ...receipt, steps }, [...new Set(steps.map((step) => step.path))]);

/** Every file under notes/ (relative path → SHA-256): where these tests act; the cell layout's own files are left out. */
async function workspaceFiles(taskId: string): Promise<Record<string, string>> {
  const root = rig.hostFile(taskId, '');
  const out: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const relative = path.relative(root, path.join(entry.parentPath, entry.name));
    if (!relative.startsWith('notes/')) continue;
    out[relative] = sha256Hex(await readFile(path.join(root, relative)));
  }
  return out;
}

// ---- tests ----------------------------------------------------------------------------------

describe('executor: pre-images and rollback', () => {
  it('given a write_local over an existing file, then its pre-image is kept (file.preimage); a granted rollback of its receipt writes it back byte for byte', async () => {
    const taskId = uniqueName('task-restore');
    const v1 = randomBytes(70_000); // binary, and more than one 64 KiB block of the in-cell copy
    const v2 = Buffer.from('second version\n');
    await write(taskId, 'notes/a.bin', v1);

    const modified = await write(taskId, 'notes/a.bin', v2);
    expect(modified.changed_files).toEqual([{ path: 'notes/a.bin', change: 'modified', before_sha256: sha256Hex(v1), after_sha256: sha256Hex(v2) }]);
    const preimage = modified.artifacts.find((artifact) => artifact.kind === 'file.preimage');
    expect(preimage).toMatchObject({ content_hash: sha256Hex(v1), byte_size: v1.byteLength, class: 'working', trust_tier: 'observed' });
    expect(Buffer.from((await rig.objectBytes(sha256Hex(v1))) ?? []).equals(v1)).toBe(true);

    const steps: RollbackStep[] = [{ action_class: 'write_local', path: 'notes/a.bin', expected_sha256: sha256Hex(v2), restore_artifact_ref: `artifact:${preimage?.artifact_id}`, restore_sha256: sha256Hex(v1) }];
    const receipt = await recordReceipt(taskId, steps);
    const undone = await rollback(taskId, receipt, steps);

    expect(undone).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect((await readFile(rig.hostFile(taskId, 'notes/a.bin'))).equals(v1)).toBe(true);
    expect(undone.changed_files).toEqual([{ path: 'notes/a.bin', change: 'modified', before_sha256: sha256Hex(v2), after_sha256: sha256Hex(v1) }]);
    // the rollback keeps the pre-image of what it overwrote too: it can be undone in turn
    expect(undone.artifacts.find((artifact) => artifact.kind === 'file.preimage')?.content_hash).toBe(sha256Hex(v2));
    // no staged file is left behind
    expect(Object.keys(await workspaceFiles(taskId))).toEqual(['notes/a.bin']);
  });

  it('given a file the action added, when its receipt is rolled back, then the file is removed and nothing else changes', async () => {
    const taskId = uniqueName('task-added');
    const kept = Buffer.from('kept\n');
    const added = Buffer.from('added\n');
    await write(taskId, 'notes/kept.txt', kept);
    const adding = await write(taskId, 'notes/new.txt', added);
    expect(adding.changed_files).toEqual([{ path: 'notes/new.txt', change: 'added', before_sha256: null, after_sha256: sha256Hex(added) }]);
    expect(adding.artifacts.filter((artifact) => artifact.kind === 'file.preimage')).toEqual([]);

    const steps: RollbackStep[] = [{ action_class: 'delete_local', path: 'notes/new.txt', expected_sha256: sha256Hex(added) }];
    const undone = await rollback(taskId, await recordReceipt(taskId, steps), steps);

    expect(undone).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(undone.changed_files).toEqual([{ path: 'notes/new.txt', change: 'deleted', before_sha256: sha256Hex(added), after_sha256: null }]);
    expect(existsSync(rig.hostFile(taskId, 'notes/new.txt'))).toBe(false);
    expect(await workspaceFiles(taskId)).toEqual({ 'notes/kept.txt': sha256Hex(kept) });
  });

  it('given a path changed after the action, when its receipt is rolled back, then EXECUTOR_ROLLBACK_PRECONDITION_FAILED names it and no step runs, not even those whose path is intact', async () => {
    const taskId = uniqueName('task-drift');
    const b1 = Buffer.from('b1\n');
    const b2 = Buffer.from('b2\n');
    const later = Buffer.from('a later change\n');
    const extra = Buffer.from('extra\n');
    await write(taskId, 'notes/b.txt', b1);
    const modified = await write(taskId, 'notes/b.txt', b2);
    await write(taskId, 'notes/extra.txt', extra);
    const preimage = modified.artifacts.find((artifact) => artifact.kind === 'file.preimage');
    const steps: RollbackStep[] = [
      { action_class: 'delete_local', path: 'notes/extra.txt', expected_sha256: sha256Hex(extra) },
      { action_class: 'write_local', path: 'notes/b.txt', expected_sha256: sha256Hex(b2), restore_artifact_ref: `artifact:${preimage?.artifact_id}`, restore_sha256: sha256Hex(b1) },
    ];
    const receipt = await recordReceipt(taskId, steps);
    await write(taskId, 'notes/b.txt', later);
    const before = await workspaceFiles(taskId);

    const refused = await rollback(taskId, receipt, steps);

    expect(refused).toMatchObject({ outcome: 'errored', exit_code: null, changed_files: [], error: { code: 'EXECUTOR_ROLLBACK_PRECONDITION_FAILED' } });
    expect(refused.error?.message).toContain(`notes/b.txt (expected ${sha256Hex(b2)}, found ${sha256Hex(later)})`);
    expect(refused.error?.message).not.toContain('notes/extra.txt');
    expect(await workspaceFiles(taskId)).toEqual(before);
    expect((await readFile(rig.hostFile(taskId, 'notes/b.txt'))).equals(later)).toBe(true);
  });

  it('given rollback params the log does not back (another receipt hash, or steps the receipt does not name), then EXECUTOR_ROLLBACK_RECEIPT_MISMATCH and nothing changes', async () => {
    const taskId = uniqueName('task-mismatch');
    const c = Buffer.from('c\n');
    await write(taskId, 'notes/c.txt', c);
    const steps: RollbackStep[] = [{ action_class: 'delete_local', path: 'notes/c.txt', expected_sha256: sha256Hex(c) }];
    const receipt = await recordReceipt(taskId, steps);

    const wrongHash = await rollback(taskId, { ...receipt, receipt_hash: sha256Hex('another receipt') }, steps);
    const otherSteps = await rollback(taskId, receipt, [{ action_class: 'delete_local', path: 'notes/other.txt', expected_sha256: sha256Hex(c) }]);

    for (const refused of [wrongHash, otherSteps]) expect(refused).toMatchObject({ outcome: 'errored', changed_files: [], error: { code: 'EXECUTOR_ROLLBACK_RECEIPT_MISMATCH' } });
    expect((await readFile(rig.hostFile(taskId, 'notes/c.txt'))).equals(c)).toBe(true);
  });

  it('given a step path reached through a symlink out of the workspace, then EXECUTOR_PATH_ESCAPE and the file outside stays', async () => {
    const taskId = uniqueName('task-escape');
    await write(taskId, 'notes/seed.txt', Buffer.from('seed\n'));
    const outside = await mkdtemp(path.join(tmpdir(), 'writ-rollback-outside-'));
    try {
      await writeFile(path.join(outside, 'victim.txt'), 'victim\n');
      await mkdir(rig.hostFile(taskId, 'notes'), { recursive: true });
      await symlink(outside, rig.hostFile(taskId, 'notes/link'));
      const steps: RollbackStep[] = [{ action_class: 'delete_local', path: 'notes/link/victim.txt', expected_sha256: sha256Hex('victim\n') }];

      const refused = await rollback(taskId, await recordReceipt(taskId, steps), steps);

      expect(refused).toMatchObject({ outcome: 'errored', exit_code: null, error: { code: 'EXECUTOR_PATH_ESCAPE' } });
      expect(await readFile(path.join(outside, 'victim.txt'), 'utf8')).toBe('victim\n');
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});
