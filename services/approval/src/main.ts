import 'reflect-metadata';
import { isProcessEntry } from '@writ/runtime';
import { runServiceProcess, type ServiceDefinition } from '@writ/runtime/nest';
import { createApprovalApp, SERVICE_NAME } from './bootstrap.js';
import { loadApprovalConfig, type ApprovalConfig } from './config.js';

/** The approval service as a process runs it: alone (below), or with the other services in one process (apps/serve). */
export const approvalService: ServiceDefinition<ApprovalConfig> = {
  serviceName: SERVICE_NAME,
  // service.name as every service names itself: the service_name of its metrics (docs/operations.md, "Metrics").
  telemetry: { serviceName: SERVICE_NAME },
  config: (env) => loadApprovalConfig(env),
  start: (config, context) => createApprovalApp(config, context),
};

// Process entry (`node dist/main.js`), not an import: config (fail fast), telemetry, the app; SIGTERM / SIGINT drain the bus and close.
if (isProcessEntry(import.meta.url)) void runServiceProcess(approvalService);
