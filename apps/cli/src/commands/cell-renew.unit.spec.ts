import { describe, expect, it } from 'vitest';
import { parseDuration } from './cell-renew.js';

/*
 * `writ cell renew --extend <duration>`: hours, minutes and seconds in that order, from 1 s to
 * 24 h (the seed's ceiling on a window); anything else is a usage error before anything is signed.
 */

const H = 3_600_000;
const M = 60_000;

describe('writ cell renew --extend', () => {
  it.each([
    { note: 'hours', input: '2h', want: 2 * H },
    { note: 'minutes past an hour', input: '90m', want: 90 * M },
    { note: 'hours and minutes', input: '1h30m', want: 90 * M },
    { note: 'every unit', input: '1h2m3s', want: H + 2 * M + 3_000 },
    { note: 'the smallest extension the kernel takes', input: '1s', want: 1_000 },
    { note: 'the seed ceiling itself', input: '24h', want: 24 * H },
    { note: 'the ceiling in minutes', input: '1440m', want: 24 * H },
    { note: 'surrounding blanks', input: ' 45m ', want: 45 * M },
    { note: 'an executor refusal message suggests this form', input: '3h20m', want: 200 * M },
  ])('given $note ($input), then $want ms', ({ input, want }) => {
    expect(parseDuration(input)).toBe(want);
  });

  it.each([
    { note: 'nothing', input: '' },
    { note: 'a bare number (no unit)', input: '7200' },
    { note: 'zero', input: '0h' },
    { note: 'past the 24 h ceiling', input: '25h' },
    { note: 'one second past the ceiling', input: '24h0m1s' },
    { note: 'units out of order', input: '30m1h' },
    { note: 'days (not a unit here)', input: '1d' },
    { note: 'a fraction', input: '1.5h' },
    { note: 'a negative duration', input: '-2h' },
    { note: 'an ISO 8601 duration', input: 'PT2H' },
    { note: 'upper-case units', input: '2H' },
    { note: 'a unit repeated', input: '1h1h' },
    { note: 'digits beyond any sane size', input: '9999999h' },
  ])('given $note ($input), then CLI_USAGE naming the flag', ({ input }) => {
    expect(() => parseDuration(input)).toThrow(expect.objectContaining({ code: 'CLI_USAGE', details: { flag: '--extend', value: input } }));
  });
});
