import 'reflect-metadata';
import { isProcessEntry } from '@writ/runtime';
import { runServiceProcess, type ServiceDefinition } from '@writ/runtime/nest';
import { createOrchestratorApp } from './bootstrap.js';
import { loadOrchestratorConfig, type OrchestratorConfig } from './config.js';

export { createOrchestratorApp, type OrchestratorApp, type OrchestratorAppOptions } from './bootstrap.js';
export { loadOrchestratorConfig, type OrchestratorConfig } from './config.js';

/** The orchestrator as a process runs it: alone (below), or with the other services in one process (apps/serve). */
export const orchestratorService: ServiceDefinition<OrchestratorConfig> = {
  serviceName: 'orchestrator',
  telemetry: { serviceName: 'orchestrator' },
  config: (env) => loadOrchestratorConfig(env),
  start: (config, context) => createOrchestratorApp(config, context),
};

// Process entry (`node dist/main.js`), not an import: config (fail fast), telemetry, the app; SIGTERM / SIGINT drain it.
if (isProcessEntry(import.meta.url)) void runServiceProcess(orchestratorService);
