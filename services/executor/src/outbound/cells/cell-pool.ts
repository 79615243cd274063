import { randomBytes } from 'node:crypto';
import { CellError } from './cell-errors.js';
import type { CellRuntime, PooledCell } from './cell-runtime.js';

/**
 * The warm pool: hardened cells created and started before any task needs one, so
 * that the first action of a new task does not wait for a container start.
 *
 * A pooled cell is made from exactly the request of a task's cell (cell-hardening.ts)
 * except its task binding: no task id, a pool name, and a fresh empty workspace under
 * `<cellsRoot>/.pool/<owner>/<slot>/workspace`. `CellRuntime.openCell` of a task that has
 * no cell and no workspace yet takes one (`take()`), renames the container to the task's
 * name, moves the workspace to `<cellsRoot>/<taskId>/workspace` (the running container keeps
 * its mount: a bind mount pins the directory, not its path) and records the binding in
 * `<cellsRoot>/<taskId>/cell.json`, which is how a restarted executor recognises the cell.
 *
 * Bounds: at most `size` cells are ready or being created at any time; `take()` is
 * synchronous, so concurrent opens never share a cell nor push the pool past its size.
 * The refill runs in the background but is always a tracked promise: `stop()` waits for
 * it, then removes every pooled cell. `start()` first reaps what a crashed process of the
 * same owner left (pool containers that were never claimed, and their directories).
 */

/** Largest pool a configuration may ask for. */
export const CELL_POOL_MAX_SIZE = 32;

/** What the pool logs (a pino logger fits). */
export interface CellPoolLogger {
  warn(object: Record<string, unknown>, message: string): void;
  info?(object: Record<string, unknown>, message: string): void;
}

export interface CellPoolOptions {
  /** Cells kept ready: 0..32 (0: no pool, every open is cold). */
  readonly size: number;
  /**
   * Who owns these pooled cells on this Docker host (the executor id). Start-up reaps
   * only the unclaimed cells of the same owner, so executors sharing a host leave each
   * other's pools alone (and so do processes on other cells roots). 1-128 of A-Z a-z 0-9 _ -.
   */
  readonly owner: string;
  readonly logger?: CellPoolLogger;
}

export interface CellPoolStats {
  readonly size: number;
  readonly ready: number;
  readonly creating: number;
  /** Cells handed to tasks since start. */
  readonly claimed: number;
  /** Most cells ready or being created at one moment since start (never above `size`). */
  readonly high_water: number;
  /** Refill attempts that failed (each is logged). */
  readonly failures: number;
}

const OWNER_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export class CellPool {
  readonly size: number;
  readonly owner: string;
  readonly #runtime: CellRuntime;
  readonly #logger: CellPoolLogger | undefined;
  readonly #ready: PooledCell[] = [];
  #creating = 0;
  #claimed = 0;
  #highWater = 0;
  #failures = 0;
  #slot = 0;
  readonly #run = randomBytes(4).toString('hex');
  #started = false;
  #stopped = false;
  /** The one background refill, if running. */
  #refill: Promise<void> | undefined;

  constructor(runtime: CellRuntime, options: CellPoolOptions) {
    if (!Number.isSafeInteger(options.size) || options.size < 0 || options.size > CELL_POOL_MAX_SIZE) {
      throw new CellError('CELL_ARGUMENT_INVALID', `the pool size must be an integer in 0..${CELL_POOL_MAX_SIZE}, got ${String(options.size)}`, { details: { option: 'size' } });
    }
    if (!OWNER_PATTERN.test(options.owner)) {
      throw new CellError('CELL_ARGUMENT_INVALID', `the pool owner must be 1-128 characters of A-Z, a-z, 0-9, "_" or "-", got ${JSON.stringify(options.owner)}`, {
        details: { option: 'owner' },
      });
    }
    this.size = options.size;
    this.owner = options.owner;
    this.#runtime = runtime;
    this.#logger = options.logger;
  }

  /**
   * Reaps the owner's orphans, attaches the pool to the runtime and starts filling it
   * (in the background: a missing image or an unreachable Docker is logged, not thrown,
   * so the executor still starts and reports it through readiness).
   */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    try {
      const reaped = await this.#runtime.reapPool(this.owner);
      if (reaped > 0) this.#logger?.info?.({ owner: this.owner, reaped }, 'reaped pooled cells left by an earlier process');
    } catch (error) {
      this.#logger?.warn({ owner: this.owner, err: error }, 'could not reap the pooled cells of an earlier process');
    }
    if (this.size === 0) return;
    this.#runtime.attachPool(this);
    this.#kick();
  }

  /** A ready cell for a new task, or undefined (the caller opens a cold one). Starts a refill. */
  take(): PooledCell | undefined {
    if (this.#stopped) return undefined;
    const cell = this.#ready.shift();
    if (cell !== undefined) this.#claimed += 1;
    this.#kick();
    return cell;
  }

  /** Resolves when no refill is running (the pool is full, stopped, or the last refill failed). */
  async settled(): Promise<void> {
    while (this.#refill !== undefined) await this.#refill;
  }

  stats(): CellPoolStats {
    return {
      size: this.size,
      ready: this.#ready.length,
      creating: this.#creating,
      claimed: this.#claimed,
      high_water: this.#highWater,
      failures: this.#failures,
    };
  }

  /** Stops refilling, waits for the refill in flight, and removes every unclaimed cell. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#runtime.detachPool(this);
    await this.settled();
    const cells = this.#ready.splice(0);
    const results = await Promise.allSettled(cells.map((cell) => this.#runtime.removePooledCell(cell)));
    for (const [index, result] of results.entries()) {
      if (result.status === 'rejected') this.#logger?.warn({ owner: this.owner, container: cells[index]?.container_name, err: result.reason }, 'could not remove a pooled cell');
    }
    await this.#runtime.reapPool(this.owner).catch((error: unknown) => {
      this.#logger?.warn({ owner: this.owner, err: error }, 'could not reap the pool at shutdown');
    });
  }

  #kick(): void {
    if (this.#stopped || this.#refill !== undefined || this.#ready.length + this.#creating >= this.size) return;
    this.#refill = this.#fill().finally(() => {
      this.#refill = undefined;
    });
  }

  /**
   * Creates cells one at a time until the pool is full. One failure ends this refill
   * (logged; the next `take()` tries again), so a missing image never spins.
   */
  async #fill(): Promise<void> {
    while (!this.#stopped && this.#ready.length + this.#creating < this.size) {
      this.#creating += 1;
      this.#highWater = Math.max(this.#highWater, this.#ready.length + this.#creating);
      this.#slot += 1;
      const slot = `${this.#run}-${this.#slot}`;
      try {
        const cell = await this.#runtime.createPooledCell(this.owner, slot);
        if (this.#stopped) {
          await this.#runtime.removePooledCell(cell);
        } else {
          this.#ready.push(cell);
        }
      } catch (error) {
        this.#failures += 1;
        this.#logger?.warn({ owner: this.owner, slot, err: error }, 'could not prepare a pooled cell; the pool refills at the next open');
        return;
      } finally {
        this.#creating -= 1;
      }
    }
  }
}
