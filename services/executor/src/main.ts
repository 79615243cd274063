import 'reflect-metadata';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLogger, startTelemetry } from '@writ/telemetry';
import { createExecutorApp } from './bootstrap.js';
import { loadExecutorConfig } from './config.js';

export { createExecutorApp, type CreateExecutorAppOptions, type ExecutorApp } from './bootstrap.js';
export { executorSubjects, loadExecutorConfig, toExecutorConfig, ExecutorEnv, type ExecutorConfig } from './config.js';
export { useIdFor } from './application/event-drafts.js';
export { paramsSha256, GRANT_TYP, ExecutorRefusalCode } from './application/grant-verification.js';
export type { ExecutorErrorCode } from './application/executor-errors.js';

const log = createLogger('executor');

/** Runs the executor from the environment until SIGTERM / SIGINT, then drains. */
async function main(): Promise<void> {
  const config = loadExecutorConfig();
  const telemetry = startTelemetry({ serviceName: 'executor' });
  const executor = await createExecutorApp(config, { onShutdown: () => telemetry.shutdown() });
  // SIGTERM / SIGINT: the bus drains (running actions finish and are recorded), then HTTP and NATS close.
  executor.app.enableShutdownHooks();
  log.info({ url: executor.url, executor_id: config.executorId, host_id: executor.config.hostId, subject: config.subjects.run }, 'executor ready');
}

/** True when this module is the process entry point (not imported, e.g. by a test). */
function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main().catch((error: unknown) => {
    log.fatal({ err: error }, 'executor failed to start');
    process.exitCode = 1;
  });
}
