import { hasErrorCode } from '@writ/contracts';
import { refusedByName } from '@writ/testing';
import { describe, expect, it } from 'vitest';
import { loadOrchestratorConfig } from './config.js';

describe('orchestrator config', () => {
  it('given no environment, then it uses the documented defaults and the real subjects', () => {
    const { env, subjects } = loadOrchestratorConfig({});
    expect(env).toMatchObject({
      WRIT_NATS_URL: 'nats://127.0.0.1:4223',
      WRIT_HTTP_PORT: 8082,
      WRIT_SUBJECT_ROOT: 'writ',
      WRIT_EVENTS_STREAM: 'WRIT_EVENTS',
      WRIT_COMMANDS_STREAM: 'WRIT_COMMANDS',
      WRIT_ORCHESTRATOR_PRINCIPAL_ID: 'writ-orchestrator',
      WRIT_EXECUTOR_PRINCIPAL_ID: 'writ-executor',
      WRIT_ORCHESTRATOR_CONCURRENCY: 16,
    });
    expect(subjects).toMatchObject({
      taskEvents: 'writ.evt.task.>',
      policyEvaluate: 'writ.cmd.policy.evaluate',
      approvalRequest: 'writ.cmd.approval.request',
      approvalIssueGrant: 'writ.cmd.approval.issue-grant',
      approvalCancel: 'writ.cmd.approval.cancel',
      executorRun: 'writ.cmd.executor.run',
      executorCloseCell: 'writ.cmd.executor.close-cell',
      receiptIssue: 'writ.cmd.receipt.issue',
      dlqAll: 'writ.dlq.>',
    });
  });

  it('given a subject root, then every subject derives from it', () => {
    const { subjects } = loadOrchestratorConfig({ WRIT_SUBJECT_ROOT: 't_abc' });
    expect(Object.values(subjects).every((subject) => subject.startsWith('t_abc'))).toBe(true);
    expect(subjects.policyEvaluate).toBe('t_abc.cmd.policy.evaluate');
  });

  it.each([
    ['WRIT_HTTP_PORT', 'eighty'],
    ['WRIT_SUBJECT_ROOT', 'writ.>'],
    ['WRIT_EVENTS_STREAM', 'has space'],
    ['WRIT_ORCHESTRATOR_CONCURRENCY', '0'],
    ['WRIT_ORCHESTRATOR_CONCURRENCY', '257'],
  ])('given %s=%j, then start-up fails with RUNTIME_CONFIG_INVALID', (key, value) => {
    let error: unknown;
    try {
      loadOrchestratorConfig({ [key]: value });
    } catch (caught) {
      error = caught;
    }
    expect(hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')).toBe(true);
  });

  it('given the former WRIT_BUS_STREAMS_MAX_BYTES, then the start is refused by name: every service reads WRIT_BUS_MAX_BYTES', () => {
    expect(() => loadOrchestratorConfig({ WRIT_BUS_STREAMS_MAX_BYTES: '1048576' })).toThrow(refusedByName(/WRIT_BUS_STREAMS_MAX_BYTES.*renamed WRIT_BUS_MAX_BYTES/));
  });

  it('given no WRIT_EVENTS_READ_CACHE, then its log keeps the shared default read cache; given one, then it reads it like every service', () => {
    const GiB = 1024 ** 3;
    expect(loadOrchestratorConfig({}).streams).toMatchObject({ eventsReadCache: 50_000, eventsMaxBytes: 10 * GiB, busMaxBytes: GiB, consumerStallMs: 120_000, consumerStallCheckMs: 5_000 });
    expect(loadOrchestratorConfig({ WRIT_EVENTS_READ_CACHE: '0' }).streams.eventsReadCache).toBe(0);
    expect(loadOrchestratorConfig({ WRIT_SUBJECT_ROOT: 't_1' }).streams).toMatchObject({ events: 'WRIT_EVENTS', eventsPrefix: 't_1.evt', commands: 'WRIT_COMMANDS' });
  });
});
