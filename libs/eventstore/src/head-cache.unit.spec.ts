import { describe, expect, it } from 'vitest';
import { HeadCache } from './head-cache.js';

const head = (taskSeq: number, streamSeq: number) => ({ taskSeq, streamSeq, hash: `h${taskSeq}` });

describe('HeadCache', () => {
  it('does not let a slower acknowledgement roll a head back', () => {
    // given a head at stream seq 10
    const cache = new HeadCache(10);
    cache.advance('s', head(3, 10));
    // when an older write reports in late, then the newer head stays
    cache.advance('s', head(2, 7));
    expect(cache.get('s')).toEqual(head(3, 10));
    // and a fresh read replaces whatever was cached
    cache.replace('s', head(1, 4));
    expect(cache.get('s')).toEqual(head(1, 4));
  });

  it('evicts the least recently written subject beyond its capacity', () => {
    const cache = new HeadCache(2);
    cache.replace('a', head(1, 1));
    cache.replace('b', head(1, 2));
    cache.replace('a', head(2, 3));
    cache.replace('c', head(1, 4));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toEqual(head(2, 3));
    expect(cache.get('c')).toEqual(head(1, 4));
  });

  it('remembers nothing with capacity 0, and forgets on demand', () => {
    const off = new HeadCache(0);
    off.replace('a', head(1, 1));
    expect(off.get('a')).toBeUndefined();
    const on = new HeadCache(5);
    on.replace('a', head(1, 1));
    on.forget('a');
    expect(on.get('a')).toBeUndefined();
  });
});
