import 'reflect-metadata';
import { isProcessEntry } from '@writ/runtime';
import { runServiceProcess } from '@writ/runtime/nest';
import { createIngressApp } from './bootstrap.js';
import { loadIngressConfig } from './config.js';
import { SERVICE_NAME } from './ingress.module.js';

export { createIngressApp, type IngressApp, type IngressAppOptions } from './bootstrap.js';
export { loadIngressConfig, type IngressConfig } from './config.js';

// Process entry (`node dist/main.js`), not an import: config (fail fast), telemetry, the app; SIGTERM drains it.
if (isProcessEntry(import.meta.url)) {
  void runServiceProcess({
    serviceName: SERVICE_NAME,
    telemetry: { serviceName: SERVICE_NAME },
    config: () => loadIngressConfig(),
    start: (config, onShutdown) => createIngressApp(config, { onShutdown }),
  });
}
