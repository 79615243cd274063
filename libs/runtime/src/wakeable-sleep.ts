/**
 * The pause of a polling or retry loop that a graceful stop ends at once
 * (`wake`), so a stop never waits out an interval or a backoff.
 */
export class WakeableSleep {
  #wake: (() => void) | undefined;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.#wake === done) this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }

  /** Ends the pause in progress (if any) now. */
  wake(): void {
    this.#wake?.();
  }
}
