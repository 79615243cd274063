import { hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { hostRoutes, loadExecutorConfig } from './config.js';
import { hostIdOf } from './outbound/host-identity.js';

// The host identity and this host's own subjects (README → Several hosts).

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return hasErrorCode(error) ? error.code : String(error);
  }
}

describe('executor host id and host routes', () => {
  it('given no WRIT_EXECUTOR_HOST_ID, then the config leaves it to the start (derived from the Docker engine) and relays observations for 5 s', () => {
    const config = loadExecutorConfig({});
    expect(config.hostId).toBeUndefined();
    expect(config.routing).toEqual({ observeRelayTimeoutMs: 5_000 });
  });

  it('given WRIT_EXECUTOR_HOST_ID, then it is the host id; its subjects and durables are this host’s own and never match the shared filters', () => {
    const config = loadExecutorConfig({ WRIT_EXECUTOR_HOST_ID: 'eu-1', WRIT_SUBJECT_ROOT: 't_1', WRIT_EXECUTOR_OBSERVE_RELAY_TIMEOUT_MS: '2500' });
    expect(config.hostId).toBe('eu-1');
    expect(config.routing).toEqual({ observeRelayTimeoutMs: 2_500 });
    const routes = hostRoutes(config.subjects, config.durable, 'eu-1');
    expect(routes).toEqual({
      run: 't_1.cmd.executor.run.host.eu-1',
      closeCell: 't_1.cmd.executor.close-cell.host.eu-1',
      observe: 't_1.qry.executor.observe.host.eu-1',
      runDurable: 'executor-host-eu-1',
      closeCellDurable: 'executor-close-cell-host-eu-1',
    });
    // captured by the commands stream (`<root>.cmd.>`), one token longer than the shared consumers' exact filters
    for (const subject of [routes.run, routes.closeCell]) expect(subject.startsWith('t_1.cmd.')).toBe(true);
    expect(routes.run.split('.').length).toBeGreaterThan(config.subjects.run.split('.').length);
  });

  it.each([['a subject wildcard', 'eu.>'], ['a dot', 'eu.1'], ['a space', 'eu 1'], ['empty', ''], ['65 characters', 'h'.repeat(65)]])(
    'given a WRIT_EXECUTOR_HOST_ID with %s, then start-up fails with RUNTIME_CONFIG_INVALID',
    (_note, value) => {
      expect(codeOf(() => loadExecutorConfig({ WRIT_EXECUTOR_HOST_ID: value }))).toBe('RUNTIME_CONFIG_INVALID');
    },
  );

  it('given one Docker engine, then each cells root is its own host and the same pair is always the same id', () => {
    const a = hostIdOf('ENGINE:ONE', '/var/lib/writ/cells');
    expect(a).toMatch(/^host-[0-9a-f]{16}$/);
    expect(hostIdOf('ENGINE:ONE', '/var/lib/writ/cells')).toBe(a);
    expect(hostIdOf('ENGINE:ONE', '/srv/cells')).not.toBe(a);
    expect(hostIdOf('ENGINE:TWO', '/var/lib/writ/cells')).not.toBe(a);
  });
});
