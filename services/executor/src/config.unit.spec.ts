import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { defaultExecutorId, loadExecutorConfig } from './config.js';

describe('executor config', () => {
  it('given an empty environment, then the documented defaults, every subject under writ', () => {
    const config = loadExecutorConfig({});
    expect(config).toMatchObject({
      natsUrl: 'nats://127.0.0.1:4222',
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

  it('given a subject root, then every subject derives from it', () => {
    const { subjects } = loadExecutorConfig({ WRIT_SUBJECT_ROOT: 't_abc' });
    expect(subjects).toEqual({
      root: 't_abc',
      run: 't_abc.cmd.executor.run',
      closeCell: 't_abc.cmd.executor.close-cell',
      observe: 't_abc.qry.executor.observe',
      resolveOutcome: 't_abc.qry.executor.resolve-outcome',
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
  ])('given %s, then start-up fails with RUNTIME_CONFIG_INVALID', (_note, env) => {
    expect(() => loadExecutorConfig(env)).toThrow(expect.toSatisfy((error) => hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')));
  });

  it('given a hostname with dots, then the default executor id is a valid Id', () => {
    expect(defaultExecutorId('node-1.eu.example.com')).toBe('executor-node-1-eu-example-com');
    expect(defaultExecutorId('...')).toBe('executor-host');
  });
});
