import { CellPolicy } from '@writ/kernel';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryCellHost, MemoryCellLog, MemoryCheckpointStore } from '../../test/memory-cells.js';
import { MemoryTaskLog } from '../../test/memory-log.js';
import { CellLifecycle, formatDuration } from './cell-lifecycle.js';
import { TaskSerializer } from './task-serializer.js';

/**
 * A director's renewal of a cell's active TTL through the cell lifecycle, against in-memory
 * ports and a clock the test moves (the executor's request/reply path against the real NATS is
 * src/renew-cell.int.spec.ts): who the event names, a request applied once whoever answers it,
 * the holder's `.lazarus/cell.json` kept in step, and refusals that say what to do next.
 */

const T0 = Date.parse('2030-01-01T00:00:00Z');
const MIN = 60_000;
const HOUR = 60 * MIN;
const CELL = 'task-1';
const DIRECTOR = { id: 'alice', type: 'user' } as const;

let log: MemoryCellLog;
let offset: number;

function lifecycle(host: MemoryCellHost, executorId = 'executor-a'): CellLifecycle {
  return new CellLifecycle(
    { log, host, store: new MemoryCheckpointStore(), tasks: new MemoryTaskLog(), serializer: new TaskSerializer(), clock: () => new Date(T0 + offset) },
    { executorId, principalId: 'writ-executor', policy: CellPolicy.parse({}), checkpointIntervalMs: 0 },
  );
}

/** Counts the host's writes of `.lazarus/cell.json`. */
function countingMetadata(host: MemoryCellHost): { writes: number } {
  const counter = { writes: 0 };
  const write = host.writeMetadata.bind(host);
  host.writeMetadata = async (cellId, metadata) => {
    counter.writes += 1;
    await write(cellId, metadata);
  };
  return counter;
}

const at = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');

beforeEach(() => {
  log = new MemoryCellLog();
  offset = 0;
});

describe('cell lifecycle: renewing the active TTL', () => {
  it('given an ACTIVE cell this host runs, when a director renews it by 2h, then cell.ttl_renewed names the director as actor and the request as cause, and cell.json carries the new expiry at once', async () => {
    const host = new MemoryCellHost();
    const cells = lifecycle(host);
    await cells.prepareForAction(CELL, 'agent-1');
    offset = 10 * MIN;

    const result = await cells.renew(CELL, { renewed_by: DIRECTOR, extend_ms: 2 * HOUR }, 'crn-1');

    expect(result).toEqual({ status: 'renewed', previous_expires_at: at(T0 + 4 * HOUR), active_expires_at: at(T0 + 6 * HOUR), max_expires_at: at(T0 + 24 * HOUR), event_id: result.event_id });
    // the cell's own director seat is agent-1 (no task.created): alice, a Writ director, acts for it
    expect(log.streams.get(CELL)?.at(-1)).toMatchObject({ event_type: 'cell.ttl_renewed', actor_type: 'user', actor_id: 'alice', causation_id: 'crn-1', event_id: result.event_id, payload: { renewed_by: 'agent-1' } });
    expect(host.metadata.get(CELL)).toMatchObject({ active_expires_at: at(T0 + 6 * HOUR), spawn_seq: 4 });
  });

  it('given a renewal answered by an executor that does not hold the cell, then only the log changes there, and the holder’s next sweep rewrites cell.json once', async () => {
    const holderHost = new MemoryCellHost();
    const holder = lifecycle(holderHost);
    await holder.prepareForAction(CELL, 'agent-1');
    const writes = countingMetadata(holderHost);
    const otherHost = new MemoryCellHost();

    await lifecycle(otherHost, 'executor-b').renew(CELL, { renewed_by: DIRECTOR, extend_ms: HOUR }, 'crn-1');
    expect(otherHost.metadata.size).toBe(0);
    expect(holderHost.metadata.get(CELL)).toMatchObject({ active_expires_at: at(T0 + 4 * HOUR) });

    await holder.sweep();
    expect(holderHost.metadata.get(CELL)).toMatchObject({ active_expires_at: at(T0 + 5 * HOUR) });
    await holder.sweep();
    expect(writes.writes).toBe(1);
  });

  it('given the same request reaching two executors at once, then the window is extended once: one appends, the other answers already_renewed with the same event', async () => {
    await lifecycle(new MemoryCellHost()).prepareForAction(CELL, 'agent-1');
    const [a, b] = await Promise.all([
      lifecycle(new MemoryCellHost(), 'executor-a').renew(CELL, { renewed_by: DIRECTOR, extend_ms: HOUR }, 'crn-same'),
      lifecycle(new MemoryCellHost(), 'executor-b').renew(CELL, { renewed_by: DIRECTOR, extend_ms: HOUR }, 'crn-same'),
    ]);
    expect([a.status, b.status].sort()).toEqual(['already_renewed', 'renewed']);
    expect(a.event_id).toBe(b.event_id);
    expect(a.active_expires_at).toBe(at(T0 + 5 * HOUR));
    expect(log.types(CELL).filter((type) => type === 'cell.ttl_renewed')).toHaveLength(1);
  });

  it('given a cell whose window already ended (not yet swept), when renewed, then CELL_ACTIVE_TTL_EXPIRED saying it will close and how it comes back', async () => {
    await lifecycle(new MemoryCellHost()).prepareForAction(CELL, 'agent-1');
    offset = 4 * HOUR;
    const renewing = lifecycle(new MemoryCellHost()).renew(CELL, { renewed_by: DIRECTOR }, 'crn-1');
    await expect(renewing).rejects.toMatchObject({ code: 'CELL_ACTIVE_TTL_EXPIRED', message: expect.stringContaining('writ cell resurrect') });
    expect(log.types(CELL)).toHaveLength(4);
  });

  it('given no cell, then EXECUTOR_CELL_NOT_FOUND and no stream is started', async () => {
    await expect(lifecycle(new MemoryCellHost()).renew(CELL, { renewed_by: DIRECTOR }, 'crn-1')).rejects.toMatchObject({ code: 'EXECUTOR_CELL_NOT_FOUND' });
    expect(log.streams.has(CELL)).toBe(false);
  });

  it.each([
    { ms: 17.5 * HOUR, want: '17h30m' },
    { ms: 2 * HOUR, want: '2h' },
    { ms: 90_000, want: '1m30s' },
    { ms: 59_999, want: '59s' },
    { ms: 0, want: '0s' },
  ])('given a room of $ms ms, then the refusal suggests --extend $want (rounded down, never past the ceiling)', ({ ms, want }) => {
    expect(formatDuration(ms)).toBe(want);
  });
});
