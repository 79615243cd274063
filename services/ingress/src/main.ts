import { pathToFileURL } from 'node:url';
import { startTelemetry } from '@writ/telemetry';
import { createIngressApp } from './bootstrap.js';
import { loadIngressConfig } from './config.js';

export { createIngressApp, type IngressApp, type IngressAppOptions } from './bootstrap.js';
export { loadIngressConfig, type IngressConfig } from './config.js';

/** Bootstrap only: config (fail fast), telemetry, the app; SIGTERM drains it (enableShutdownHooks). */
async function main(): Promise<void> {
  const config = loadIngressConfig();
  const telemetry = startTelemetry({ serviceName: 'ingress' });
  const ingress = await createIngressApp(config);
  ingress.app.getHttpServer().once('close', () => void telemetry.shutdown());
}

// Started as a program (node dist/main.js), not when imported.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : 'INGRESS_START_FAILED';
    process.stderr.write(`error ${code}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
