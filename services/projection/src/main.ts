import 'reflect-metadata';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLogger, startTelemetry } from '@writ/telemetry';
import { createProjectionApp } from './bootstrap.js';
import { SERVICE_NAME, loadProjectionConfig } from './config.js';

export { createProjectionApp, rebuildIntoFreshSchema, type ProjectionApp, type ProjectionAppOptions, type RebuildOptions } from './bootstrap.js';
export { loadProjectionConfig, ProjectionEnv, toProjectionConfig, type ProjectionConfig } from './config.js';
export { rebuildProjection, type RebuildReport } from './application/rebuild.js';
export type { ProjectionErrorCode } from './application/projection-errors.js';

/** Bootstrap only: config from the environment, telemetry, the app; SIGTERM drains it. */
async function main(): Promise<void> {
  const config = loadProjectionConfig();
  const telemetry = startTelemetry({ serviceName: `writ-${SERVICE_NAME}`, serviceVersion: '0.1.0' });
  const logger = createLogger(SERVICE_NAME);
  try {
    const projection = await createProjectionApp(config, { logger, onShutdown: () => telemetry.shutdown() });
    projection.app.enableShutdownHooks();
  } catch (error) {
    logger.fatal({ err: error }, 'projection failed to start');
    await telemetry.shutdown().catch(() => undefined);
    process.exitCode = 1;
  }
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) void main();
