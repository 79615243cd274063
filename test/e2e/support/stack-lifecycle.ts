import { afterAll, beforeEach, expect } from 'vitest';
import type { Stack } from './stack.mjs';

/**
 * The hooks every e2e file shares around its stack (kept out of stack.mjs, which the
 * benchmark imports without vitest): a failed test prints the services' log tails and keeps
 * their logs; after all, every service is stopped and must drain and exit on SIGTERM (none
 * had to be killed). `current` answers the stack once `beforeAll` started it.
 */
export function stopStackAfterAll(current: () => Stack | undefined): void {
  let failed = false;
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      failed = true;
      current()?.printLogTails(40);
    });
  });
  afterAll(async () => {
    const stack = current();
    if (!stack) return;
    const problems = await stack.stop({ keepLogs: failed });
    if (failed) process.stderr.write(`[e2e] service logs kept in ${stack.logDir}\n`);
    expect(problems).toEqual([]);
  }, 120_000);
}
