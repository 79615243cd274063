import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The one process's life (runtime `runServicesProcess`, apps/serve's main), with fake services in
 * a real child process: how it starts, stops on SIGTERM, and ends when a service fails to start
 * or crashes, so that a supervisor restarts all of it and nothing half-alive keeps running.
 */
const FIXTURE = fileURLToPath(new URL('../test/fake-services.mjs', import.meta.url));

interface Run {
  readonly code: number | null;
  readonly lines: Array<Record<string, unknown>>;
}

/** Runs the fixture with `services`; `signalWhen` sends SIGTERM once a line matches. */
function runProcess(services: string, signalWhen?: (line: Record<string, unknown>) => boolean): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FIXTURE], {
      env: { PATH: process.env['PATH'], FAKE_SERVICES: services, WRIT_SERVE_CREDS_DIR: '/run/writ-creds', OTEL_SDK_DISABLED: 'true', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines: Array<Record<string, unknown>> = [];
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
        const line = JSON.parse(buffered.slice(0, at)) as Record<string, unknown>;
        buffered = buffered.slice(at + 1);
        lines.push(line);
        if (signalWhen?.(line)) child.kill('SIGTERM');
      }
    });
    child.once('error', reject);
    // 'close', not 'exit': 'exit' may come before the last of its stdout is read, and those lines would be missing.
    child.once('close', (code) => resolve({ code, lines }));
  });
}

const fakeEvents = (run: Run) => run.lines.filter((line) => line['fake'] !== undefined).map((line) => `${String(line['fake'])} ${String(line['event'])}`);

describe('one process running every service (runServicesProcess)', () => {
  it('given services started in order each with its own credential, when SIGTERM arrives, then every one closes and the process ends 0', async () => {
    const run = await runProcess('alpha,beta', (line) => line['msg'] === 'every service started');
    expect(run.code).toBe(0);
    expect(fakeEvents(run)).toEqual(expect.arrayContaining(['alpha started with /run/writ-creds/alpha.creds', 'beta started with /run/writ-creds/beta.creds', 'alpha closed', 'beta closed']));
  });

  it('given the second service fails to start, then the first is closed again, the log names the failing service and its code, and the process ends 1', async () => {
    const run = await runProcess('alpha,beta:fail-start,gamma');
    expect(run.code).toBe(1);
    expect(fakeEvents(run)).toEqual(['alpha started with /run/writ-creds/alpha.creds', 'alpha closed']);
    expect(run.lines).toContainEqual(expect.objectContaining({ service: 'beta', err: expect.objectContaining({ code: 'FAKE_START_FAILED' }) }));
  });

  it('given a service that throws once running, then the whole process ends 1 (never half alive), naming the crash', async () => {
    const run = await runProcess('alpha,beta:crash-after-start');
    expect(run.code).toBe(1);
    expect(run.lines).toContainEqual(expect.objectContaining({ origin: 'uncaughtException', err: expect.objectContaining({ message: 'beta crashed' }) }));
  });
});
