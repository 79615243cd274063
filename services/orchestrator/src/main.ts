import 'reflect-metadata';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { startTelemetry } from '@writ/telemetry';
import { createOrchestratorApp } from './bootstrap.js';
import { loadOrchestratorConfig } from './config.js';

export { createOrchestratorApp, type OrchestratorApp, type OrchestratorAppOptions } from './bootstrap.js';
export { loadOrchestratorConfig, type OrchestratorConfig } from './config.js';

/** Process entry: config (fail fast), telemetry, the app; SIGTERM / SIGINT drain it. */
async function main(): Promise<void> {
  const config = loadOrchestratorConfig();
  const telemetry = startTelemetry({ serviceName: 'orchestrator' });
  const orchestrator = await createOrchestratorApp(config);
  orchestrator.app.enableShutdownHooks();
  process.once('beforeExit', () => void telemetry.shutdown());
}

/** True when this file is the process entry (`node dist/main.js`), not an import. */
function isEntry(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

if (isEntry()) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
