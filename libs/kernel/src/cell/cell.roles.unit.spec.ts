import { describe, expect, it } from 'vitest';
import { cmd, reach, run } from '../../test/cell-flow.js';
import { deciderSpec } from '../../test/decider-spec.js';
import { fold } from '../shared/decider.js';
import { cellDecider, type CellRecord } from './cell.decider.js';
import { cellLayout, readablePaths, writablePaths } from './cell.layout.js';
import { CellRole } from './cell.policy.js';
import { cellPermissions, roleEnabled } from './cell.roles.js';

const spec = deciderSpec(cellDecider);
const record = (events: readonly unknown[]) => fold(cellDecider, events) as CellRecord;
const ENABLED = { allow_guest: true, allow_substitute: true };

describe('roles (Lazarus 3, 3.1)', () => {
  it.each([
    // role,        execute, write,                            invite, checkpoint, close, override, runs,  isolation,  requires
    ['director', false, ['shared'], true, true, true, true, false, 'standard', null],
    ['executor', true, ['own_home', 'shared', 'project'], false, false, false, false, true, 'standard', null],
    ['observer', false, [], false, false, false, false, false, 'standard', null],
    ['guest', true, ['own_home', 'shared', 'project'], false, false, false, false, true, 'strict', 'allow_guest'],
    ['substitute', true, ['own_home', 'shared', 'project'], false, false, false, false, true, 'standard', 'allow_substitute'],
  ] as const)('given %s, then its permissions are the table row', (role, execute, write, invite, checkpoint, close, override, runs, isolation, requires) => {
    expect(cellPermissions(role)).toEqual({ role, execute_tools: execute, write, read: true, invite, checkpoint, close, override, runs, isolation, requires });
  });

  it('given the default policy, then guest and substitute are disabled and the other roles are not', () => {
    const defaults = { allow_guest: false, allow_substitute: false };
    expect(CellRole.options.filter((role) => roleEnabled(role, defaults))).toEqual(['director', 'executor', 'observer']);
    expect(CellRole.options.every((role) => roleEnabled(role, ENABLED))).toBe(true);
  });

  it('given the default policy, when a guest is invited, then CELL_ROLE_NOT_ENABLED; enabled, the guest seat is strict', () => {
    spec.given([]).when(cmd.invite(0, 'guest-1', 'guest')).thenThrows('CELL_ROLE_NOT_ENABLED');
    const events = run([cmd.invite(0, 'guest-1', 'guest', { policy: ENABLED })]);
    expect(record(events).participants[1]).toMatchObject({ role: 'guest', isolation: 'strict' });
  });

  it('given a guest, when the cell is prepared on a backend without strict isolation, then CELL_ISOLATION_INSUFFICIENT; a guest invited into such a cell likewise', () => {
    const events = run([cmd.invite(0, 'guest-1', 'guest', { policy: ENABLED }), cmd.accept(1, 'guest-1')]);
    spec.given(events).when(cmd.prepare(2, 'process')).thenThrows('CELL_ISOLATION_INSUFFICIENT');
    const onProcess = run([cmd.invite(0, 'exec-1', 'executor', { policy: ENABLED }), cmd.accept(1), cmd.prepare(2, 'process'), cmd.activate(3)]);
    spec.given(onProcess).when(cmd.invite(4, 'guest-1', 'guest')).thenThrows('CELL_ISOLATION_INSUFFICIENT');
  });

  it('given invite-participant with the substitute role, then CELL_ROLE_INVALID: substitutes join through invite-substitute', () => {
    spec.given(reach('ACTIVE')).when({ ...cmd.invite(40, 'sub-1'), data: { ...(cmd.invite(40, 'sub-1').data as object), role: 'substitute' } } as never).thenThrows('CELL_ROLE_INVALID');
  });

  it('given the director also wants to execute, then it takes a second seat (same principal) as executor; the director seat still cannot run', () => {
    const events = run([cmd.invite(40, 'dir-1-exec', 'executor', { principal_id: 'dir-1' }), cmd.accept(41, 'dir-1-exec')], reach('ACTIVE'));
    const cell = record(events);
    expect(cell.participants.filter((p) => p.principal_id === 'dir-1').map((p) => [p.participant_id, p.role])).toEqual([
      ['dir-1', 'director'],
      ['dir-1-exec', 'executor'],
    ]);
    expect(cell.running.map((r) => r.participant_id)).toEqual(['exec-1', 'dir-1-exec']);
  });
});

