import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildDeadLetter, DeadLetterHeaders, quarantineOf, type DeadLetterInput } from './dead-letter.js';

const input = (overrides: Partial<DeadLetterInput> = {}): DeadLetterInput => ({
  deadLetterSubject: 'writ.dlq.executor.writ_cmd_executor_run-00000000',
  kind: 'exhausted',
  failure: { code: 'EXECUTOR_TIMEOUT', message: 'cell did not answer' },
  deliveryCount: 5,
  subject: 'writ.cmd.executor.run',
  stream: 'WRIT_CMD',
  streamSequence: 42,
  consumer: 'executor__writ_cmd_executor_run-00000000',
  service: 'executor',
  msgId: 'req-1',
  failedAt: new Date('2026-11-25T00:00:00.000Z'),
  originalHeaders: [
    ['Nats-Msg-Id', ['req-1']],
    ['Nats-Expected-Last-Subject-Sequence', ['3']],
    ['traceparent', ['00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01']],
    ['Writ-Correlation-Id', ['corr-1']],
  ],
  ...overrides,
});

const header = (letter: ReturnType<typeof buildDeadLetter>, name: string): string | undefined =>
  letter.headers.find(([key]) => key === name)?.[1];

describe('buildDeadLetter', () => {
  it('given an exhausted message, then the reason headers say why, where from and how often', () => {
    const letter = buildDeadLetter(input());
    expect(letter.subject).toBe('writ.dlq.executor.writ_cmd_executor_run-00000000');
    expect(header(letter, DeadLetterHeaders.REASON)).toBe('exhausted');
    expect(header(letter, DeadLetterHeaders.ERROR_CODE)).toBe('EXECUTOR_TIMEOUT');
    expect(header(letter, DeadLetterHeaders.DELIVERY_COUNT)).toBe('5');
    expect(header(letter, DeadLetterHeaders.SUBJECT)).toBe('writ.cmd.executor.run');
    expect(header(letter, DeadLetterHeaders.STREAM)).toBe('WRIT_CMD');
    expect(header(letter, DeadLetterHeaders.STREAM_SEQ)).toBe('42');
    expect(header(letter, DeadLetterHeaders.MSG_ID)).toBe('req-1');
    expect(header(letter, DeadLetterHeaders.FAILED_AT)).toBe('2026-11-25T00:00:00.000Z');
  });

  it('keeps application headers, drops server directives and the old trace position', () => {
    const letter = buildDeadLetter(input());
    const names = letter.headers.map(([name]) => name);
    expect(header(letter, 'Writ-Correlation-Id')).toBe('corr-1');
    expect(names).not.toContain('Nats-Msg-Id');
    expect(names).not.toContain('Nats-Expected-Last-Subject-Sequence');
    expect(names).not.toContain('traceparent');
  });

  it('dedupes the letter itself by stream, sequence and consumer', () => {
    expect(buildDeadLetter(input()).msgId).toBe('dlq:WRIT_CMD:42:executor__writ_cmd_executor_run-00000000');
  });

  it('makes the error message header-safe: one line, redacted, bounded', () => {
    const message = `boom\r\nwith password=hunter2 ${'x'.repeat(5_000)}`;
    const value = header(buildDeadLetter(input({ failure: { code: 'X', message } })), DeadLetterHeaders.ERROR_MESSAGE) ?? '';
    expect(value).not.toMatch(/[\r\n]/);
    expect(value).not.toContain('hunter2');
    expect(value.length).toBeLessThanOrEqual(1024);
  });
});

describe('quarantineOf', () => {
  const body = new TextEncoder().encode('not json');

  it.each([
    { note: 'a body that is not JSON, dead-lettered at once', kind: 'terminal' as const, code: 'BUS_PAYLOAD_INVALID', want: 'QUARANTINE_NOT_JSON' },
    { note: "a body that is not its subject's contract, dead-lettered at once", kind: 'terminal' as const, code: 'CONTRACT_INVALID', want: 'QUARANTINE_NOT_ENVELOPE' },
    { note: 'a handler that failed until its retries ran out (not junk: a failure)', kind: 'exhausted' as const, code: 'CONTRACT_INVALID', want: undefined },
    { note: 'any other terminal failure', kind: 'terminal' as const, code: 'EXECUTOR_GRANT_INVALID', want: undefined },
  ])('given $note, then its quarantine reason is $want', ({ kind, code, want }) => {
    const record = quarantineOf(input({ kind, failure: { code, message: 'why' } }), body);
    expect(record?.reason).toBe(want);
  });

  it('records where the message is and the SHA-256 of its bytes, never the bytes', () => {
    const record = quarantineOf(input({ kind: 'terminal', failure: { code: 'BUS_PAYLOAD_INVALID', message: 'message body is not UTF-8 JSON (8 bytes)' } }), body);
    expect(record).toEqual({
      stream: 'WRIT_CMD',
      subject: 'writ.cmd.executor.run',
      stream_seq: 42,
      reason: 'QUARANTINE_NOT_JSON',
      sha256: createHash('sha256').update(body).digest('hex'),
      bytes: 8,
      detail: 'dead-lettered (BUS_PAYLOAD_INVALID): message body is not UTF-8 JSON (8 bytes)',
    });
    expect(JSON.stringify(record)).not.toContain('not json');
  });
});
