import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseOncePerData, totalEvolve } from './decider.js';

const Event = z.discriminatedUnion('type', [
  z.object({ type: z.literal('counter.added'), data: z.object({ by: z.number().int() }) }),
  z.object({ type: z.literal('counter.reset'), data: z.object({}) }),
]);

function countingParse() {
  let calls = 0;
  const parse = parseOncePerData((value: unknown) => {
    calls++;
    return Event.safeParse(value);
  });
  return { parse, calls: () => calls };
}

describe('parseOncePerData', () => {
  it('given the same stored event folded twice, when parsed, then the schema runs once and both verdicts agree', () => {
    // given one event's data object, as a read cache hands it out again
    const { parse, calls } = countingParse();
    const data = { by: 2 };
    // when two folds build their own { type, data } around it
    const first = parse({ type: 'counter.added', data });
    const second = parse({ type: 'counter.added', data });
    // then
    expect(calls()).toBe(1);
    expect(second).toEqual(first);
    expect(first.success).toBe(true);
  });

  it('given the same data object under another type, when parsed, then it is judged again for that type', () => {
    const { parse, calls } = countingParse();
    const data = { by: 2 };
    expect(parse({ type: 'counter.added', data }).success).toBe(true);
    expect(parse({ type: 'counter.nonsense', data }).success).toBe(false);
    expect(calls()).toBe(2);
  });

  it('given equal but distinct data objects, or data that is not an object, when parsed, then each is judged on its own', () => {
    const { parse, calls } = countingParse();
    parse({ type: 'counter.added', data: { by: 1 } });
    parse({ type: 'counter.added', data: { by: 1 } });
    parse({ type: 'counter.added', data: 7 });
    parse({ type: 'counter.added', data: 7 });
    expect(calls()).toBe(4);
  });
});

describe('totalEvolve', () => {
  const evolve = totalEvolve<{ status: string; anomalies: never[]; total: number }, z.infer<typeof Event>>(Event, (state, event) =>
    event.type === 'counter.added' ? { ...state, total: state.total + event.data.by } : { ...state, total: 0 },
  );
  const initial = { status: 'open', anomalies: [] as never[], total: 0 };

  it('given a malformed event seen before as malformed, when folded again, then it is still an anomaly', () => {
    // given a data object that fails its schema
    const data = { by: 1.5 };
    const once = evolve(initial, { type: 'counter.added', data });
    // when the same stored event is folded again
    const twice = evolve(once, { type: 'counter.added', data });
    // then both times it is recorded as malformed and not applied
    expect(twice.total).toBe(0);
    expect(twice.anomalies).toHaveLength(2);
  });
});
