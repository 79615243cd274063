import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A service the CLI's tests start: the BUILT one (the CLI never imports a service); `npx nx run @writ/<service>:build` first. */
export type TestedService = 'receipt' | 'ingress' | 'policy';

export const serviceMain = (service: TestedService): string => fileURLToPath(new URL(`../../../services/${service}/dist/main.js`, import.meta.url));

/**
 * Who the CLI's tests act as: the deployment's operator (`npm test` points these at the
 * `writ init` of var/writ): its bus credential, NATS, principal, key and the trust anchor.
 */
export function operatorEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ['WRIT_NATS_URL', 'WRIT_NATS_CREDS', 'WRIT_HOME', 'WRIT_OPERATOR_ID', 'WRIT_OPERATOR_KEY', 'WRIT_TRUST_ANCHOR']) {
    const value = process.env[key];
    if (value !== undefined && value !== '') out[key] = value;
  }
  return out;
}

/** The parent's environment without anything Writ or Node would read in place of a test's own. */
function inherited(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('WRIT_') || key.startsWith('OTEL_') || key.startsWith('VITEST') || key === 'NODE_OPTIONS' || key === 'LOG_LEVEL') continue;
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * A service as a child process, with the test's environment (its subject root,
 * streams, key file, log id) on top of the operator's credential and quiet
 * defaults (a free port, no telemetry, warnings only), its output appended to `logFile`.
 */
export class ServiceProcess {
  private constructor(
    private readonly service: TestedService,
    private readonly child: ChildProcess,
    readonly logFile: string,
  ) {}

  static start(service: TestedService, env: Readonly<Record<string, string>>, logFile: string): ServiceProcess {
    const main = serviceMain(service);
    if (!existsSync(main)) throw new Error(`${main} is missing: build the ${service} service first (npx nx run @writ/${service}:build)`);
    const fd = openSync(logFile, 'a');
    const child = spawn(process.execPath, [main], {
      env: {
        ...inherited(),
        ...operatorEnv(),
        WRIT_HTTP_HOST: '127.0.0.1',
        WRIT_HTTP_PORT: '0',
        OTEL_SDK_DISABLED: 'true',
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    return new ServiceProcess(service, child, logFile);
  }

  /** Throws, with the end of its log, when the process has exited (a `waitFor` probe calls it first). */
  assertRunning(): void {
    if (this.child.exitCode !== null) throw new Error(`the ${this.service} service exited (${this.child.exitCode}): ${readFileSync(this.logFile, 'utf8').slice(-2_000)}`);
  }

  /** SIGTERM (a graceful stop: the bus drains), then waits for the exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}
