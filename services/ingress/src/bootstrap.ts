import type { NestExpressApplication } from '@nestjs/platform-express';
import { httpAudience } from '@writ/contracts';
import { ServiceRuntime, httpPrincipals, loadTrustAnchor, verifyHttpBearer } from '@writ/runtime';
import { startServiceApp } from '@writ/runtime/nest';
import { createLogger, type Logger } from '@writ/telemetry';
import type { Clock } from './application/ports.js';
import type { IngressConfig } from './config.js';
import type { ParticipantTimerOutcome } from './inbound/participant-expiry.timer.js';
import { IngressModule, SERVICE_NAME } from './ingress.module.js';

const HTTP_BODY_LIMIT = 1024 * 1024;

export interface IngressApp {
  readonly app: NestExpressApplication;
  /** `http://<host>:<port>` actually bound (port 0 picks a free one). */
  readonly url: string;
  /** Graceful stop: drain the consumer and responders, close HTTP, drain NATS. */
  close(): Promise<void>;
}

export interface IngressAppOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Runs last at shutdown, after NATS drained (main: flush telemetry). */
  readonly onShutdown?: () => Promise<void>;
  /** The service's own environment: its bus credential, authorship, seal keys, enrollment (default `process.env`; apps/serve gives each service its own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The participant TTL timer's pull wait (default 5 s) and an observer of its outcomes (tests). */
  readonly participantExpiry?: { readonly pullExpiresMs?: number; readonly onOutcome?: (outcome: ParticipantTimerOutcome) => void };
}

/**
 * Starts a complete ingress in this process: connects to NATS, ensures the bus
 * streams and the event log, binds the durable consumer and the request/reply
 * responders, and listens on HTTP. `main.ts` uses it; tests start a real
 * ingress with their own streams and subject root through it. `/readyz`: NATS
 * connected, streams ensured, consumer bound, responders listening.
 */
export async function createIngressApp(config: IngressConfig, options: IngressAppOptions = {}): Promise<IngressApp> {
  const logger = options.logger ?? createLogger(SERVICE_NAME);
  const trustAnchor = config.trustAnchorFile === undefined ? undefined : await loadTrustAnchor(config.trustAnchorFile);
  if (trustAnchor === undefined) logger.warn('no WRIT_TRUST_ANCHOR: only operators already in the log can register principals (run writ init and set it)');
  const runtime = await ServiceRuntime.start({
    serviceName: SERVICE_NAME,
    natsUrl: config.natsUrl,
    subjectRoot: config.subjectRoot,
    streams: config.streams,
    logger,
    onClose: options.onShutdown,
    env: options.env,
  });
  try {
    // Every event ingress appends is sealed by its key (docs/security.md, "Authorship").
    await runtime.useSealKey({ principalId: config.principalId, displayName: 'Writ ingress' });
    const module = IngressModule.forRoot({ config, runtime, logger, clock: options.clock, participantExpiry: options.participantExpiry, trustAnchor });
    let respondersListening = false;
    runtime.readiness.add('responders_listening', () => respondersListening);
    // GET /v1/seeds/<id> needs a bearer token, verified against the principals in the log.
    const principals = httpPrincipals(await runtime.startPrincipalRegistry(), trustAnchor);
    const audience = httpAudience(config.subjectRoot);
    const service = await startServiceApp({
      serviceName: SERVICE_NAME,
      runtime,
      module,
      http: config.http,
      logger,
      httpAuth: () => (authorization) => verifyHttpBearer(authorization, { principals, audience, clock: () => new Date() }),
      // The body of POST /v1/actions is the compact JWS itself (or a SubmitAction document). Up to NATS's
      // 1 MiB, a body over the ingress limit is still recorded and refused as INGRESS_TOO_LARGE.
      configure: (app) => {
        app.useBodyParser('text', { type: ['application/jose', 'text/plain'], limit: HTTP_BODY_LIMIT });
        app.useBodyParser('json', { limit: HTTP_BODY_LIMIT });
      },
    });
    respondersListening = true;
    logger.info({ url: service.url, submit: config.subjects.submitAction, consumer: config.subjects.ingressActions }, 'ingress listening');
    return {
      app: service.app,
      url: service.url,
      close: async () => {
        respondersListening = false;
        await service.close();
      },
    };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}
