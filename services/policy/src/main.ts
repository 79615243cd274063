import 'reflect-metadata';
import { isProcessEntry } from '@writ/runtime';
import { runServiceProcess, type ServiceDefinition } from '@writ/runtime/nest';
import { createPolicyApp } from './bootstrap.js';
import { loadPolicyConfig, type PolicyConfig } from './config.js';

export { createPolicyApp, type PolicyApp, type PolicyAppOptions } from './bootstrap.js';
export { loadPolicyConfig, type PolicyConfig } from './config.js';

/** The policy service as a process runs it: alone (below), or with the other services in one process (apps/serve). */
export const policyService: ServiceDefinition<PolicyConfig> = {
  serviceName: 'policy',
  telemetry: { serviceName: 'policy' },
  config: (env) => loadPolicyConfig(env),
  start: (config, context) => createPolicyApp(config, context),
};

// Process entry (`node dist/main.js`), not an import: config (fail fast), telemetry, the app; SIGTERM / SIGINT drain it.
if (isProcessEntry(import.meta.url)) void runServiceProcess(policyService);
