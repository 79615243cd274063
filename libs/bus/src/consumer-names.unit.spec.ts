import { describe, expect, it } from 'vitest';
import { assertServiceName, assertSubjectFilter, defaultDeadLetterSubject, durableName, patternToken } from './consumer-names.js';

describe('durable and dead-letter names', () => {
  it('derives a readable durable name from service and pattern', () => {
    expect(durableName('executor', 'writ.cmd.executor.run')).toMatch(/^executor__writ_cmd_executor_run-[0-9a-f]{8}$/);
    expect(durableName('projection', 'writ.evt.task.*')).toMatch(/^projection__writ_evt_task_any-[0-9a-f]{8}$/);
    expect(durableName('projection', 'writ.evt.>')).toMatch(/^projection__writ_evt_all-[0-9a-f]{8}$/);
  });

  it('keeps patterns apart that sanitize to the same text', () => {
    expect(patternToken('a_b.c')).not.toBe(patternToken('a.b_c'));
  });

  it('is stable, so a restarted service binds the same durable', () => {
    expect(durableName('svc', 'writ.cmd.svc.do')).toBe(durableName('svc', 'writ.cmd.svc.do'));
  });

  it('puts dead letters under a configured root instead of writ.dlq when given one', () => {
    expect(defaultDeadLetterSubject('executor', 't1.cmd.executor.run', 't1.dlq').startsWith('t1.dlq.executor.')).toBe(true);
  });

  it('puts dead letters under writ.dlq.<service>. as one subject token per pattern', () => {
    const subject = defaultDeadLetterSubject('executor', 'writ.cmd.executor.*');
    expect(subject.startsWith('writ.dlq.executor.')).toBe(true);
    expect(subject.split('.')).toHaveLength(4);
  });
});

describe('validation', () => {
  it.each(['writ.cmd.x.y', 'writ.evt.task.*', 'writ.evt.>', 'a'])('accepts subject filter %s', (pattern) => {
    expect(() => assertSubjectFilter(pattern)).not.toThrow();
  });

  it.each([['writ..x'], ['writ.>.x'], ['writ.a*'], ['writ. x'], [{ cmd: 'x' }], ['']])('rejects %j', (pattern) => {
    expect(() => assertSubjectFilter(pattern)).toThrow(expect.objectContaining({ code: 'BUS_PATTERN_INVALID' }));
  });

  it.each(['', 'has.dot', 'has space', 'x'.repeat(65)])('rejects service name %j', (name) => {
    expect(() => assertServiceName(name)).toThrow(expect.objectContaining({ code: 'BUS_CONFIG_INVALID' }));
  });
});
