// A process that runs fake services through runServicesProcess (the body of apps/serve's main),
// for serve-process.int.spec.ts: FAKE_SERVICES lists `<name>[:fail-start|:crash-after-start]`.
// Each service logs what happens to it on stdout as one JSON line (`{"fake":"<name>","event":...}`).
import { runServicesProcess } from '@writ/runtime/nest';

const say = (fake, event) => process.stdout.write(`${JSON.stringify({ fake, event })}\n`);

const definitions = (process.env['FAKE_SERVICES'] ?? '').split(',').map((entry) => {
  const [serviceName, behaviour] = entry.split(':');
  return {
    serviceName,
    telemetry: { serviceName },
    config: (env) => ({ port: env['WRIT_HTTP_PORT'], creds: env['WRIT_NATS_CREDS'] }),
    async start(config) {
      if (behaviour === 'fail-start') throw Object.assign(new Error(`${serviceName} cannot start`), { code: 'FAKE_START_FAILED' });
      say(serviceName, `started with ${config.creds}`);
      if (behaviour === 'crash-after-start') setTimeout(() => { throw new Error(`${serviceName} crashed`); }, 200);
      // A running service holds the process open (a real one, its HTTP server and bus connection) until it is closed:
      // without it the process would end on its own before the test's SIGTERM, and the stop would go untested.
      const running = setInterval(() => undefined, 60_000);
      return {
        app: { enableShutdownHooks: () => undefined },
        close: async () => {
          clearInterval(running);
          say(serviceName, 'closed');
        },
      };
    },
  };
});

await runServicesProcess(definitions, { telemetry: { serviceName: 'writ' } });
