/** Below this many items a scan is cheaper than hashing into a Set (and allocates nothing but the result). */
const SCAN_LIMIT = 16;

/**
 * The values without repeats, first occurrence kept, in order (what
 * `[...new Set(values)]` gives). A decision builds several of these lists
 * and they hold a handful of items; long ones (a command naming thousands of
 * targets) still go through a Set, so the cost stays linear.
 */
export function distinct(values: readonly string[]): string[] {
  if (values.length > SCAN_LIMIT) return [...new Set(values)];
  const out: string[] = [];
  for (const value of values) if (!out.includes(value)) out.push(value);
  return out;
}
