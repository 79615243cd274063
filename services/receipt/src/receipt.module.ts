import { Module, type DynamicModule } from '@nestjs/common';
import type { ServiceRuntime } from '@writ/runtime';
import { HealthController, runtimeProviders } from '@writ/runtime/nest';
import type { Logger } from '@writ/telemetry';
import { IssueReceiptHandler } from './application/issue-receipt.handler.js';
import type { ReceiptSubjects } from './config.js';
import { RECEIPT_LOGGER, receiptCommandsListener } from './inbound/receipt-commands.listener.js';

export interface ReceiptModuleDeps {
  readonly subjects: ReceiptSubjects;
  readonly commandsStream: string;
  /** NATS, the log and readiness; drained by Nest at shutdown, after the bus drained. */
  readonly runtime: ServiceRuntime;
  readonly issueReceipt: IssueReceiptHandler;
  readonly logger: Logger;
}

/** Composition root: the handler (built on the outbound adapters) bound to the bus listener and the health endpoints. */
@Module({})
export class ReceiptModule {
  static forRoot(deps: ReceiptModuleDeps): DynamicModule {
    return {
      module: ReceiptModule,
      controllers: [HealthController, receiptCommandsListener(deps.subjects, deps.commandsStream)],
      providers: [
        ...runtimeProviders(deps.runtime),
        { provide: IssueReceiptHandler, useValue: deps.issueReceipt },
        { provide: RECEIPT_LOGGER, useValue: deps.logger },
      ],
    };
  }
}
