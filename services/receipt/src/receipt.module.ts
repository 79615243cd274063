import { Module, type DynamicModule } from '@nestjs/common';
import type { ServiceRuntime } from '@writ/runtime';
import { HealthController, runtimeProviders } from '@writ/runtime/nest';
import type { Logger } from '@writ/telemetry';
import { IssueReceiptHandler } from './application/issue-receipt.handler.js';
import { RotateKeyHandler } from './application/rotate-key.handler.js';
import { TlogKeeper } from './application/tlog-keeper.js';
import type { ReceiptSubjects } from './config.js';
import { keyRotationListener } from './inbound/key-rotation.listener.js';
import { RECEIPT_LOGGER, receiptCommandsListener } from './inbound/receipt-commands.listener.js';
import { tlogQueriesListener } from './inbound/tlog-queries.listener.js';
import { TransparencyLogProcess } from './inbound/transparency-log.process.js';

export interface ReceiptModuleDeps {
  readonly subjects: ReceiptSubjects;
  readonly commandsStream: string;
  /** `WRIT_RECEIPT_CONCURRENCY`: issue commands handled at once (one task's one at a time). */
  readonly concurrency: number;
  /** NATS, the log and readiness; drained by Nest at shutdown, after the bus drained. */
  readonly runtime: ServiceRuntime;
  readonly issueReceipt: IssueReceiptHandler;
  readonly rotateKey: RotateKeyHandler;
  /** The transparency log: the queries ask it; its process is stopped before the bus drains. */
  readonly tlog: TlogKeeper;
  readonly tlogProcess: TransparencyLogProcess;
  readonly logger: Logger;
}

/** Composition root: the handlers (built on the outbound adapters) bound to the bus listener, the key rotation, the transparency log's queries and the health endpoints. */
@Module({})
export class ReceiptModule {
  static forRoot(deps: ReceiptModuleDeps): DynamicModule {
    return {
      module: ReceiptModule,
      controllers: [
        HealthController,
        receiptCommandsListener(deps.subjects, deps.commandsStream, deps.concurrency),
        keyRotationListener(deps.subjects.rotateKey),
        tlogQueriesListener(deps.subjects),
      ],
      providers: [
        ...runtimeProviders(deps.runtime),
        { provide: IssueReceiptHandler, useValue: deps.issueReceipt },
        { provide: RotateKeyHandler, useValue: deps.rotateKey },
        { provide: TlogKeeper, useValue: deps.tlog },
        { provide: TransparencyLogProcess, useValue: deps.tlogProcess },
        { provide: RECEIPT_LOGGER, useValue: deps.logger },
      ],
    };
  }
}
