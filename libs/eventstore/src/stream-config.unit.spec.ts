import { describe, expect, it } from 'vitest';
import { desiredStreamConfig, parseEventStoreConfig } from './stream-config.js';

describe('parseEventStoreConfig', () => {
  it('documents its defaults: one file-backed stream that never drops events', () => {
    // given no settings, when the config is parsed
    const config = parseEventStoreConfig();
    // then the defaults are the documented ones
    expect(config).toEqual({
      stream: 'WRIT_EVENTS',
      subjectPrefix: 'writ.evt',
      storage: 'file',
      replicas: 1,
      duplicateWindowMs: 120_000,
      maxBytes: 10 * 1024 ** 3,
      maxMsgs: -1,
      maxMsgSize: 1024 ** 2,
      headCacheSize: 10_000,
      readCacheEvents: 50_000,
      requestTimeoutMs: 5_000,
    });
    expect(desiredStreamConfig(config)).toMatchObject({
      name: 'WRIT_EVENTS',
      subjects: ['writ.evt.>'],
      retention: 'limits',
      storage: 'file',
      discard: 'new',
      max_age: 0,
      max_msgs_per_subject: -1,
      deny_delete: true,
      deny_purge: true,
      allow_rollup_hdrs: false,
      num_replicas: 1,
      duplicate_window: 120_000_000_000,
    });
  });

  it.each([
    { note: 'a wildcard prefix', input: { subjectPrefix: 'writ.>' } },
    { note: 'a stream name with a dot', input: { stream: 'WRIT.EVENTS' } },
    { note: 'zero replicas', input: { replicas: 0 } },
    { note: 'a fractional byte limit', input: { maxBytes: 1.5 } },
    { note: 'a zero message limit', input: { maxMsgs: 0 } },
    { note: 'a sub-second duplicate window', input: { duplicateWindowMs: 10 } },
  ])('refuses $note', ({ input }) => {
    expect(() => parseEventStoreConfig(input)).toThrow(expect.objectContaining({ code: 'EVENTSTORE_CONFIG_INVALID' }));
  });
});
