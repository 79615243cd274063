import 'reflect-metadata';
import { startTelemetry } from '@writ/telemetry';
import { createApprovalApp, SERVICE_NAME } from './bootstrap.js';
import { loadApprovalConfig } from './config.js';

// Bootstrap only: config (fail fast), telemetry, the app; SIGTERM/SIGINT drain the bus and close.
const config = loadApprovalConfig();
// service.name as every service names itself: the service_name of its metrics (docs/operations.md, "Metrics").
const telemetry = startTelemetry({ serviceName: SERVICE_NAME });
const service = await createApprovalApp(config);
service.app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
service.app.getHttpServer().on('close', () => {
  void telemetry.shutdown();
});
