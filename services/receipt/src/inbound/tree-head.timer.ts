import type { Logger } from '@writ/telemetry';
import type { TlogKeeper } from '../application/tlog-keeper.js';
import { WakeableSleep } from '@writ/runtime';

export interface TreeHeadTimerOptions {
  readonly keeper: TlogKeeper;
  /** `WRIT_TLOG_STH_INTERVAL_MS`. */
  readonly intervalMs: number;
  readonly logger: Logger;
}

/**
 * Publishes a signed tree head every interval when the tree grew since the
 * latest head (an idle log publishes nothing). Every instance runs one; the
 * log's append guard lets one head per size through. Stops for good when the
 * log fails verification.
 */
export class TreeHeadTimer {
  #stopping = false;
  #loop: Promise<void> | undefined;
  readonly #pause = new WakeableSleep();

  constructor(private readonly options: TreeHeadTimerOptions) {}

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#pause.wake();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { keeper, logger, intervalMs } = this.options;
    while (!this.#stopping) {
      await this.#pause.sleep(intervalMs);
      if (this.#stopping) return;
      if (keeper.failure !== undefined) {
        logger.error({ log_id: keeper.logId, code: keeper.failure.code }, 'transparency log failed verification: no more tree heads are signed');
        return;
      }
      try {
        const before = keeper.latestHead?.tree_size;
        const head = await keeper.publishTreeHead('grown');
        if (head !== undefined && head.tree_size !== before) logger.info({ log_id: head.log_id, tree_size: head.tree_size, root_hash: head.root_hash }, 'tree head signed');
      } catch (error) {
        if (!this.#stopping) logger.warn({ err: error, log_id: keeper.logId }, 'tree head not signed this time; trying again at the next interval');
      }
    }
  }
}
