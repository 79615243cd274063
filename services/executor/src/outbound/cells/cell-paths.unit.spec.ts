import { describe, expect, it } from 'vitest';
import { assertTaskId, cellHostPaths, resolveCellCwd } from './cell-paths.js';

describe('resolveCellCwd', () => {
  it.each([
    { cwd: undefined, want: '/workspace' },
    { cwd: '', want: '/workspace' },
    { cwd: '.', want: '/workspace' },
    { cwd: 'src', want: '/workspace/src' },
    { cwd: './src//lib/', want: '/workspace/src/lib' },
    { cwd: '/workspace', want: '/workspace' },
    { cwd: '/workspace/src', want: '/workspace/src' },
  ])('given cwd $cwd, when resolved, then it is $want', ({ cwd, want }) => {
    expect(resolveCellCwd(cwd).containerPath).toBe(want);
  });

  it.each([
    { note: 'parent of the workspace', cwd: '..' },
    { note: 'two levels up', cwd: '../..' },
    { note: 'absolute outside', cwd: '/etc' },
    { note: 'root', cwd: '/' },
    { note: 'sibling with the workspace as prefix', cwd: '/workspace2' },
    { note: 'absolute climbing out', cwd: '/workspace/../etc' },
    { note: 'relative climbing out', cwd: 'a/../../etc' },
    { note: 'a .. that would stay inside', cwd: 'a/../b' },
  ])('given $note ($cwd), when resolved, then CELL_PATH_ESCAPE', ({ cwd }) => {
    expect(() => resolveCellCwd(cwd)).toThrow(expect.objectContaining({ code: 'CELL_PATH_ESCAPE' }));
  });

  it('given a NUL byte, when resolved, then CELL_ARGUMENT_INVALID', () => {
    expect(() => resolveCellCwd('a\0b')).toThrow(expect.objectContaining({ code: 'CELL_ARGUMENT_INVALID' }));
  });
});

describe('task ids name cells', () => {
  it('given a plain id, when the host paths are built, then they sit under the cells root', () => {
    expect(cellHostPaths('/cells', 'task_01-A')).toEqual({ taskDir: '/cells/task_01-A', usesDir: '/cells/task_01-A/uses', workspaceDir: '/cells/task_01-A/workspace' });
  });

  it.each(['', '..', '../x', 'a/b', 'a.b', 'x'.repeat(129), 'white space'])('given %j, when checked, then CELL_TASK_ID_INVALID', (taskId) => {
    expect(() => assertTaskId(taskId)).toThrow(expect.objectContaining({ code: 'CELL_TASK_ID_INVALID' }));
  });
});
