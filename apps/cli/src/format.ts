/**
 * Human-readable output. Everything shown comes from the server, and some of
 * it from agents (an action summary, a reason): control characters and
 * bidirectional overrides are replaced so that no text can move the cursor,
 * recolour or reorder what an approver reads in the terminal.
 */
const UNSAFE = /[\p{Cc}\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;

/** One line of printable text: control characters shown as `\u{..}`, `-` for nothing, cut at `max` characters. */
export function cell(value: unknown, max = 80): string {
  if (value === null || value === undefined || value === '') return '-';
  const raw = typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
  const safe = raw.replace(UNSAFE, (char) => `\\u{${char.codePointAt(0)?.toString(16) ?? '?'}}`);
  const chars = [...safe];
  return chars.length > max ? `${chars.slice(0, Math.max(1, max - 1)).join('')}…` : safe;
}

/** A plain-text table: a header row, then one row per entry, columns padded to their widest cell. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => [...(row[i] ?? '')].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((value, i) => (i === cells.length - 1 ? value : value + ' '.repeat((widths[i] ?? 0) - [...value].length)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)];
}

/** `key: value` lines for the fields that have a value, keys aligned. */
export function fields(entries: readonly (readonly [string, unknown])[], indent = '  '): string[] {
  const present = entries.filter(([, value]) => value !== null && value !== undefined && value !== '');
  const width = Math.max(0, ...present.map(([key]) => key.length));
  return present.map(([key, value]) => `${indent}${`${key}:`.padEnd(width + 1)} ${cell(value, 200)}`);
}
