import type { EventEnvelope, RollbackParams, RollbackStep } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { sampleRequest } from '../../test/grants.js';
import { planAction, useResources } from './action-plan.js';
import { ROLLBACK_ARGV, describeDrift, preimageTargets, receiptMismatch, rollbackDrift, rollbackExec, type WalkedEntry } from './rollback-run.js';

const V1 = Buffer.from('v1\n');
const V2 = Buffer.from('v2\n');
const ADDED = Buffer.from('new\n');
const h = (bytes: Uint8Array | string) => sha256Hex(bytes);

const restoreStep: RollbackStep = { action_class: 'write_local', path: 'notes/a.txt', expected_sha256: h(V2), restore_artifact_ref: 'artifact:art-1', restore_sha256: h(V1) };
const recreateStep: RollbackStep = { action_class: 'write_local', path: 'gone.txt', expected_sha256: null, restore_artifact_ref: 'artifact:art-2', restore_sha256: h(V1) };
const removeStep: RollbackStep = { action_class: 'delete_local', path: 'added.txt', expected_sha256: h(ADDED) };
const params: RollbackParams = { receipt_id: 'rct-1', receipt_hash: 'c'.repeat(64), steps: [restoreStep, recreateStep, removeStep] };

const file = (bytes: Uint8Array): WalkedEntry => ({ kind: 'file', sha256: h(bytes), size: bytes.byteLength });
const walk = (entries: Record<string, WalkedEntry>) => ({ entries: new Map(Object.entries(entries)) });

function issued(receipt: Record<string, unknown>): EventEnvelope {
  return { event_type: 'receipt.issued', payload: { receipt, jws: 'x.y.z', cause: 'settled' } } as unknown as EventEnvelope;
}
const original = { receipt_id: 'rct-1', receipt_hash: 'c'.repeat(64), rollback: { method: 'compensating_local_actions', statement: 's', prerequisites: [], steps: params.steps } };

describe('receiptMismatch: a rollback runs only what a receipt of the task names', () => {
  it('given the receipt with that hash and exactly those steps, then nothing is wrong', () => {
    expect(receiptMismatch(params, [issued({ receipt_id: 'rct-0' }), issued(original)])).toBeUndefined();
  });

  it.each([
    ['no such receipt in the task', [issued({ ...original, receipt_id: 'rct-9' })], 'holds no receipt rct-1'],
    ['another hash', [issued({ ...original, receipt_hash: 'd'.repeat(64) })], 'hashes to'],
    ['a receipt that names no method', [issued({ ...original, rollback: { method: 'none', statement: 's', prerequisites: [], steps: [] } })], 'names no rollback method'],
    ['other steps (a path swapped)', [issued({ ...original, rollback: { ...original.rollback, steps: [{ ...restoreStep, path: 'notes/b.txt' }, recreateStep, removeStep] } })], 'steps differ'],
    ['the steps in another order', [issued({ ...original, rollback: { ...original.rollback, steps: [removeStep, restoreStep, recreateStep] } })], 'steps differ'],
  ])('given %s, then the rollback is refused', (_note, stream, why) => {
    expect(receiptMismatch(params, stream)).toContain(why);
  });
});

describe('rollbackDrift: every path must still hold what the rolled-back action left', () => {
  it('given the workspace as the action left it, then nothing drifted', () => {
    expect(rollbackDrift(params.steps, walk({ 'notes/a.txt': file(V2), 'added.txt': file(ADDED), 'other.txt': file(V1) }))).toEqual([]);
  });

  it('given later changes, then each drifted path is listed with what was expected and what was found', () => {
    const drifted = rollbackDrift(params.steps, walk({ 'notes/a.txt': file(Buffer.from('v3\n')), 'gone.txt': file(V1) }));
    expect(drifted).toEqual([
      { path: 'notes/a.txt', expected: h(V2), found: h(Buffer.from('v3\n')) },
      { path: 'gone.txt', expected: null, found: h(V1) },
      { path: 'added.txt', expected: h(ADDED), found: null },
    ]);
    expect(describeDrift(drifted)).toContain(`notes/a.txt (expected ${h(V2)}, found ${h(Buffer.from('v3\n'))})`);
  });

  it('given a symlink or a directory where a file or nothing must be, then it drifted', () => {
    const drifted = rollbackDrift(params.steps, walk({ 'notes/a.txt': { kind: 'symlink', sha256: h(V2), size: 3 }, 'gone.txt/inner': file(V1), 'added.txt': file(ADDED) }));
    expect(drifted.map((d) => [d.path, d.found])).toEqual([
      ['notes/a.txt', 'symlink'],
      ['gone.txt', 'directory'],
    ]);
  });
});

