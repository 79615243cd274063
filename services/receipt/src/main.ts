import 'reflect-metadata';
import { startTelemetry } from '@writ/telemetry';
import { createReceiptApp, SERVICE_NAME } from './bootstrap.js';
import { loadReceiptConfig } from './config.js';

// Bootstrap only: config (fail fast), telemetry, the app; SIGTERM/SIGINT drain the bus and close.
const config = loadReceiptConfig();
const telemetry = startTelemetry({ serviceName: `writ-${SERVICE_NAME}` });
const service = await createReceiptApp(config);
service.app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
service.app.getHttpServer().on('close', () => {
  void telemetry.shutdown();
});
