import { COMMANDS } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { rooted, writSubjects } from './subject-root.js';

/** Every string a value holds, however deep (functions left out). */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(strings);
  return [];
}

describe('rooted', () => {
  it('given a constant subject, then its leading writ is replaced by the root', () => {
    expect(rooted('writ.cmd.policy.evaluate', 't_1')).toBe('t_1.cmd.policy.evaluate');
    expect(rooted('writ.qry.ingress.submit-action', 'staging.writ')).toBe('staging.writ.qry.ingress.submit-action');
  });

  it('given a subject outside writ, then it is left as it is', () => {
    expect(rooted('other.cmd.x', 't_1')).toBe('other.cmd.x');
    expect(rooted('writer.cmd.x', 't_1')).toBe('writer.cmd.x');
  });

  it('given the root writ, then nothing changes', () => {
    expect(rooted(COMMANDS.receiptIssue, 'writ')).toBe(COMMANDS.receiptIssue);
  });
});

describe('writSubjects', () => {
  it('given the production root, then the subjects are the documented ones', () => {
    const subjects = writSubjects('writ');
    expect(subjects).toMatchObject({
      root: 'writ',
      events: 'writ.evt',
      allEvents: 'writ.evt.>',
      taskEvents: 'writ.evt.task.>',
      ingressActions: 'writ.ingress.action.*',
      streams: { ingress: 'writ.ingress.>', commands: 'writ.cmd.>', dlq: 'writ.dlq.>' },
      projections: 'writ.proj',
      deadLetters: 'writ.dlq',
    });
    expect(subjects.commands).toEqual(COMMANDS);
    expect(subjects.ingressAction('agent-1')).toBe('writ.ingress.action.agent-1');
    expect(subjects.deadLetter('policy', 'evaluate')).toBe('writ.dlq.policy.evaluate');
  });

  it('given a test root, then every subject derives from it', () => {
    const subjects = writSubjects('t_abc');
    expect(strings(subjects).every((subject) => subject.startsWith('t_abc'))).toBe(true);
    expect(Object.keys(subjects.commands).sort()).toEqual(Object.keys(COMMANDS).sort());
    expect(subjects.commands.policyEvaluate).toBe('t_abc.cmd.policy.evaluate');
    expect(subjects.ingressAction('a')).toBe('t_abc.ingress.action.a');
    expect(subjects.deadLetter('receipt', 'issue')).toBe('t_abc.dlq.receipt.issue');
  });

  it('given an events prefix, then the event subjects use it and nothing else does', () => {
    const subjects = writSubjects('t_1', 'log.evt');
    expect([subjects.events, subjects.allEvents, subjects.taskEvents]).toEqual(['log.evt', 'log.evt.>', 'log.evt.task.>']);
    expect(subjects.streams.commands).toBe('t_1.cmd.>');
  });
});
