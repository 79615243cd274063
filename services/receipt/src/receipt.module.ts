import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '@writ/telemetry';
import { IssueReceiptHandler } from './application/issue-receipt.handler.js';
import type { ReceiptSubjects } from './config.js';
import { HealthController, READINESS, type ReadinessProbe } from './inbound/health.controller.js';
import { RECEIPT_LOGGER, receiptCommandsListener } from './inbound/receipt-commands.listener.js';
import { ServiceRuntime } from './outbound/service-runtime.js';

export interface ReceiptModuleDeps {
  readonly subjects: ReceiptSubjects;
  readonly commandsStream: string;
  readonly runtime: ServiceRuntime;
  readonly issueReceipt: IssueReceiptHandler;
  readonly readiness: ReadinessProbe;
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
        { provide: IssueReceiptHandler, useValue: deps.issueReceipt },
        { provide: READINESS, useValue: deps.readiness },
        { provide: RECEIPT_LOGGER, useValue: deps.logger },
        // Closed by Nest after the bus drained (onApplicationShutdown).
        { provide: ServiceRuntime, useValue: deps.runtime },
      ],
    };
  }
}
