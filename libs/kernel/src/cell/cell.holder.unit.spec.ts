import { describe, expect, it } from 'vitest';
import { cmd, run } from '../../test/cell-flow.js';
import { at, meta } from '../../test/decider-spec.js';
import { fold } from '../shared/decider.js';
import { cellDecider, cellHolder, type CellCommand, type CellState } from './cell.decider.js';

// The host holding a cell's files (issue 5: several executors on several Docker hosts): recorded by the
// events that place the cell on a host, optional so that streams recorded before hosts fold as they did.

const state = (commands: readonly CellCommand[]): CellState => fold(cellDecider, run(commands));
const on = <T extends CellCommand>(command: T, hostId: string): T => ({ ...command, data: { ...command.data, host_id: hostId } }) as T;
const resurrect = (s: number, hostId?: string): CellCommand => ({ type: 'resurrect-cell', data: { resurrected_by: 'dir-1', ...(hostId ? { host_id: hostId } : {}) }, metadata: meta(s) });

describe('cell holder: which host holds the cell', () => {
  it('given a cell prepared on host-a, when it spawns there, then cell.preparing and cell.activated name host-a and the cell is held by host-a', () => {
    const events = run([cmd.invite(0), cmd.accept(10), on(cmd.prepare(20), 'host-a'), on(cmd.activate(30), 'host-a')]);
    expect(events[2]).toEqual({ type: 'cell.preparing', data: { backend: 'docker', prepared_by: 'writ-executor', host_id: 'host-a', at: at(20) } });
    expect(events[3]?.data).toMatchObject({ host_id: 'host-a' });
    expect(cellHolder(fold(cellDecider, events))).toBe('host-a');
  });

  it('given a cell prepared on host-a, when host-b takes the spawn over, then the cell is held by host-b', () => {
    expect(cellHolder(state([cmd.invite(0), cmd.accept(10), on(cmd.prepare(20), 'host-a'), on(cmd.activate(30), 'host-b')]))).toBe('host-b');
  });

  it('given a cell held by host-a gone DOWNED, when it is revived on host-b, then cell.revived names host-b and the cell is held by host-b', () => {
    const events = run([cmd.invite(0), cmd.accept(10), on(cmd.prepare(20), 'host-a'), on(cmd.activate(30), 'host-a'), cmd.down(120), on(cmd.revive(130), 'host-b')]);
    expect(events.at(-1)?.data).toMatchObject({ revived_by: 'exec-1', host_id: 'host-b' });
    expect(cellHolder(fold(cellDecider, events.slice(0, -1)))).toBe('host-a');
    expect(cellHolder(fold(cellDecider, events))).toBe('host-b');
  });

  it('given a closed cell held by host-a, when a director resurrects it on host-b, then the cell is held by host-b; its graveyard held by host-a until then', () => {
    const closed = [cmd.invite(0), cmd.accept(10), on(cmd.prepare(20), 'host-a'), on(cmd.activate(30), 'host-a'), cmd.close(60)];
    expect(cellHolder(state(closed))).toBe('host-a');
    expect(cellHolder(state([...closed, resurrect(70, 'host-b')]))).toBe('host-b');
  });

  it('given no cell, an invited one or an archived one, then no host holds it', () => {
    expect(cellHolder(state([]))).toBeNull();
    expect(cellHolder(state([cmd.invite(0)]))).toBeNull();
    expect(cellHolder(state([cmd.invite(0), cmd.accept(10), on(cmd.prepare(20), 'host-a'), on(cmd.activate(30), 'host-a'), cmd.close(60), cmd.archive(60 + 1_800)]))).toBeNull();
  });

  it('given events that name no host (recorded before hosts were), then they fold as before, without a host_id, and the holder is unknown', () => {
    const events = run([cmd.invite(0), cmd.accept(10), cmd.prepare(20), cmd.activate(30)]);
    expect(events.every((event) => !Object.hasOwn(event.data, 'host_id'))).toBe(true);
    const folded = fold(cellDecider, events);
    expect(folded.status).toBe('ACTIVE');
    expect(Object.hasOwn(folded, 'host_id')).toBe(false);
    expect(cellHolder(folded)).toBeNull();
  });

  it('given a cell held by host-a, when it is resurrected by an adapter that names no host, then the holder becomes unknown, never host-a by default', () => {
    expect(cellHolder(state([cmd.invite(0), cmd.accept(10), on(cmd.prepare(20), 'host-a'), on(cmd.activate(30), 'host-a'), cmd.close(60), resurrect(70)]))).toBeNull();
  });

  it('given a host_id that is not an id (a subject wildcard), when prepare-cell, then KERNEL_COMMAND_INVALID and no event', () => {
    const given = run([cmd.invite(0), cmd.accept(10)]);
    let code: unknown;
    try {
      cellDecider.decide(on(cmd.prepare(20), 'host.>'), fold(cellDecider, given));
    } catch (error) {
      code = (error as { code?: unknown }).code;
    }
    expect(code).toBe('KERNEL_COMMAND_INVALID');
  });
});
