import { describe, expect, it } from 'vitest';
// eslint-disable-next-line @nx/enforce-module-boundaries -- scripts/ is in no Nx project (nothing to place it by); the bench's own helpers are tested from here
import { CellCpuLedger } from '../../scripts/bench/cell-cpu.mjs';

// The cells row of e2e.bench.mjs: a cell's cgroup goes with it, so the ledger must say which
// figures are whole and which stop at a cell's last reading.

describe('CellCpuLedger', () => {
  it('given a cell running before the window and read again at its end, then only the time in between counts', () => {
    const ledger = new CellCpuLedger();

    ledger.reading('a', 5_000, { before: true });
    ledger.reading('a', 7_500);

    expect(ledger.summary()).toEqual({ usec: 2_500, cells: 1, created: 0, stopped: 0, missed: 0, unreadable: 0 });
  });

  it('given a cell that started in the window, then all of its time counts from zero', () => {
    const ledger = new CellCpuLedger();

    ledger.reading('b', 1_200);
    ledger.reading('b', 4_000);

    expect(ledger.summary()).toMatchObject({ usec: 4_000, cells: 1, created: 1 });
  });

  it('given a cell that stopped, then it counts up to its last reading and later readings change nothing', () => {
    const ledger = new CellCpuLedger();
    ledger.reading('c', 100, { before: true });
    ledger.reading('c', 900);

    ledger.stopped('c');
    ledger.reading('c', 5_000);

    expect(ledger.summary()).toMatchObject({ usec: 800, stopped: 1 });
  });

  it('given a reading lower than the last (read out of order), then the cell keeps its highest', () => {
    const ledger = new CellCpuLedger();
    ledger.reading('d', 300);

    ledger.reading('d', 200);

    expect(ledger.summary()).toMatchObject({ usec: 300 });
  });

  it('given a cell that stopped before any reading, and one whose cgroup cannot be found, then each is reported apart and counts nothing', () => {
    const ledger = new CellCpuLedger();

    ledger.stopped('e');
    ledger.unreadable('f');

    expect(ledger.summary()).toEqual({ usec: 0, cells: 0, created: 0, stopped: 0, missed: 1, unreadable: 1 });
  });
});
