import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { loadReceiptConfig, receiptSubjects } from './config.js';

describe('receipt config', () => {
  it('has documented defaults', () => {
    expect(loadReceiptConfig({})).toMatchObject({
      natsUrl: 'nats://127.0.0.1:4222',
      http: { port: 8086, host: '0.0.0.0' },
      subjectRoot: 'writ',
      streams: { events: 'WRIT_EVENTS', eventsPrefix: 'writ.evt', commands: 'WRIT_COMMANDS', dlq: 'WRIT_DLQ', replicas: 1 },
      principalId: 'writ-receipt',
      keyFile: '/var/lib/writ/keys/receipt.jwk.json',
    });
  });

  it('derives every subject from the root', () => {
    expect(loadReceiptConfig({ WRIT_SUBJECT_ROOT: 't_1' }).streams.eventsPrefix).toBe('t_1.evt');
    const subjects = receiptSubjects('t_1');
    expect([subjects.issue, subjects.commands, subjects.dlq, subjects.deadLetter('issue')]).toEqual(['t_1.cmd.receipt.issue', 't_1.cmd.>', 't_1.dlq.>', 't_1.dlq.receipt.issue']);
  });

  it('fails fast on a bad variable (RUNTIME_CONFIG_INVALID)', () => {
    let error: unknown;
    try {
      loadReceiptConfig({ WRIT_HTTP_PORT: '99999' });
    } catch (caught) {
      error = caught;
    }
    expect(hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')).toBe(true);
  });
});