describe('rollbackExec: one in-cell command, its pre-images on stdin', () => {
  it('given the steps and their pre-images, then each step is op, ./path, size, pre-image hash, expected hash; stdin holds the pre-images in step order', () => {
    const other = Buffer.from('other\n');
    const exec = rollbackExec([restoreStep, removeStep, { ...recreateStep, restore_sha256: h(other) }], new Map([[h(V1), V1], [h(other), other]]), 'abc123');
    expect(exec.argv).toEqual([
      ...ROLLBACK_ARGV,
      'abc123',
      ...['w', './notes/a.txt', '3', h(V1), h(V2)],
      ...['d', './added.txt', '-', '-', h(ADDED)],
      ...['c', './gone.txt', '6', h(other), '-'],
    ]);
    expect(Buffer.from(exec.stdin).toString()).toBe('v1\nother\n');
  });

  it('given a write step whose pre-image was not fetched, then it is a bug (EXECUTOR_INTERNAL), never an empty write', () => {
    expect(() => rollbackExec([restoreStep], new Map(), 'abc')).toThrow(expect.objectContaining({ code: 'EXECUTOR_INTERNAL' }));
  });
});

describe('preimageTargets: what an action is about to change is kept first', () => {
  const walked = walk({
    'notes/a.txt': file(V1),
    'notes/deep/b.txt': file(V2),
    'notes/link': { kind: 'symlink', sha256: h('x'), size: 1 },
    'notes/.env': file(Buffer.from('TOKEN=1\n')),
    'notes/big.bin': { kind: 'file', sha256: h('big'), size: 10_000 },
    'notesX.txt': file(V1),
    'secrets/key.txt': file(V1),
  });

  it('given a directory target, then every regular file below it within the size bound, never a secret path, a link or a sibling with the same prefix', () => {
    expect(preimageTargets(['notes'], walked, { maxBytes: 1024, maxFiles: 10 }).map((t) => t.path)).toEqual(['notes/a.txt', 'notes/deep/b.txt']);
  });

  it('given a file target, then that file with its hash and size; a secret target is never kept', () => {
    expect(preimageTargets(['notes/a.txt', 'secrets/key.txt'], walked, { maxBytes: 1024, maxFiles: 10 })).toEqual([{ path: 'notes/a.txt', sha256: h(V1), size: 3 }]);
  });

  it('given the bounds, then at most maxFiles are kept, and none when maxBytes is 0', () => {
    expect(preimageTargets(['notes', 'notesX.txt'], walked, { maxBytes: 1024, maxFiles: 1 })).toHaveLength(1);
    expect(preimageTargets(['notes'], walked, { maxBytes: 0, maxFiles: 10 })).toEqual([]);
  });
});

describe('the plan of a rollback', () => {
  const request = (overrides: Record<string, unknown> = {}) =>
    sampleRequest({ action_class: 'rollback', target_resources: ['notes/a.txt', 'gone.txt', 'added.txt'], params: { ...params, steps: params.steps.map((s) => ({ ...s })), ...overrides } } as never);

  it('given a receipt and its steps, then a run of the rollback script with the steps, keeping pre-images of every step path', () => {
    const plan = planAction(request(), { timeoutMs: 60_000, maxOutputBytes: 1024 });
    expect(plan).toMatchObject({ kind: 'run', argv: ROLLBACK_ARGV, rollback: params, preimagePaths: ['notes/a.txt', 'gone.txt', 'added.txt'] });
  });

  it('given every step path, then the grant must cover each (useResources)', () => {
    expect(useResources(request({}))).toMatchObject({ paths: expect.arrayContaining(['notes/a.txt', 'gone.txt', 'added.txt']) });
    expect(useResources(sampleRequest({ action_class: 'rollback', target_resources: ['notes'], params: { ...params } } as never)).paths).toEqual(expect.arrayContaining(['notes', 'notes/a.txt', 'added.txt']));
  });

  it.each([
    ['no steps', { steps: [] }, 'EXECUTOR_PARAMS_INVALID'],
    ['no receipt hash', { receipt_hash: undefined }, 'EXECUTOR_PARAMS_INVALID'],
    ['a step climbing out', { steps: [{ ...removeStep, path: '../x' }] }, 'EXECUTOR_PATH_ESCAPE'],
    ['a step spelled otherwise than a walk records it', { steps: [{ ...removeStep, path: './added.txt' }] }, 'EXECUTOR_PARAMS_INVALID'],
  ])('given %s, then it cannot run', (_note, overrides, code) => {
    expect(planAction(request(overrides), { timeoutMs: 60_000, maxOutputBytes: 1024 })).toMatchObject({ kind: 'cannot-run', code });
  });

  it('given write_local and delete_local, then their target is kept as a pre-image too', () => {
    expect(planAction(sampleRequest({ action_class: 'write_local', target_resources: ['a.txt'], params: { path: './a.txt', content: 'x' } } as never), { timeoutMs: 1, maxOutputBytes: 1 })).toMatchObject({ preimagePaths: ['a.txt'] });
    expect(planAction(sampleRequest({ action_class: 'delete_local', target_resources: ['dir'], params: { path: 'dir' } } as never), { timeoutMs: 1, maxOutputBytes: 1 })).toMatchObject({ preimagePaths: ['dir'] });
  });
});
