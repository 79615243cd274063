import { describe, expect, it } from 'vitest';
import { resolveConsumerSettings } from './bus-options.js';

describe('resolveConsumerSettings', () => {
  it('applies defaults', () => {
    const settings = resolveConsumerSettings('writ.cmd.svc.do', { serviceName: 'svc' }, {});
    expect(settings).toMatchObject({
      durable: expect.stringMatching(/^svc__writ_cmd_svc_do-/),
      deliverPolicy: 'all',
      ackWaitMs: 30_000,
      concurrency: 1,
      pullBatch: 1,
      deadLetterSubject: expect.stringMatching(/^writ\.dlq\.svc\./),
      retry: { maxDeliver: 10, backoff: { initialMs: 1_000, maxMs: 60_000, multiplier: 2 }, retrySoonDelayMs: 50 },
    });
    expect(settings.retry.classify('CONTRACT_INVALID')).toBe('dead-letter');
  });

  it('lets a handler override the server, and the server override the defaults', () => {
    const settings = resolveConsumerSettings(
      'writ.cmd.svc.do',
      { serviceName: 'svc', maxDeliver: 3, concurrency: 2, backoff: { initialMs: 10 }, errorActions: { A: 'dead-letter' } },
      { concurrency: 8, durable: 'custom', backoff: { maxMs: 50 }, errorActions: { B: 'retry-soon' } },
    );
    expect(settings).toMatchObject({ durable: 'custom', concurrency: 8, pullBatch: 8, retry: { maxDeliver: 3, backoff: { initialMs: 10, maxMs: 50, multiplier: 2 } } });
    expect(settings.retry.classify('A')).toBe('dead-letter');
    expect(settings.retry.classify('B')).toBe('retry-soon');
    expect(settings.retry.classify('CONTRACT_INVALID')).toBe('dead-letter');
  });

  it.each([{ maxDeliver: 0 }, { concurrency: 1.5 }, { ackWaitMs: -1 }, { backoff: { multiplier: 0.5 } }])('rejects %j', (bad) => {
    expect(() => resolveConsumerSettings('a.b', { serviceName: 'svc', ...bad }, {})).toThrow(expect.objectContaining({ code: 'BUS_CONFIG_INVALID' }));
  });
});
