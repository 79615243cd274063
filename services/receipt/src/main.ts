import 'reflect-metadata';
import { isProcessEntry } from '@writ/runtime';
import { runServiceProcess } from '@writ/runtime/nest';
import { SERVICE_NAME, createReceiptApp } from './bootstrap.js';
import { loadReceiptConfig } from './config.js';

export { createReceiptApp, SERVICE_NAME, type ReceiptApp, type ReceiptAppOptions } from './bootstrap.js';
export { loadReceiptConfig, type ReceiptConfig } from './config.js';

// Process entry (`node dist/main.js`), not an import: config (fail fast), telemetry, the app; SIGTERM / SIGINT drain the bus and close.
if (isProcessEntry(import.meta.url)) {
  void runServiceProcess({
    serviceName: SERVICE_NAME,
    telemetry: { serviceName: `writ-${SERVICE_NAME}` },
    config: () => loadReceiptConfig(),
    start: (config, onShutdown) => createReceiptApp(config, { onShutdown }),
  });
}
