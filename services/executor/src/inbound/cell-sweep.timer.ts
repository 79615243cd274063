import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '@writ/telemetry';

/** What the timer drives (application/cell-lifecycle.ts). */
export interface CellSweeping {
  sweep(): Promise<unknown>;
}

/**
 * The executor's cell sweep every `intervalMs`: one tracked loop (never two sweeps at
 * once), started with the service and awaited when it stops. 0 disables it (a test then
 * sweeps by hand). A failed sweep is logged; the next one runs on time.
 */
export class CellSweepTimer {
  readonly #sweeper: CellSweeping;
  readonly #intervalMs: number;
  readonly #logger: Logger | undefined;
  readonly #stopping = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(sweeper: CellSweeping, intervalMs: number, logger?: Logger) {
    this.#sweeper = sweeper;
    this.#intervalMs = intervalMs;
    this.#logger = logger;
  }

  start(): void {
    if (this.#intervalMs <= 0 || this.#loop !== undefined || this.#stopping.signal.aborted) return;
    this.#loop = this.#run();
  }

  /** Stops the loop and waits for a sweep in progress to end. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    for (;;) {
      try {
        await delay(this.#intervalMs, undefined, { signal: this.#stopping.signal });
      } catch {
        return;
      }
      try {
        await this.#sweeper.sweep();
      } catch (error) {
        this.#logger?.warn({ err: error }, 'cell sweep failed; the next one runs on time');
      }
    }
  }
}
