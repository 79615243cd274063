import type { INestApplication } from '@nestjs/common';
import { EventStoreTaskLog, ServiceRuntime } from '@writ/runtime';
import { startServiceApp } from '@writ/runtime/nest';
import { createLogger, type Logger } from '@writ/telemetry';
import { IssueReceiptHandler } from './application/issue-receipt.handler.js';
import type { Clock } from './application/ports.js';
import { receiptSubjects, type ReceiptConfig, type ReceiptSubjects } from './config.js';
import { KeyReceiptSigner } from './outbound/receipt-signer.js';
import { ReceiptModule } from './receipt.module.js';

export const SERVICE_NAME = 'receipt';

export interface ReceiptApp {
  readonly app: INestApplication;
  /** Base URL of the HTTP server (`/healthz`, `/readyz`). */
  readonly url: string;
  readonly subjects: ReceiptSubjects;
  readonly principalId: string;
  /** Key id of the signing key registered for `principalId` (the receipts' `signer_ref`). */
  readonly kid: string;
  /** Graceful stop: the bus drains (in-flight commands finish and ack), then NATS closes. */
  close(): Promise<void>;
}

export interface ReceiptAppOptions {
  readonly logger?: Logger;
  /** The adapter edge's clock (default: the system clock). */
  readonly clock?: Clock;
  /** Bus consumer tuning for tests (short pulls keep a graceful stop short). */
  readonly pullExpiresMs?: number;
  /** Runs last at shutdown, after NATS drained (main: flush telemetry). */
  readonly onShutdown?: () => Promise<void>;
}

/**
 * Starts the receipt service in this process: NATS, the bus streams, the
 * event log, the service key and principal, then the Nest HTTP app with the
 * JetStream transport attached, listening on the configured port. Used by
 * `main.ts` and by tests (with test streams and a test subject root).
 * `/readyz`: NATS connected, streams ensured, the bus connected with its consumer bound.
 */
export async function createReceiptApp(config: ReceiptConfig, options: ReceiptAppOptions = {}): Promise<ReceiptApp> {
  const logger = options.logger ?? createLogger(SERVICE_NAME);
  const subjects = receiptSubjects(config.subjectRoot);
  const runtime = await ServiceRuntime.start({
    serviceName: SERVICE_NAME,
    connectionName: `writ-${SERVICE_NAME}`,
    natsUrl: config.natsUrl,
    subjectRoot: config.subjectRoot,
    streams: config.streams,
    logger,
    onClose: options.onShutdown,
  });
  try {
    const key = await runtime.useSigningKey({ principalId: config.principalId, displayName: 'Writ receipt service', keyFile: config.keyFile });
    runtime.readiness.add('consumers_bound', runtime.bus.boundCheck(1));
    const service = await startServiceApp({
      serviceName: SERVICE_NAME,
      runtime,
      module: ReceiptModule.forRoot({
        subjects,
        commandsStream: config.streams.commands,
        runtime,
        issueReceipt: new IssueReceiptHandler({
          log: new EventStoreTaskLog(runtime.store),
          signer: new KeyReceiptSigner(key),
          clock: options.clock ?? (() => new Date()),
          principalId: config.principalId,
        }),
        logger,
      }),
      http: config.http,
      logger,
      bus: { pullExpiresMs: options.pullExpiresMs },
    });
    logger.info({ url: service.url, subjects: { issue: subjects.issue } }, 'receipt service listening');
    return { app: service.app, url: service.url, subjects, principalId: config.principalId, kid: key.kid, close: service.close };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}
