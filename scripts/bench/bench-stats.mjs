// What every benchmark script shares: its command line, its integer options and its order statistics.
// Not a test: the scripts print figures, they assert nothing.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/**
 * A script's options (`parseArgs` values) with `--help` / `-h` added: help prints the script's
 * leading `//` comment (its documentation: what it measures, how to run it) and exits 0; an
 * unknown or malformed option prints one line naming it and `--help`, and exits 2, instead of
 * a stack trace.
 */
export function benchArgs(scriptUrl, options) {
  const script = fileURLToPath(scriptUrl);
  try {
    const { values } = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h' } } });
    if (!values.help) return values;
    const header = readFileSync(script, 'utf8').split('\n');
    const end = header.findIndex((line) => !line.startsWith('//'));
    console.log(header.slice(0, end === -1 ? header.length : end).map((line) => line.replace(/^\/\/ ?/, '')).join('\n'));
    process.exit(0);
  } catch (error) {
    if (!(error instanceof TypeError) || !String(error.code).startsWith('ERR_PARSE_ARGS')) throw error;
    console.error(`[bench] ${error.message}; see: node ${script.replace(`${process.cwd()}/`, '')} --help`);
    process.exit(2);
  }
}

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
