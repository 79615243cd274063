import { describe, expect, it } from 'vitest';
import { cellAreaOf, checkCellAccess } from './cell-areas.js';

const agent = { participant_id: 'agent-1', role: 'executor' } as const;
const substitute = { participant_id: 'agent-2', role: 'substitute' } as const;
const observer = { participant_id: 'watcher', role: 'observer' } as const;

describe('cell areas: what a file action may touch, by its seat', () => {
  it.each([
    { note: 'a project file', path: 'src/a.ts', area: 'project' },
    { note: 'its own home', path: 'home/agent-1/notes.md', area: 'own_home' },
    { note: 'another home', path: 'home/agent-2/notes.md', area: 'other_home' },
    { note: 'the homes directory', path: 'home', area: 'other_home' },
    { note: 'the shared area', path: 'shared/scratchpad.md', area: 'shared' },
    { note: 'the harness', path: '.lazarus/cell.json', area: 'harness' },
    { note: 'a project file named like an area', path: 'src/home/x', area: 'project' },
  ])('given $note ($path), then the area is $area', ({ path, area }) => {
    expect(cellAreaOf(path, 'agent-1')).toBe(area);
  });

  it.each([
    { note: 'an executor writes the project', path: 'out.txt', seat: agent, ok: true },
    { note: 'an executor writes its own home', path: 'home/agent-1/memory.md', seat: agent, ok: true },
    { note: 'an executor writes the shared area', path: 'shared/scratchpad.md', seat: agent, ok: true },
    { note: "an executor writes another's home", path: 'home/agent-2/memory.md', seat: agent, ok: false },
    { note: 'an executor writes the harness metadata', path: '.lazarus/cell.json', seat: agent, ok: false },
    { note: 'an executor removes its home directory itself', path: 'home/agent-1', seat: agent, ok: false },
    { note: 'an executor removes the shared area itself', path: 'shared', seat: agent, ok: false },
    { note: 'an executor writes the homes directory', path: 'home', seat: agent, ok: false },
    { note: 'a substitute writes its own home', path: 'home/agent-2/memory.md', seat: substitute, ok: true },
    { note: "a substitute writes its predecessor's home", path: 'home/agent-1/memory.md', seat: substitute, ok: false },
    { note: 'an observer writes the project', path: 'out.txt', seat: observer, ok: false },
    { note: 'an observer writes the shared area', path: 'shared/x', seat: observer, ok: false },
  ])('given $note, when it writes $path, then ok is $ok', ({ path, seat, ok }) => {
    const check = checkCellAccess(path, 'write', seat);
    expect(check.ok).toBe(ok);
    if (!check.ok) expect(check.code).toBe('EXECUTOR_CELL_WRITE_REFUSED');
  });

  it.each([
    { note: 'the project', path: 'src/a.ts', ok: true },
    { note: 'its own home', path: 'home/agent-1/memory.md', ok: true },
    { note: 'the shared area', path: 'shared/scratchpad.md', ok: true },
    { note: 'the cell metadata', path: '.lazarus/cell.json', ok: true },
    { note: 'the spawn log', path: '.lazarus/spawn.log', ok: true },
    { note: 'a checkpoint record', path: '.lazarus/checkpoints/ckpt-1.json', ok: false },
    { note: "another's home (Lazarus 5.2: home memory is private)", path: 'home/agent-2/memory.md', ok: false },
  ])('given an executor, when it reads $note, then ok is $ok', ({ path, ok }) => {
    const check = checkCellAccess(path, 'read', agent);
    expect(check.ok).toBe(ok);
    if (!check.ok) expect(check.code).toBe('EXECUTOR_CELL_READ_REFUSED');
  });
});
