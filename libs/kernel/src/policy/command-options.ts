/**
 * Helpers to read command-line options the way getopt-style programs do:
 * short clusters (`-rf`), long options with GNU abbreviation (`--rec` is
 * `--recursive`), `--name=value`, and `--` ending options.
 */

/** The arguments before `--` (options and operands mixed) and the operands after it. */
export function splitAtDoubleDash(args: readonly string[]): { before: readonly string[]; after: readonly string[] } {
  const index = args.indexOf('--');
  return index < 0 ? { before: args, after: [] } : { before: args.slice(0, index), after: args.slice(index + 1) };
}

/** True for `-x...` (a short-option cluster), not `-`, `--...` or a negative number. */
export function isShortCluster(arg: string): boolean {
  return arg.length > 1 && arg.startsWith('-') && !arg.startsWith('--');
}

/**
 * The letters of a short-option cluster, stopping at the first letter that
 * takes a value (its value is the rest of the cluster).
 */
export function clusterLetters(arg: string, valueLetters = ''): string {
  let letters = '';
  for (const c of arg.slice(1)) {
    letters += c;
    if (valueLetters.includes(c)) break;
  }
  return letters;
}

/** The name of a long option (`--force-with-lease=x` → `force-with-lease`), or undefined. */
export function longName(arg: string): string | undefined {
  if (!arg.startsWith('--') || arg.length === 2) return undefined;
  return arg.slice(2).split('=')[0];
}

/** True when `arg` is `--name` or a GNU abbreviation of it of at least `min` characters. */
export function isLong(arg: string, name: string, min = 1): boolean {
  const given = longName(arg);
  return given !== undefined && given.length >= min && name.startsWith(given);
}

/** True when any option before `--` is the short letter `letter` (in a cluster) or the long option `long`. */
export function hasFlag(args: readonly string[], letter: string | null, long: string | null, valueLetters = ''): boolean {
  return splitAtDoubleDash(args).before.some(
    (arg) => (letter !== null && isShortCluster(arg) && clusterLetters(arg, valueLetters).includes(letter)) || (long !== null && isLong(arg, long)),
  );
}

export interface OperandSpec {
  /** Short options that take a value in the next argument (or attached): `-t`, `-m`... */
  readonly shortValues?: string;
  /** Long options that take a value in the next argument when not given with `=`. */
  readonly longValues?: readonly string[];
}

export interface ParsedArgs {
  readonly operands: readonly string[];
  /** Values of value-taking options, by option letter or long name. */
  readonly values: ReadonlyMap<string, readonly string[]>;
}

/** Splits arguments into operands and option values (options themselves are dropped). */
export function parseArgs(args: readonly string[], spec: OperandSpec = {}): ParsedArgs {
  const operands: string[] = [];
  const values = new Map<string, string[]>();
  const add = (key: string, value: string | undefined) => {
    if (value === undefined) return;
    values.set(key, [...(values.get(key) ?? []), value]);
  };
  const shortValues = spec.shortValues ?? '';
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    const long = longName(arg);
    if (long !== undefined) {
      const name = (spec.longValues ?? []).find((candidate) => candidate.startsWith(long));
      if (name !== undefined) {
        if (arg.includes('=')) add(name, arg.slice(arg.indexOf('=') + 1));
        else {
          add(name, args[i + 1]);
          i += 1;
        }
      }
      continue;
    }
    if (isShortCluster(arg)) {
      const letters = clusterLetters(arg, shortValues);
      const last = letters[letters.length - 1] as string;
      if (shortValues.includes(last)) {
        const attached = arg.slice(1 + letters.length);
        if (attached.length > 0) add(last, attached);
        else {
          add(last, args[i + 1]);
          i += 1;
        }
      }
      continue;
    }
    operands.push(arg);
  }
  return { operands, values };
}

/** The last path segment of a program name: `/usr/bin/rm` → `rm`. */
export function programName(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash < 0 ? word : word.slice(slash + 1);
}
