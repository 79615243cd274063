import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { refusedByName } from '@writ/testing';
import { approvalSubjects, loadApprovalConfig } from './config.js';

describe('approval config', () => {
  it('has documented defaults for the approval lifecycle: expiry timer refresh, artifact and policy buckets', () => {
    expect(loadApprovalConfig({})).toMatchObject({
      expiryRefreshMs: 12 * 3600 * 1000,
      artifacts: { bucket: 'WRIT_ARTIFACTS', maxBytes: 10 * 1024 ** 3 },
      policyBucket: 'WRIT_POLICY',
    });
    const subjects = approvalSubjects('t_1');
    expect([subjects.cancel, subjects.expire]).toEqual(['t_1.cmd.approval.cancel', 't_1.cmd.approval.expire']);
    // A timer held longer than the commands stream keeps messages (1 day) would be lost: refused.
    for (const env of [{ WRIT_APPROVAL_EXPIRY_REFRESH_SECONDS: String(24 * 3600) }, { WRIT_POLICY_BUCKET: 'a.b' }]) {
      expect(() => loadApprovalConfig(env)).toThrow();
    }
  });

  it('has documented defaults', () => {
    const config = loadApprovalConfig({});
    expect(config).toMatchObject({
      natsUrl: 'nats://127.0.0.1:4223',
      http: { port: 8084, host: '127.0.0.1' },
      subjectRoot: 'writ',
      streams: { events: 'WRIT_EVENTS', eventsPrefix: 'writ.evt', ingress: 'WRIT_INGRESS', commands: 'WRIT_COMMANDS', dlq: 'WRIT_DLQ', replicas: 1 },
      principalId: 'writ-approval',
      keyFile: '/var/lib/writ/keys/approval.jwk.json',
      approvalTtlSeconds: 3600,
      grantTtlSeconds: 300,
      grantAudience: 'writ-executor',
      observeTimeoutMs: 10_000,
      witnessWaitMs: 300_000,
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

  it('keeps the rotating keyring beside the legacy key file unless WRIT_APPROVAL_KEY_DIR says otherwise', () => {
    expect(loadApprovalConfig({})).toMatchObject({
      keyDir: '/var/lib/writ/keys/approval',
      keyRetireSkewSeconds: 60,
      keyCheckIntervalMs: 30_000,
      freshnessSeconds: 300,
    });
    expect(loadApprovalConfig({ WRIT_APPROVAL_KEY_FILE: '/k/a.json' }).keyDir).toBe('/k/a');
    expect(loadApprovalConfig({ WRIT_APPROVAL_KEY_DIR: '/srv/keys' }).keyDir).toBe('/srv/keys');
    const subjects = approvalSubjects('t_1');
    expect([subjects.revokeGrant, subjects.rotateKey]).toEqual(['t_1.qry.approval.revoke-grant', 't_1.qry.approval.rotate-key']);
  });

  it('given the former WRIT_BUS_STREAMS_MAX_BYTES, then the start is refused by name: every service reads WRIT_BUS_MAX_BYTES', () => {
    expect(() => loadApprovalConfig({ WRIT_BUS_STREAMS_MAX_BYTES: '1048576' })).toThrow(refusedByName(/WRIT_BUS_STREAMS_MAX_BYTES.*renamed WRIT_BUS_MAX_BYTES/));
  });

  it('given no stream bounds, then the log and the bus streams take the shared defaults (the bounds and the read cache every service has)', () => {
    const GiB = 1024 ** 3;
    expect(loadApprovalConfig({}).streams).toMatchObject({ eventsMaxBytes: 10 * GiB, eventsReadCache: 50_000, busMaxBytes: GiB });
    expect(loadApprovalConfig({ WRIT_EVENTS_READ_CACHE: '0', WRIT_BUS_MAX_BYTES: String(64 * 1024 ** 2) }).streams).toMatchObject({ eventsReadCache: 0, busMaxBytes: 64 * 1024 ** 2 });
    expect(loadApprovalConfig({}).consumerStall).toEqual({ afterMs: 120_000, checkMs: 5_000 });
  });
});
