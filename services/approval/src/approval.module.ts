import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '@writ/telemetry';
import { IssueGrantHandler } from './application/issue-grant.handler.js';
import { RequestApprovalHandler } from './application/request-approval.handler.js';
import { ResolveApprovalHandler } from './application/resolve-approval.handler.js';
import type { ApprovalSubjects } from './config.js';
import { APPROVAL_LOGGER, approvalCommandsListener } from './inbound/approval-commands.listener.js';
import { HealthController, READINESS, type ReadinessProbe } from './inbound/health.controller.js';
import { ServiceRuntime } from './outbound/service-runtime.js';

export interface ApprovalModuleDeps {
  readonly subjects: ApprovalSubjects;
  readonly commandsStream: string;
  readonly runtime: ServiceRuntime;
  readonly handlers: {
    readonly request: RequestApprovalHandler;
    readonly resolve: ResolveApprovalHandler;
    readonly issueGrant: IssueGrantHandler;
  };
  readonly readiness: ReadinessProbe;
  readonly logger: Logger;
}

/** Composition root: the handlers (built on the outbound adapters) bound to the bus listeners and the health endpoints. */
@Module({})
export class ApprovalModule {
  static forRoot(deps: ApprovalModuleDeps): DynamicModule {
    return {
      module: ApprovalModule,
      controllers: [HealthController, approvalCommandsListener(deps.subjects, deps.commandsStream)],
      providers: [
        { provide: RequestApprovalHandler, useValue: deps.handlers.request },
        { provide: ResolveApprovalHandler, useValue: deps.handlers.resolve },
        { provide: IssueGrantHandler, useValue: deps.handlers.issueGrant },
        { provide: READINESS, useValue: deps.readiness },
        { provide: APPROVAL_LOGGER, useValue: deps.logger },
        // Closed by Nest after the bus drained (onApplicationShutdown).
        { provide: ServiceRuntime, useValue: deps.runtime },
      ],
    };
  }
}
