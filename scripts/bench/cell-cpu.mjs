// The CPU the cells of one stack used in a window: the work of the containers themselves (the
// action, the in-cell supervisor), which no Docker engine process holds while they run.
//
// A cell's cgroup counts it (cgroup-cpu.mjs), but the cgroup goes with the container, before
// Docker reports the `die`: a task's cell closed in the window (the orchestrator closes it once
// the task ends) is only known up to its last reading. So every cell of the stack is read when
// the window opens, when it starts in the window (Docker `start` events), every `intervalMs`
// while it runs, and when the window closes; a cell that stopped in between is counted up to
// its last reading and reported as such.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { containerCpuFile, readCpuUsec } from './cgroup-cpu.mjs';

/**
 * Per-cell accounting of the readings (pure; `trackCells` feeds it): a cell that ran when the
 * window opened counts from its first reading, one first seen later started in the window and
 * counts from zero (its cgroup is new).
 */
export class CellCpuLedger {
  #cells = new Map();
  #unreadable = new Set();
  #missed = new Set();

  /** A reading of cell `id`, in microseconds; `{ before: true }` for the readings as the window opens. */
  reading(id, usec, { before = false } = {}) {
    const cell = this.#cells.get(id);
    if (cell === undefined) this.#cells.set(id, { base: before ? usec : 0, last: usec, created: !before, stopped: false });
    else if (!cell.stopped) cell.last = Math.max(cell.last, usec);
  }

  /** Cell `id` stopped: what it did after its last reading is gone with its cgroup. */
  stopped(id) {
    const cell = this.#cells.get(id);
    if (cell !== undefined) cell.stopped = true;
    else this.#missed.add(id); // stopped before its first reading: nothing of it is known
  }

  /** Cell `id` runs but its cgroup could not be found (an unknown layout, or not root). */
  unreadable(id) {
    this.#unreadable.add(id);
  }

  /**
   * Microseconds over the window, and what the figure covers: `stopped` cells count up to their
   * last reading, `missed` ones (stopped before any) not at all, `unreadable` ones neither.
   */
  summary() {
    let usec = 0;
    let created = 0;
    let stopped = 0;
    for (const cell of this.#cells.values()) {
      usec += cell.last - cell.base;
      if (cell.created) created += 1;
      if (cell.stopped) stopped += 1;
    }
    return { usec, cells: this.#cells.size, created, stopped, missed: this.#missed.size, unreadable: this.#unreadable.size };
  }
}

/**
 * Starts tracking the running cells of one stack (label writ.cell, a workspace under
 * `cellsRoot`, as the harness's own clean-up finds them) with `docker` (dockerode), and the
 * cells it starts; `stop()` reads them a last time and returns the ledger's summary and where
 * the figures came from. Call it before the window opens and stop it after it closes: the
 * Docker look-ups of the start and the end fall outside.
 */
export async function trackCells(docker, { cellsRoot, executorId, intervalMs = 250 }) {
  const ledger = new CellCpuLedger();
  const files = new Map(); // id → the cgroup file of a running cell
  const sources = new Set();
  const ours = (mounts) => (mounts ?? []).some((mount) => typeof mount.Source === 'string' && mount.Source.startsWith(`${cellsRoot}/`));

  const follow = async (id, { before }) => {
    const info = await docker.getContainer(id).inspect().catch(() => null);
    if (info === null || !ours(info.Mounts)) return;
    const file = info.State?.Running && info.State.Pid > 0 ? containerCpuFile(info.State.Pid, id) : null;
    const usec = file === null ? null : readCpuUsec(file);
    if (file === null || usec === null) {
      if (info.State?.Running) ledger.unreadable(id);
      else ledger.stopped(id);
      return;
    }
    files.set(id, file);
    sources.add(file.source);
    ledger.reading(id, usec, { before });
  };
  const readAll = () => {
    for (const [id, file] of files) {
      const usec = readCpuUsec(file);
      if (usec !== null) ledger.reading(id, usec);
    }
  };

  // Events first, so that no cell starts unseen between the listing and the subscription.
  const events = await docker.getEvents({ filters: { type: ['container'], event: ['start', 'die'], label: ['writ.cell'] } });
  const pending = [];
  let buffered = '';
  events.on('data', (chunk) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (line === '') continue;
      const event = JSON.parse(line);
      const id = event.Actor?.ID ?? event.id;
      const labels = event.Actor?.Attributes ?? {};
      if (event.Action === 'die') {
        if (files.has(id)) {
          const usec = readCpuUsec(files.get(id));
          if (usec !== null) ledger.reading(id, usec);
          files.delete(id);
          ledger.stopped(id);
        }
        continue;
      }
      // A start: look only at what may be this stack's (its pool's, or a task whose workspace is here).
      const taskId = labels['writ.task_id'];
      const maybeOurs = labels['writ.cell.pool.owner'] === executorId || (typeof taskId === 'string' && taskId !== '' && existsSync(path.join(cellsRoot, taskId)));
      if (maybeOurs) pending.push(follow(id, { before: false }));
    }
  });
  events.on('error', () => undefined);

  const running = await docker.listContainers({ filters: { label: ['writ.cell'] } });
  for (const container of running.filter((candidate) => ours(candidate.Mounts))) await follow(container.Id, { before: true });
  const timer = setInterval(readAll, intervalMs);

  return {
    async stop() {
      clearInterval(timer);
      readAll();
      await Promise.all(pending);
      readAll();
      events.destroy();
      return { ...ledger.summary(), intervalMs, source: [...sources].join(', ') };
    },
  };
}
