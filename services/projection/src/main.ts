import 'reflect-metadata';
import { isProcessEntry } from '@writ/runtime';
import { runServiceProcess, type ServiceDefinition } from '@writ/runtime/nest';
import { createProjectionApp } from './bootstrap.js';
import { SERVICE_NAME, loadProjectionConfig, type ProjectionConfig } from './config.js';

export { createProjectionApp, rebuildIntoFreshSchema, type ProjectionApp, type ProjectionAppOptions, type RebuildOptions } from './bootstrap.js';
export { loadProjectionConfig, ProjectionEnv, toProjectionConfig, type ProjectionConfig } from './config.js';
export { rebuildProjection, type RebuildReport } from './application/rebuild.js';
export type { ProjectionErrorCode } from './application/projection-errors.js';

/** The projection service as a process runs it: alone (below), or with the other services in one process (apps/serve). */
export const projectionService: ServiceDefinition<ProjectionConfig> = {
  serviceName: SERVICE_NAME,
  telemetry: { serviceName: `writ-${SERVICE_NAME}`, serviceVersion: '0.1.0' },
  config: (env) => loadProjectionConfig(env),
  start: (config, context) => createProjectionApp(config, context),
};

// Process entry (`node dist/main.js`), not an import: config from the environment, telemetry, the app; SIGTERM drains it.
if (isProcessEntry(import.meta.url)) void runServiceProcess(projectionService);
