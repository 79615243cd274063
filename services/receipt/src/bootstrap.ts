import type { INestApplication } from '@nestjs/common';
import { EventStoreTaskLog, ResolutionAuthority, ServiceRuntime, resolutionRegistrationOptions } from '@writ/runtime';
import { startServiceApp } from '@writ/runtime/nest';
import { createLogger, type Logger } from '@writ/telemetry';
import { IssueReceiptHandler } from './application/issue-receipt.handler.js';
import type { Clock } from './application/ports.js';
import { RotateKeyHandler } from './application/rotate-key.handler.js';
import { TlogKeeper, type ReceiptOutcome } from './application/tlog-keeper.js';
import { receiptSubjects, type ReceiptConfig, type ReceiptSubjects } from './config.js';
import { TransparencyLogProcess } from './inbound/transparency-log.process.js';
import { KeyReceiptSigner } from './outbound/receipt-signer.js';
import { EventStoreTlogLog } from './outbound/tlog-event-log.js';
import { KeyTreeHeadSigner } from './outbound/tree-head-signer.js';
import { ReceiptModule } from './receipt.module.js';

export const SERVICE_NAME = 'receipt';

export interface ReceiptApp {
  readonly app: INestApplication;
  /** Base URL of the HTTP server (`/healthz`, `/readyz`). */
  readonly url: string;
  readonly subjects: ReceiptSubjects;
  readonly principalId: string;
  /** Key id of the signing key registered for `principalId` at start (the receipts' `signer_ref`, and the tree heads'; a rotation switches it: see `activeKid`). */
  readonly kid: string;
  /** Key id of the key that signs receipts and tree heads now. */
  activeKid(): string;
  /** The receipt transparency log of this instance (`WRIT_TLOG_ID`). */
  readonly tlog: TlogKeeper;
  /** Graceful stop: the bus drains (in-flight commands finish and ack), then NATS closes. */
  close(): Promise<void>;
}

export interface ReceiptAppOptions {
  readonly logger?: Logger;
  /** The adapter edge's clock (default: the system clock); also the clock of key rotation and retirement. */
  readonly clock?: Clock;
  /** Bus consumer tuning for tests (short pulls keep a graceful stop short). */
  readonly pullExpiresMs?: number;
  /** Runs last at shutdown, after NATS drained (main: flush telemetry). */
  readonly onShutdown?: () => Promise<void>;
  /** The service's own environment: its bus credential, authorship, seal keys, enrollment (default `process.env`; apps/serve gives each service its own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Called each time the sequencer has handled a `receipt.issued` (tests and the bench count them). */
  readonly onSequenced?: (receiptId: string, outcome: ReceiptOutcome) => void;
}

/**
 * Starts the receipt service in this process: NATS, the bus streams, the
 * event log, the service's rotating key (its key directory; the principal and
 * its keys in the log) and the principal registry, the transparency log (rebuilt
 * from its stream and verified: a TLOG_* corruption code refuses the start)
 * with its follower, sequencer and tree head timer, then the Nest HTTP app
 * with the JetStream transport attached, listening on the configured port,
 * and last the key's retirement checks (every `WRIT_RECEIPT_KEY_CHECK_SECONDS`).
 * Used by `main.ts` and by tests (with test streams and a test subject root).
 * `/readyz`: NATS connected, streams ensured, the bus connected with its
 * consumer bound, the transparency log verified and sequencing.
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
    env: options.env,
  });
  let tlogProcess: TransparencyLogProcess | undefined;
  try {
    const clock = options.clock ?? (() => new Date());
    const keys = await runtime.useRotatingKey({
      principalId: config.principalId,
      displayName: 'Writ receipt service',
      keyDir: config.keys.dir,
      legacyKeyFile: config.keyFile,
      clock,
    });
    const principals = await runtime.startPrincipalRegistry();
    const startKid = keys.active.kid;
    const tlog = await TlogKeeper.open({
      log: new EventStoreTlogLog(runtime.store, config.tlog.logId),
      logId: config.tlog.logId,
      // Read at each head and each receipt: a rotation switches both to the new key.
      signer: () => new KeyTreeHeadSigner(keys.active),
      clock,
      principalId: config.principalId,
    });
    logger.info({ log_id: tlog.logId, leaves: tlog.size, tree_head: tlog.latestHead?.tree_size ?? null }, 'transparency log rebuilt and verified');
    tlogProcess = new TransparencyLogProcess({
      // Its followers read every event of the log: on the connection the service pulls on.
      nc: runtime.pullNc,
      store: runtime.store,
      stream: config.streams.events,
      eventsPrefix: runtime.subjects.events,
      keeper: tlog,
      principalId: config.principalId,
      treeHeadIntervalMs: config.tlog.treeHeadIntervalMs,
      logger,
      onSequenced: options.onSequenced,
    });
    const running = tlogProcess;
    runtime.readiness
      .add('consumers_bound', runtime.bus.boundCheck(1))
      .add('tlog_sequencing', () => running.healthy)
      // A detail, never a failure: a forged receipt.issued must not take the service out of rotation.
      .add('tlog_receipts_refused', () => ({ ok: true, value: tlog.refusals }));
    await tlogProcess.start();
    const service = await startServiceApp({
      serviceName: SERVICE_NAME,
      runtime,
      module: ReceiptModule.forRoot({
        subjects,
        commandsStream: config.streams.commands,
        concurrency: config.concurrency,
        runtime,
        issueReceipt: new IssueReceiptHandler({
          log: new EventStoreTaskLog(runtime.store),
          signer: () => new KeyReceiptSigner(keys.active),
          clock,
          principalId: config.principalId,
          authority: new ResolutionAuthority(principals, await resolutionRegistrationOptions(runtime.store, config.trustAnchorFile, logger)),
        }),
        rotateKey: new RotateKeyHandler({
          principals,
          clock,
          freshnessSeconds: config.keys.freshnessSeconds,
          service: SERVICE_NAME,
          keys: { principalId: keys.principalId, rotate: (input) => keys.rotate({ ...input, validForSeconds: config.keys.retireAfterSeconds }) },
        }),
        tlog,
        tlogProcess,
        logger,
      }),
      http: config.http,
      logger,
      bus: { pullExpiresMs: options.pullExpiresMs },
    });
    // The retirement schedule is the keyring on disk: checked now (a restart catches up) and then on an interval.
    keys.startRetirementChecks(config.keys.checkIntervalMs);
    logger.info(
      { url: service.url, subjects: { issue: subjects.issue, tree_head: subjects.treeHead, rotate_key: subjects.rotateKey }, log_id: tlog.logId, kid: keys.active.kid, concurrency: config.concurrency },
      'receipt service listening',
    );
    return {
      app: service.app,
      url: service.url,
      subjects,
      principalId: config.principalId,
      kid: startKid,
      activeKid: () => keys.active.kid,
      tlog,
      close: service.close,
    };
  } catch (error) {
    await tlogProcess?.stop();
    await runtime.close();
    throw error;
  }
}
