import 'reflect-metadata';
import { isProcessEntry } from '@writ/runtime';
import { runServiceProcess, type ServiceDefinition } from '@writ/runtime/nest';
import { SERVICE_NAME, createReceiptApp } from './bootstrap.js';
import { loadReceiptConfig, type ReceiptConfig } from './config.js';

export { createReceiptApp, SERVICE_NAME, type ReceiptApp, type ReceiptAppOptions } from './bootstrap.js';
export { loadReceiptConfig, type ReceiptConfig } from './config.js';

/** The receipt service as a process runs it: alone (below), or with the other services in one process (apps/serve). */
export const receiptService: ServiceDefinition<ReceiptConfig> = {
  serviceName: SERVICE_NAME,
  telemetry: { serviceName: `writ-${SERVICE_NAME}` },
  config: (env) => loadReceiptConfig(env),
  start: (config, context) => createReceiptApp(config, context),
};

// Process entry (`node dist/main.js`), not an import: config (fail fast), telemetry, the app; SIGTERM / SIGINT drain the bus and close.
if (isProcessEntry(import.meta.url)) void runServiceProcess(receiptService);
