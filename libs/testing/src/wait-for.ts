/**
 * Polls `probe` until it returns a value other than undefined. Tests wait on a
 * checkpoint or an event this way, never on a fixed sleep; the deadline only
 * bounds a test that would otherwise hang.
 */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  { timeoutMs = 10_000, intervalMs = 10, what = 'condition' }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
