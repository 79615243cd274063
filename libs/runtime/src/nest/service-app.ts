import type { DynamicModule, LoggerService, LogLevel, Provider } from '@nestjs/common';
import { NestFactory, Reflector } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { BusExceptionFilter, JetStreamServer, type JetStreamServerOptions } from '@writ/bus';
import type { Logger } from '@writ/telemetry';
import { ReadinessRegistry } from '../readiness.js';
import type { ServiceHttp } from '../service-environment.js';
import { ServiceRuntime } from '../service-runtime.js';
import { HttpAuthGuard, type HttpBearerVerifier } from './http-auth.guard.js';
import { withMetricsRoute } from './metrics-route.js';

/**
 * The providers every composition root binds: the runtime (Nest drains its
 * NATS connection at shutdown, after the bus and HTTP closed) and its
 * readiness (what `HealthController` reports).
 */
export function runtimeProviders(runtime: ServiceRuntime): Provider[] {
  return [
    { provide: ServiceRuntime, useValue: runtime },
    { provide: ReadinessRegistry, useValue: runtime.readiness },
  ];
}

/** Bus server settings a service may tune (the rest comes from the runtime). */
export type ServiceBusOptions = Omit<JetStreamServerOptions, 'serviceName' | 'connection' | 'servers' | 'logger'>;

export interface ServiceAppOptions {
  /** Names the durables (`<serviceName>__…`), the request/reply queue group and the bus's log lines. */
  readonly serviceName: string;
  readonly runtime: ServiceRuntime;
  /** The composition root. */
  readonly module: DynamicModule;
  readonly http: ServiceHttp;
  /** The bus transport's logger. */
  readonly logger: Logger;
  /** Nest's own logging: default errors and warnings; false silences it. */
  readonly nestLogger?: false | LogLevel[] | LoggerService;
  /** Nest's JSON and urlencoded body parsers (default on); off to register others in `configure`. */
  readonly bodyParser?: boolean;
  /** Default: dead letters under `<root>.dlq`. */
  readonly bus?: ServiceBusOptions;
  /**
   * Verifies HTTP bearer tokens (`verifyHttpBearer` against the service's principal registry): every
   * route not marked `@PublicRoute()` needs one. Without it such routes are refused (401) to everyone.
   * Called once the app exists (its providers are available).
   */
  readonly httpAuth?: (app: NestExpressApplication) => HttpBearerVerifier;
  /** Before anything listens: body parsers, HTTP-only global filters. */
  readonly configure?: (app: NestExpressApplication) => void;
  /** Once HTTP listens, before the consumers are bound (a catch-up from the log...). */
  readonly beforeConsumers?: (app: NestExpressApplication) => Promise<unknown>;
  /** How long the cleanup after a failed start may take before the error is thrown anyway (default 10 s). */
  readonly cleanupDeadlineMs?: number;
}

/**
 * A failed start must end, so the process exits and its supervisor starts it again. Its cleanup
 * (the app's shutdown hooks, HTTP, the runtime) gets this long: in a cluster chaos run a
 * projection whose consumers could not be bound stayed half-closed for good, its listener gone,
 * still answering a client polling over keep-alive, and never exited.
 */
export const FAILED_START_CLEANUP_MS = 10_000;

/** `work`, or once `ms` have passed, whichever comes first (never rejects). */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** A started service: HTTP listening, its consumers and responders bound. */
export interface ServiceApp {
  readonly app: NestExpressApplication;
  readonly server: JetStreamServer;
  /** `http://<host>:<port>` actually bound (port 0 picks a free one; a wildcard host reads as 127.0.0.1). */
  readonly url: string;
  /** Graceful: the bus drains (in-flight work finishes and is acked), HTTP closes, then the runtime (NATS). Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a service's hybrid Nest app: the HTTP app from its composition root
 * (and `/metrics`: `withMetricsRoute`),
 * the JetStream transport attached with `BusExceptionFilter` (so error codes
 * reach the bus's ack table), HTTP listening, then the consumers bound. The
 * runtime's bus watch follows the transport (readiness).
 *
 * The filter goes on the microservice only (HTTP keeps Nest's own exception
 * handling, or the app's), and before its listeners are registered: a hybrid
 * app registers them when the microservice is connected unless that is
 * deferred. A deferred microservice would run the app's init hooks a second
 * time when it starts; the app has already run them at `listen`, as Nest does
 * for a microservice connected without deferral.
 *
 * On failure everything started is closed again (the runtime too) and the
 * error thrown.
 */
export async function startServiceApp(options: ServiceAppOptions): Promise<ServiceApp> {
  const { runtime, http } = options;
  let app: NestExpressApplication | undefined;
  try {
    app = await NestFactory.create<NestExpressApplication>(withMetricsRoute(options.module), {
      logger: options.nestLogger ?? ['error', 'warn'],
      abortOnError: false,
      bodyParser: options.bodyParser ?? true,
    });
    options.configure?.(app);
    app.useGlobalGuards(new HttpAuthGuard(app.get(Reflector), options.httpAuth?.(app)));
    const server = new JetStreamServer({
      deadLetterPrefix: runtime.subjects.deadLetters,
      ...options.bus,
      serviceName: options.serviceName,
      connection: runtime.nc,
      consumerConnection: runtime.pullNc,
      logger: options.logger,
    });
    runtime.attachBus(server);
    const microservice = app.connectMicroservice({ strategy: server }, { deferInitialization: true });
    microservice.useGlobalFilters(new BusExceptionFilter());
    (microservice as { setIsInitHookCalled?: (called: boolean) => void }).setIsInitHookCalled?.(true);
    await app.listen(http.port, http.host);
    await options.beforeConsumers?.(app);
    await app.startAllMicroservices();
    const started = app;
    let closing: Promise<void> | undefined;
    return {
      app: started,
      server,
      url: boundUrl(started, http),
      close: () => {
        closing ??= (async () => {
          await started.close();
          await runtime.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    const deadline = options.cleanupDeadlineMs ?? FAILED_START_CLEANUP_MS;
    if (app !== undefined) await settledWithin(app.close(), deadline);
    await settledWithin(runtime.close(), deadline);
    throw error;
  }
}

/** The URL a client on this host reaches the bound server at. */
function boundUrl(app: NestExpressApplication, http: ServiceHttp): string {
  const address = app.getHttpServer().address() as { port: number } | string | null;
  const port = typeof address === 'object' && address !== null ? address.port : http.port;
  const wildcard = http.host === '0.0.0.0' || http.host === '::' || http.host === '';
  const host = wildcard ? '127.0.0.1' : http.host.includes(':') ? `[${http.host}]` : http.host;
  return `http://${host}:${port}`;
}
