import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RunAction } from '@writ/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileUseJournal } from './use-journal.js';

// The host journal of uses in flight on a temporary cells root.

const useId = (c: string) => `use-${c.repeat(40)}`;
let cellsRoot: string;

const command = (n: number): RunAction => ({
  task_id: `task-${n}`,
  step_id: 'step-1',
  attempt_id: 'att-1',
  grant_id: `gnt-${n}`,
  grant_jws: 'eyJhbGciOiJFZERTQSJ9.e30.c2ln',
  action_request: {
    action_request_id: `ar-${n}`,
    task_id: `task-${n}`,
    action_class: 'execute_command',
    target_resources: ['out.txt'],
    params: { argv: ['true'] },
    expected_effects: [],
    reversibility_hint: 'reversible',
    reason: 'journal test',
    proposed_by: 'agent-1',
    proposed_at: '2031-01-01T00:00:00Z',
  },
});

beforeEach(async () => {
  cellsRoot = await mkdtemp(path.join(tmpdir(), 'writ-journal-'));
});

afterEach(async () => {
  await rm(cellsRoot, { recursive: true, force: true });
});

describe('FileUseJournal', () => {
  it('given nothing was ever journaled, then the list is empty', async () => {
    expect(await new FileUseJournal(cellsRoot, 'executor-a').list()).toEqual([]);
  });

  it('given uses written before their claims, then a restarted process with the same id lists them with their RunAction', async () => {
    const before = new FileUseJournal(cellsRoot, 'executor-a');
    await before.write(useId('a'), command(1));
    await before.write(useId('b'), command(2));
    const after = new FileUseJournal(cellsRoot, 'executor-a');
    expect(await after.list()).toEqual([
      { useId: useId('a'), command: command(1) },
      { useId: useId('b'), command: command(2) },
    ]);
  });

  it("given another executor's journal on the same host, then this one does not list it (each settles its own)", async () => {
    await new FileUseJournal(cellsRoot, 'executor-a').write(useId('a'), command(1));
    expect(await new FileUseJournal(cellsRoot, 'executor-b').list()).toEqual([]);
  });

  it('given a RunAction holds a grant JWS, then the journal directory is 0700 and each entry 0600', async () => {
    await new FileUseJournal(cellsRoot, 'executor-a').write(useId('a'), command(1));
    const dir = path.join(cellsRoot, '.journal', 'executor-a');
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(dir, `${useId('a')}.json`))).mode & 0o777).toBe(0o600);
  });

  it('given a settled use, when removed (twice), then it is no longer listed and the second removal is a no-op', async () => {
    const journal = new FileUseJournal(cellsRoot, 'executor-a');
    await journal.write(useId('a'), command(1));
    await journal.remove(useId('a'));
    await journal.remove(useId('a'));
    expect(await journal.list()).toEqual([]);
  });

  it('given the same use written twice, then it is one entry holding the last command (tmp + rename leaves no partial file)', async () => {
    const journal = new FileUseJournal(cellsRoot, 'executor-a');
    await journal.write(useId('a'), command(1));
    await journal.write(useId('a'), command(3));
    expect(await journal.list()).toEqual([{ useId: useId('a'), command: command(3) }]);
    expect((await readdir(path.join(cellsRoot, '.journal', 'executor-a'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('given stray files (other names, an entry that is not a RunAction, one that is not JSON), then only valid entries are listed; the invalid RunAction is dropped, the unreadable one left for the operator', async () => {
    const journal = new FileUseJournal(cellsRoot, 'executor-a');
    await journal.write(useId('a'), command(1));
    const dir = path.join(cellsRoot, '.journal', 'executor-a');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'notes.txt'), 'x');
    await writeFile(path.join(dir, `${useId('b')}.json`), JSON.stringify({ task_id: 'only' }));
    await writeFile(path.join(dir, `${useId('c')}.json`), '{ torn');
    expect(await journal.list()).toEqual([{ useId: useId('a'), command: command(1) }]);
    const left = await readdir(dir);
    expect(left).not.toContain(`${useId('b')}.json`);
    expect(left).toContain(`${useId('c')}.json`);
  });
});