describe('substitutes (Lazarus 3: the last checkpoint, never the home)', () => {
  const withCheckpoint = run(
    [cmd.invite(0, 'exec-1', 'executor', { policy: ENABLED }), cmd.accept(10), cmd.prepare(20), cmd.activate(30), cmd.begin(40), cmd.complete(50), cmd.down(200)],
  );

  it('given substitutes disabled, when invite-substitute, then CELL_ROLE_NOT_ENABLED', () => {
    spec.given(reach('DOWNED')).when(cmd.substitute(210)).thenThrows('CELL_ROLE_NOT_ENABLED');
  });

  it('given a DOWNED cell with a checkpoint, when the director invites a substitute, then the event names the checkpoint and excludes the home', () => {
    expect(spec.given(withCheckpoint).when(cmd.substitute(210)).thenEvents()).toMatchObject([
      { type: 'cell.substitute_invited', data: { participant: { participant_id: 'sub-1', role: 'substitute' }, replaces: 'exec-1', inherits_checkpoint_id: 'cp-1', inherits_home: false } },
    ]);
    spec.given(withCheckpoint).when(cmd.substitute(210, 'sub-1', 'exec-1')).thenThrows('CELL_NOT_DIRECTOR');
  });

  it('given an accepted substitute, when it revives the cell, then the predecessor is replaced and only the substitute runs', () => {
    const events = run([cmd.substitute(210), cmd.accept(220, 'sub-1'), cmd.revive(230, 'sub-1')], withCheckpoint);
    expect(events.at(-1)).toEqual({ type: 'cell.revived', data: { revived_by: 'sub-1', replaced: 'exec-1', at: expect.any(String) } });
    const cell = record(events);
    expect(cell.status).toBe('ACTIVE');
    expect(cell.participants.find((p) => p.participant_id === 'exec-1')?.status).toBe('replaced');
    expect(cell.running.map((r) => r.participant_id)).toEqual(['sub-1']);
    expect(writablePaths('substitute', 'sub-1')).not.toContain('home/exec-1/');
  });

  it('given a substitute not yet accepted, when it revives, then CELL_REVIVER_INVALID', () => {
    spec.given(run([cmd.substitute(210)], withCheckpoint)).when(cmd.revive(230, 'sub-1')).thenThrows('CELL_REVIVER_INVALID');
  });
});

describe('filesystem layout (Lazarus 6)', () => {
  it('given a cell and its participants, then the layout is the seed contract with a home per running seat', () => {
    const layout = cellLayout('cell-1', [
      { participant_id: 'exec-1', role: 'executor' },
      { participant_id: 'dir-1', role: 'director' },
      { participant_id: 'obs-1', role: 'observer' },
      { participant_id: 'guest-1', role: 'guest' },
    ]);
    expect(layout).toEqual({
      root: 'cell-1',
      directories: ['.lazarus/', '.lazarus/checkpoints/', 'project/', 'shared/', 'shared/artifacts/', 'home/', 'home/exec-1/', 'home/guest-1/'],
      files: ['.lazarus/cell.json', '.lazarus/spawn.log', '.lazarus/decisions.jsonl', 'shared/scratchpad.md'],
      homes: { 'exec-1': 'home/exec-1/', 'guest-1': 'home/guest-1/' },
    });
  });

  it.each([
    ['director', ['shared/']],
    ['executor', ['home/p-1/', 'shared/', 'project/']],
    ['observer', []],
    ['guest', ['home/p-1/', 'shared/', 'project/']],
    ['substitute', ['home/p-1/', 'shared/', 'project/']],
  ] as const)('given a %s, then it writes exactly %j and never .lazarus/ or another home', (role, paths) => {
    const writable = writablePaths(role, 'p-1');
    expect(writable).toEqual(paths);
    for (const path of writable) expect(path.startsWith('.lazarus') || (path.startsWith('home/') && path !== 'home/p-1/')).toBe(false);
    const readable = readablePaths(role, 'p-1');
    expect(readable.filter((path) => path.startsWith('home/') && path !== 'home/p-1/')).toEqual([]);
  });

  it('given an id that is not one path segment, then CELL_ID_INVALID', () => {
    for (const bad of ['..', 'a/b', '', 'x y']) {
      expect(() => writablePaths('executor', bad)).toThrow(expect.objectContaining({ code: 'CELL_ID_INVALID' }));
      expect(() => cellLayout(bad, [])).toThrow(expect.objectContaining({ code: 'CELL_ID_INVALID' }));
    }
  });
});
