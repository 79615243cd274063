import 'reflect-metadata';
import { isProcessEntry } from '@writ/runtime';
import { runServiceProcess } from '@writ/runtime/nest';
import { createProjectionApp } from './bootstrap.js';
import { SERVICE_NAME, loadProjectionConfig } from './config.js';

export { createProjectionApp, rebuildIntoFreshSchema, type ProjectionApp, type ProjectionAppOptions, type RebuildOptions } from './bootstrap.js';
export { loadProjectionConfig, ProjectionEnv, toProjectionConfig, type ProjectionConfig } from './config.js';
export { rebuildProjection, type RebuildReport } from './application/rebuild.js';
export type { ProjectionErrorCode } from './application/projection-errors.js';

// Process entry (`node dist/main.js`), not an import: config from the environment, telemetry, the app; SIGTERM drains it.
if (isProcessEntry(import.meta.url)) {
  void runServiceProcess({
    serviceName: SERVICE_NAME,
    telemetry: { serviceName: `writ-${SERVICE_NAME}`, serviceVersion: '0.1.0' },
    config: () => loadProjectionConfig(),
    start: (config, onShutdown) => createProjectionApp(config, { onShutdown }),
  });
}
