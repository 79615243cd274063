import 'reflect-metadata';
import { isProcessEntry } from '@writ/runtime';
import { runServiceProcess, type ServiceDefinition } from '@writ/runtime/nest';
import { createLogger } from '@writ/telemetry';
import { createExecutorApp } from './bootstrap.js';
import { loadExecutorConfig, type ExecutorConfig } from './config.js';

export { createExecutorApp, type CreateExecutorAppOptions, type ExecutorApp } from './bootstrap.js';
export { executorSubjects, loadExecutorConfig, toExecutorConfig, ExecutorEnv, type ExecutorConfig } from './config.js';
export { useIdFor } from './application/event-drafts.js';
export { paramsSha256, GRANT_TYP, ExecutorRefusalCode } from './application/grant-verification.js';
export type { ExecutorErrorCode } from './application/executor-errors.js';

/** The executor as a process runs it: alone (below), or with the other services in one process (apps/serve). */
export const executorService: ServiceDefinition<ExecutorConfig> = {
  serviceName: 'executor',
  telemetry: { serviceName: 'executor' },
  config: (env) => loadExecutorConfig(env),
  async start(config, context) {
    // SIGTERM / SIGINT: the bus drains (running actions finish and are recorded), then HTTP and NATS close.
    const executor = await createExecutorApp(config, context);
    createLogger('executor').info({ url: executor.url, executor_id: config.executorId, host_id: executor.config.hostId, subject: config.subjects.run }, 'executor ready');
    return executor;
  },
};

// Process entry (`node dist/main.js`), not an import: config (fail fast), telemetry, the app; SIGTERM / SIGINT drain it.
if (isProcessEntry(import.meta.url)) void runServiceProcess(executorService);
