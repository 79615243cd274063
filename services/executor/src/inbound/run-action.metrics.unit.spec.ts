import { startTelemetry, type TelemetryHandle } from '@writ/telemetry';
import { afterEach, describe, expect, it } from 'vitest';
import { executionMetrics } from './run-action.listener.js';

describe('the executor figures of a handled run command', () => {
  let handle: TelemetryHandle | undefined;
  afterEach(async () => {
    await handle?.shutdown();
    handle = undefined;
  });

  it('given a completed run, an unknown outcome recorded after a crash, a refusal and a redelivery of done work, when scraped, then each counts once where it belongs', async () => {
    handle = startTelemetry({ serviceName: 'executor' });
    const record = executionMetrics();

    record('execute_command', { status: 'executed', outcome: 'completed', use_no: 1, duration_ms: 1_500 });
    record('write_local', { status: 'unknown-recorded', use_no: 1 });
    record('execute_command', { status: 'refused', code: 'GRANT_EXPIRED' });
    record('execute_command', { status: 'already-done', reason: 'completed' });
    record('execute_command', { status: 'forwarded', host_id: 'h2' });

    const text = await handle.prometheus!.scrape();
    const line = (name: string, labels: string) => new RegExp(`^${name}\\{${labels},service_name="executor"\\} (\\S+)$`, 'm').exec(text)?.[1];
    expect(line('writ_executions_total', 'action_class="execute_command",outcome="completed"')).toBe('1');
    expect(line('writ_executions_total', 'action_class="write_local",outcome="unknown"')).toBe('1');
    expect(line('writ_unknown_outcomes_total', 'action_class="write_local"')).toBe('1');
    expect(line('writ_grant_uses_total', 'action_class="execute_command"')).toBe('1');
    expect(line('writ_grant_uses_total', 'action_class="write_local"')).toBe('1');
    expect(line('writ_grants_refused_total', 'reason="GRANT_EXPIRED"')).toBe('1');
    expect(line('writ_execution_duration_seconds_sum', 'action_class="execute_command",outcome="completed"')).toBe('1.5');
    expect(line('writ_execution_duration_seconds_count', 'action_class="execute_command",outcome="completed"')).toBe('1');
  });
});
