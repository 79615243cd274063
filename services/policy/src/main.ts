import 'reflect-metadata';
import { isProcessEntry } from '@writ/runtime';
import { runServiceProcess } from '@writ/runtime/nest';
import { createPolicyApp } from './bootstrap.js';
import { loadPolicyConfig } from './config.js';

export { createPolicyApp, type PolicyApp, type PolicyAppOptions } from './bootstrap.js';
export { loadPolicyConfig, type PolicyConfig } from './config.js';

// Process entry (`node dist/main.js`), not an import: config (fail fast), telemetry, the app; SIGTERM / SIGINT drain it.
if (isProcessEntry(import.meta.url)) {
  void runServiceProcess({
    serviceName: 'policy',
    telemetry: { serviceName: 'policy' },
    config: () => loadPolicyConfig(),
    start: (config, onShutdown) => createPolicyApp(config, { onShutdown }),
  });
}
