/**
 * `@writ/runtime/nest`: the NestJS side of a service process (its HTTP and bus
 * app, the health endpoints, the process entry). Kept apart from the main
 * entry so that what only needs config, streams, keys or principals (the CLI,
 * pure views) does not load NestJS.
 */
export { HealthController } from './nest/health.controller.js';
export { METRICS_PATH, MetricsController, withMetricsRoute } from './nest/metrics-route.js';
export { FAILED_START_CLEANUP_MS, runtimeProviders, settledWithin, startServiceApp, type ServiceApp, type ServiceAppOptions, type ServiceBusOptions } from './nest/service-app.js';
export { runServiceProcess, type ServiceDefinition, type ServiceProcessEnvironment, type ServiceStartContext, type StartedService } from './nest/service-process.js';
export { runServicesProcess, startServices, type ServicesProcessOptions, type SharedProcessServices, type StartServicesOptions } from './nest/services-process.js';
export { Caller, HttpAuthException, HttpAuthGuard, PublicRoute, callerOf, type HttpBearerVerifier } from './nest/http-auth.guard.js';
