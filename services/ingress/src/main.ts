import 'reflect-metadata';
import { isProcessEntry } from '@writ/runtime';
import { runServiceProcess, type ServiceDefinition } from '@writ/runtime/nest';
import { createIngressApp } from './bootstrap.js';
import { loadIngressConfig, type IngressConfig } from './config.js';
import { SERVICE_NAME } from './ingress.module.js';

export { createIngressApp, type IngressApp, type IngressAppOptions } from './bootstrap.js';
export { loadIngressConfig, type IngressConfig } from './config.js';

/** The ingress service as a process runs it: alone (below), or with the other services in one process (apps/serve). */
export const ingressService: ServiceDefinition<IngressConfig> = {
  serviceName: SERVICE_NAME,
  telemetry: { serviceName: SERVICE_NAME },
  config: (env) => loadIngressConfig(env),
  start: (config, context) => createIngressApp(config, context),
};

// Process entry (`node dist/main.js`), not an import: config (fail fast), telemetry, the app; SIGTERM drains it.
if (isProcessEntry(import.meta.url)) void runServiceProcess(ingressService);
