import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { hasErrorCode } from '@writ/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedByName } from '@writ/testing';
import { TestPki, type TestCa } from '../test/test-pki.js';
import { DEFAULT_CONSUMER_STALL, defaultExecutorId, EXTRA_CA_MAX_BYTES, loadExecutorConfig } from './config.js';

describe('executor config', () => {
  it('given an empty environment, then the documented defaults, every subject under writ', () => {
    const config = loadExecutorConfig({});
    expect(config).toMatchObject({
      natsUrl: 'nats://127.0.0.1:4223',
      httpPort: 8085,
      principalId: 'writ-executor',
      durable: 'executor',
      concurrency: 2,
      grant: { issuer: 'writ-approval', audience: 'writ-executor' },
      actionTimeoutMs: 60_000,
      outputCapBytes: 1024 * 1024,
      artifacts: { bucket: 'WRIT_ARTIFACTS' },
      cells: { image: 'writ/cell:latest', cellsRoot: '/var/lib/writ/cells', poolSize: 2 },
      observe: { maxEntries: 10_000, maxDepth: 32, maxBytes: 256 * 1024 * 1024, maxPasses: 4 },
      streams: { events: 'WRIT_EVENTS', ingress: 'WRIT_INGRESS', commands: 'WRIT_COMMANDS', dlq: 'WRIT_DLQ' },
      subjects: {
        run: 'writ.cmd.executor.run',
        observe: 'writ.qry.executor.observe',
        eventsPrefix: 'writ.evt',
        ingress: 'writ.ingress.>',
        commands: 'writ.cmd.>',
        dlq: 'writ.dlq.>',
        runDeadLetter: 'writ.dlq.executor.run',
      },
    });
    expect(config.executorId).toMatch(/^executor-[A-Za-z0-9_-]+$/);
  });

  it('given WRIT_STREAM_REPLICAS, the name every service reads, then the streams use it; the old WRIT_REPLICAS is refused by name', () => {
    expect(loadExecutorConfig({ WRIT_STREAM_REPLICAS: '3' }).streams.replicas).toBe(3);
    expect(loadExecutorConfig({}).streams.replicas).toBe(1);
    expect(() => loadExecutorConfig({ WRIT_REPLICAS: '3' })).toThrow(refusedByName(/WRIT_REPLICAS.*renamed WRIT_STREAM_REPLICAS/));
  });

  it('given WRIT_BUS_MAX_BYTES, the name every service reads, then the bus streams use it; the old WRIT_BUS_STREAMS_MAX_BYTES is refused by name', () => {
    expect(loadExecutorConfig({ WRIT_BUS_MAX_BYTES: '268435456' }).streams.busMaxBytes).toBe(256 * 1024 * 1024);
    expect(loadExecutorConfig({}).streams.busMaxBytes).toBe(1024 ** 3);
    expect(() => loadExecutorConfig({ WRIT_BUS_STREAMS_MAX_BYTES: '268435456' })).toThrow(refusedByName(/WRIT_BUS_STREAMS_MAX_BYTES.*renamed WRIT_BUS_MAX_BYTES/));
  });

  it('given no WRIT_CONSUMER_STALL_*, then its durables are watched for stalls with the shared defaults; given them, then it reads them like every service', () => {
    expect(loadExecutorConfig({}).consumerStall).toEqual({ afterMs: 120_000, checkMs: 5_000 });
    expect(DEFAULT_CONSUMER_STALL).toEqual({ afterMs: 120_000, checkMs: 5_000 });
    expect(loadExecutorConfig({ WRIT_CONSUMER_STALL_SECONDS: '600', WRIT_CONSUMER_STALL_CHECK_MS: '1000' }).consumerStall).toEqual({ afterMs: 600_000, checkMs: 1_000 });
  });

  it('given WRIT_BUS_MAX_DELIVER or WRIT_BUS_PULL_EXPIRES_MS, then the shared bounds apply: no executor-only ceiling', () => {
    expect(loadExecutorConfig({}).bus).toEqual({ maxDeliver: 10, pullExpiresMs: 5_000 });
    expect(loadExecutorConfig({ WRIT_BUS_MAX_DELIVER: '500', WRIT_BUS_PULL_EXPIRES_MS: '120000' }).bus).toEqual({ maxDeliver: 500, pullExpiresMs: 120_000 });
    expect(() => loadExecutorConfig({ WRIT_BUS_PULL_EXPIRES_MS: '999' })).toThrow(expect.objectContaining({ code: 'RUNTIME_CONFIG_INVALID', message: expect.stringContaining('WRIT_BUS_PULL_EXPIRES_MS') }));
  });

  it('given WRIT_EXECUTOR_PRINCIPAL_ID, the name the orchestrator and the authorship checks read, then the executor writes as it; the old WRIT_EXECUTOR_PRINCIPAL is refused by name', () => {
    expect(loadExecutorConfig({ WRIT_EXECUTOR_PRINCIPAL_ID: 'exec-eu' }).principalId).toBe('exec-eu');
    expect(loadExecutorConfig({}).principalId).toBe('writ-executor');
    expect(() => loadExecutorConfig({ WRIT_EXECUTOR_PRINCIPAL: 'exec-eu' })).toThrow(refusedByName(/WRIT_EXECUTOR_PRINCIPAL\b.*renamed WRIT_EXECUTOR_PRINCIPAL_ID/));
  });

  it('given an empty environment, then cells get the Lazarus defaults: invitation 15 min, active 4 h renewable to 24 h, grace 30 min, archive 30 days, substitutes off', () => {
    expect(loadExecutorConfig({}).cellLifecycle).toEqual({
      policy: {
        invitation_ttl_ms: 15 * 60_000,
        active_ttl_ms: 4 * 3_600_000,
        active_ttl_max_ms: 24 * 3_600_000,
        closed_grace_ms: 30 * 60_000,
        archive_retention_ms: 30 * 86_400_000,
        heartbeat_timeout_ms: 90_000,
        allow_guest: false,
        allow_substitute: false,
      },
      sweepIntervalMs: 15_000,
      checkpointIntervalMs: 0,
      checkpointMaxBytes: 64 * 1024 * 1024,
      checkpointTimeoutMs: 120_000,
    });
  });

  it('given WRIT_CELL_* variables, then the cell policy and the sweep follow them', () => {
    const { cellLifecycle } = loadExecutorConfig({ WRIT_CELL_CLOSED_GRACE_MS: '60000', WRIT_CELL_ALLOW_SUBSTITUTE: 'true', WRIT_CELL_SWEEP_INTERVAL_MS: '0', WRIT_CELL_CHECKPOINT_INTERVAL_MS: '600000' });
    expect(cellLifecycle).toMatchObject({ policy: { closed_grace_ms: 60_000, allow_substitute: true }, sweepIntervalMs: 0, checkpointIntervalMs: 600_000 });
  });

  it('given no WRIT_EXECUTOR_PREIMAGE_MAX_BYTES, then pre-images up to 192 KiB are kept; 0 turns them off; above 64 MiB is refused', () => {
    expect(loadExecutorConfig({}).artifacts.preimageMaxBytes).toBe(192 * 1024);
    expect(loadExecutorConfig({ WRIT_EXECUTOR_PREIMAGE_MAX_BYTES: '0' }).artifacts.preimageMaxBytes).toBe(0);
    expect(() => loadExecutorConfig({ WRIT_EXECUTOR_PREIMAGE_MAX_BYTES: String(64 * 1024 * 1024 + 1) })).toThrow(expect.objectContaining({ code: 'RUNTIME_CONFIG_INVALID' }));
  });

  it('given a subject root, then every subject derives from it', () => {
    const { subjects } = loadExecutorConfig({ WRIT_SUBJECT_ROOT: 't_abc' });
    expect(subjects).toEqual({
      root: 't_abc',
      run: 't_abc.cmd.executor.run',
      closeCell: 't_abc.cmd.executor.close-cell',
      observe: 't_abc.qry.executor.observe',
      resolveOutcome: 't_abc.qry.executor.resolve-outcome',
      resurrectCell: 't_abc.qry.executor.resurrect-cell',
      renewCell: 't_abc.qry.executor.renew-cell',
      heartbeatPrefix: 't_abc.hb.executor',
      eventsPrefix: 't_abc.evt',
      ingress: 't_abc.ingress.>',
      commands: 't_abc.cmd.>',
      dlq: 't_abc.dlq.>',
      runDeadLetter: 't_abc.dlq.executor.run',
      closeCellDeadLetter: 't_abc.dlq.executor.close-cell',
    });
  });

  it.each([
    ['a wildcard root', { WRIT_SUBJECT_ROOT: 'writ.>' }],
    ['a port out of range', { WRIT_HTTP_PORT: '70000' }],
    ['no concurrency', { WRIT_EXECUTOR_CONCURRENCY: '0' }],
    ['a relative cells root', { WRIT_CELLS_ROOT: 'cells' }],
    ['an executor id with dots', { WRIT_EXECUTOR_ID: 'host.example.com' }],
    ['a warm pool past its bound', { WRIT_CELL_POOL_SIZE: '33' }],
    ['a negative warm pool', { WRIT_CELL_POOL_SIZE: '-1' }],
    ['an activation window longer than its renewal ceiling', { WRIT_CELL_ACTIVE_TTL_MS: '7200000', WRIT_CELL_ACTIVE_TTL_MAX_MS: '3600000' }],
    ['an activation window over 24 h', { WRIT_CELL_ACTIVE_TTL_MAX_MS: String(25 * 3_600_000) }],
    ['a sweep slower than half the heartbeat timeout', { WRIT_CELL_SWEEP_INTERVAL_MS: '60000', WRIT_CELL_HEARTBEAT_TIMEOUT_MS: '90000' }],
    ['substitutes neither on nor off', { WRIT_CELL_ALLOW_SUBSTITUTE: 'yes' }],
    ['a checkpoint cap past what an exec carries', { WRIT_CELL_CHECKPOINT_MAX_BYTES: String(65 * 1024 * 1024) }],
  ])('given %s, then start-up fails with RUNTIME_CONFIG_INVALID', (_note, env) => {
    expect(() => loadExecutorConfig(env)).toThrow(expect.toSatisfy((error) => hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')));
  });

  it('given a hostname with dots, then the default executor id is a valid Id', () => {
    expect(defaultExecutorId('node-1.eu.example.com')).toBe('executor-node-1-eu-example-com');
    expect(defaultExecutorId('...')).toBe('executor-host');
  });
});

describe('WRIT_EXECUTOR_EXTRA_CA_FILE: extra trust roots of https network actions, read at start', () => {
  let pki: TestPki;
  let ca: TestCa;
  let other: TestCa;
  const file = (name: string, content: string | Buffer): string => {
    const at = path.join(pki.dir, name);
    writeFileSync(at, content);
    return at;
  };
  const issuesOf = (env: Record<string, string>): unknown => {
    try {
      loadExecutorConfig(env);
    } catch (error) {
      expect(hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')).toBe(true);
      return (error as { details?: { issues?: unknown } }).details?.issues;
    }
    throw new Error('the configuration was accepted');
  };

  beforeAll(() => {
    pki = new TestPki();
    ca = pki.createCa('writ-config-ca');
    other = pki.createCa('writ-config-other-ca');
  });
  afterAll(() => pki?.remove());

  it('given none, then no extra roots (the image\'s public bundle only)', () => {
    expect(loadExecutorConfig({}).tls).toBeUndefined();
  });

  it('given a bundle of two CAs with comments around them, then both certificates and nothing else are kept', () => {
    const at = file('bundle.pem', `# internal roots\n${ca.certPem}\nsome note\n${other.certPem}`);
    const tls = loadExecutorConfig({ WRIT_EXECUTOR_EXTRA_CA_FILE: at }).tls;
    expect(tls?.extraCaFile).toBe(at);
    expect(tls?.extraCaPem.match(/-----BEGIN CERTIFICATE-----/g)).toHaveLength(2);
    expect(tls?.extraCaPem).not.toContain('internal roots');
    expect(tls?.extraCaPem).not.toContain('some note');
    expect(tls?.extraCaPem).toContain(ca.certPem.trim().split('\n')[1]);
  });

  it.each([
    ['a file that does not exist', () => path.join(pki.dir, 'missing.pem')],
    ['a directory', () => {
      const dir = path.join(pki.dir, 'a-dir');
      mkdirSync(dir, { recursive: true });
      return dir;
    }],
    ['text that is not PEM', () => file('notes.txt', 'not a certificate\n')],
    ['a DER certificate (binary, not PEM)', () => file('ca.der', Buffer.from(ca.certPem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64'))],
    // The CA's own key, generated for this run: a bundle that carries one is refused.
    ['a private key beside the certificate', () => file('with-key.pem', `${ca.certPem}${readFileSync(ca.keyFile, 'utf8')}`)],
    ['a certificate block whose content is not a certificate', () => file('garbled.pem', '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n')],
    ['a bundle past the bound', () => file('huge.pem', `${ca.certPem}${'#'.repeat(EXTRA_CA_MAX_BYTES)}\n`)],
    ['a relative path', () => 'bundle.pem'],
  ])('given %s, then start-up fails with RUNTIME_CONFIG_INVALID naming the variable', (_note, make) => {
    expect(issuesOf({ WRIT_EXECUTOR_EXTRA_CA_FILE: make() })).toContainEqual(expect.objectContaining({ path: 'WRIT_EXECUTOR_EXTRA_CA_FILE' }));
  });
});
