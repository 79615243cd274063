import type { INestApplication, LogLevel } from '@nestjs/common';
import type { JetStreamServer } from '@writ/bus';
import { ServiceRuntime, serviceHttp, serviceStreams, type ReadinessRegistry } from '@writ/runtime';
import { startServiceApp } from '@writ/runtime/nest';
import { createLogger, type Logger } from '@writ/telemetry';
import type { Clock } from './application/ports.js';
import type { PolicyConfig } from './config.js';
import { PolicyModule, SERVICE_NAME } from './policy.module.js';

export interface PolicyAppOptions {
  readonly logger?: Logger;
  /** Nest's own log levels (default errors and warnings); false silences it. */
  readonly nestLogger?: false | LogLevel[];
  /** Tests may pin the clock; production reads the system clock. */
  readonly clock?: Clock;
  /** Runs last at shutdown, after NATS drained (main: flush telemetry). */
  readonly onShutdown?: () => Promise<void>;
}

/** A running policy service: the HTTP app (health) with the JetStream listener attached. */
export interface PolicyApp {
  readonly app: INestApplication;
  readonly server: JetStreamServer;
  readonly readiness: ReadinessRegistry;
  /** Base URL of the HTTP server (`/healthz`, `/readyz`). */
  readonly url: string;
  /** Graceful: stop pulling, finish and ack in-flight events, close HTTP, drain NATS. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the policy service in-process: connects to NATS, opens the event log
 * and ensures the bus streams (commands, ingress, dead letters) under the
 * configured names and subject root, binds the durable `policy` consumer of
 * `<root>.cmd.policy.evaluate`, and listens on `WRIT_HTTP_PORT` (0 picks a
 * free port). `/readyz`: NATS connected, streams ensured, the bus connected
 * and its consumer bound.
 */
export async function createPolicyApp(config: PolicyConfig, options: PolicyAppOptions = {}): Promise<PolicyApp> {
  const env = config.env;
  const logger = options.logger ?? createLogger(SERVICE_NAME);
  const runtime = await ServiceRuntime.start({
    serviceName: SERVICE_NAME,
    natsUrl: env.WRIT_NATS_URL,
    subjectRoot: env.WRIT_SUBJECT_ROOT,
    streams: serviceStreams(env),
    logger,
    onClose: options.onShutdown,
  });
  try {
    runtime.readiness.add('bus', runtime.bus.statusCheck()).add('consumers_bound', runtime.bus.durablesCheck(1));
    const service = await startServiceApp({
      serviceName: SERVICE_NAME,
      runtime,
      module: PolicyModule.register({ config, runtime, logger, clock: options.clock }),
      http: serviceHttp(env),
      logger,
      nestLogger: options.nestLogger,
    });
    return { ...service, readiness: runtime.readiness };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}
