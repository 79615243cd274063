import { describe, expect, it } from 'vitest';
import { ReadCache } from './read-cache.js';

type Entry = { events: number[]; lastStreamSeq: number };
const entry = (n: number, lastStreamSeq = n): Entry => ({ events: Array.from({ length: n }, (_, i) => i + 1), lastStreamSeq });

describe('ReadCache', () => {
  it('given entries over the event bound, when one more is set, then the least recently read ones are evicted first', () => {
    // given
    const cache = new ReadCache<Entry>(10);
    cache.set('a', entry(4));
    cache.set('b', entry(4));
    cache.get('a');
    // when
    cache.set('c', entry(4));
    // then
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.events).toHaveLength(4);
    expect(cache.get('c')?.events).toHaveLength(4);
    expect(cache.size).toBe(8);
  });

  it('given an aggregate larger than the bound, when set, then it is not cached and nothing else is evicted for it', () => {
    const cache = new ReadCache<Entry>(5);
    cache.set('a', entry(3));
    cache.set('big', entry(6));
    expect(cache.get('big')).toBeUndefined();
    expect(cache.get('a')?.events).toHaveLength(3);
  });

  it('given an entry, when it is replaced or forgotten, then the event count follows', () => {
    const cache = new ReadCache<Entry>(100);
    cache.set('a', entry(3));
    cache.set('a', entry(5));
    expect(cache.size).toBe(5);
    cache.forget('a');
    expect(cache.size).toBe(0);
    expect(cache.get('a')).toBeUndefined();
  });

  it('given a bound of 0, when set, then nothing is kept', () => {
    const cache = new ReadCache<Entry>(0);
    cache.set('a', entry(1));
    expect(cache.get('a')).toBeUndefined();
  });
});
