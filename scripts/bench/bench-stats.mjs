// What every benchmark script shares: its integer options and its order statistics.
// Not a test: the scripts print figures, they assert nothing.

/**
 * An integer option: `--name` (from `parseArgs` values), else BENCH_<NAME>, else `fallback`;
 * anything below `min` or not an integer stops the script with a message naming the option.
 */
export function integerOption(args, name, fallback, min = 1) {
  const raw = args[name] ?? process.env[`BENCH_${name.toUpperCase()}`];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer >= ${min}, got ${raw}`);
  return value;
}

/** Nearest-rank percentile (`p` in 0..100) of ascending `sorted`; NaN when empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

/** The value at fraction `q` (0..1) of ascending `sorted` (index floor(q·n)); NaN when empty. */
export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
