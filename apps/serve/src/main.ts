import { runServicesProcess } from '@writ/runtime/nest';
import { WRIT_SERVICES_IN_START_ORDER } from './serve.js';

// One process, every service (docs/operations.md, "One process"): one OpenTelemetry SDK whose
// service.name is `writ` (each bus span names its service in `writ.service`); each service its
// own bus credential, HTTP port and config (runtime `sharedProcessEnvironments`). SIGTERM drains
// them all at once; a failed start or a crash ends the process non-zero.
void runServicesProcess(WRIT_SERVICES_IN_START_ORDER, {
  telemetry: { serviceName: 'writ', resourceAttributes: { 'writ.services': WRIT_SERVICES_IN_START_ORDER.map((service) => service.serviceName).join(',') } },
});
