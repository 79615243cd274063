import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { approvalSubjects, loadApprovalConfig } from './config.js';

describe('approval config', () => {
  it('has documented defaults', () => {
    const config = loadApprovalConfig({});
    expect(config).toMatchObject({
      natsUrl: 'nats://127.0.0.1:4222',
      http: { port: 8084, host: '0.0.0.0' },
      subjectRoot: 'writ',
      streams: { events: 'WRIT_EVENTS', eventsPrefix: 'writ.evt', ingress: 'WRIT_INGRESS', commands: 'WRIT_COMMANDS', dlq: 'WRIT_DLQ', replicas: 1 },
      principalId: 'writ-approval',
      keyFile: '/var/lib/writ/keys/approval.jwk.json',
      approvalTtlSeconds: 3600,
      grantTtlSeconds: 300,
      grantAudience: 'writ-executor',
      observeTimeoutMs: 10_000,
    });
  });

  it('derives every subject from the root', () => {
    expect(loadApprovalConfig({ WRIT_SUBJECT_ROOT: 't_1' }).streams.eventsPrefix).toBe('t_1.evt');
    const subjects = approvalSubjects('t_1');
    expect([subjects.request, subjects.resolve, subjects.issueGrant, subjects.observe, subjects.commands, subjects.dlq, subjects.deadLetter('request')]).toEqual([
      't_1.cmd.approval.request',
      't_1.qry.approval.resolve',
      't_1.cmd.approval.issue-grant',
      't_1.qry.executor.observe',
      't_1.cmd.>',
      't_1.dlq.>',
      't_1.dlq.approval.request',
    ]);
  });

  it('fails fast on a bad variable (RUNTIME_CONFIG_INVALID)', () => {
    for (const env of [{ WRIT_HTTP_PORT: 'eighty' }, { WRIT_SUBJECT_ROOT: 'writ.>' }, { WRIT_GRANT_TTL_SECONDS: '0' }]) {
      expect(() => loadApprovalConfig(env)).toThrow();
      try {
        loadApprovalConfig(env);
      } catch (error) {
        expect(hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')).toBe(true);
      }
    }
  });
});
