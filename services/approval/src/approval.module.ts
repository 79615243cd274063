import { Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from '@writ/telemetry';
import { CancelApprovalHandler } from './application/cancel-approval.handler.js';
import { IssueGrantHandler } from './application/issue-grant.handler.js';
import { RequestApprovalHandler } from './application/request-approval.handler.js';
import { ResolveApprovalHandler } from './application/resolve-approval.handler.js';
import { RevokeGrantHandler } from './application/revoke-grant.handler.js';
import { RotateKeyHandler } from './application/rotate-key.handler.js';
import type { JwksSource } from './application/ports.js';
import type { ApprovalSubjects } from './config.js';
import { APPROVAL_LOGGER, approvalCommandsListener } from './inbound/approval-commands.listener.js';
import { ExpiryTimer } from './inbound/approval-expiry.timer.js';
import { HealthController, READINESS, type ReadinessProbe } from './inbound/health.controller.js';
import { JWKS_SOURCE, JwksController } from './inbound/jwks.controller.js';
import { ServiceRuntime } from './outbound/service-runtime.js';

export interface ApprovalModuleDeps {
  readonly subjects: ApprovalSubjects;
  readonly commandsStream: string;
  readonly runtime: ServiceRuntime;
  readonly handlers: {
    readonly request: RequestApprovalHandler;
    readonly resolve: ResolveApprovalHandler;
    readonly issueGrant: IssueGrantHandler;
    readonly cancel: CancelApprovalHandler;
    readonly revokeGrant: RevokeGrantHandler;
    readonly rotateKey: RotateKeyHandler;
  };
  /** The service's unretired public keys (`/.well-known/jwks.json`). */
  readonly jwks: JwksSource;
  /** The durable expiry timer (`<root>.cmd.approval.expire`). */
  readonly expiryTimer: ExpiryTimer;
  readonly readiness: ReadinessProbe;
  readonly logger: Logger;
}

/** Composition root: the handlers (built on the outbound adapters) bound to the bus listeners and the health endpoints. */
@Module({})
export class ApprovalModule {
  static forRoot(deps: ApprovalModuleDeps): DynamicModule {
    return {
      module: ApprovalModule,
      controllers: [HealthController, JwksController, approvalCommandsListener(deps.subjects, deps.commandsStream)],
      providers: [
        { provide: RequestApprovalHandler, useValue: deps.handlers.request },
        { provide: ResolveApprovalHandler, useValue: deps.handlers.resolve },
        { provide: IssueGrantHandler, useValue: deps.handlers.issueGrant },
        { provide: CancelApprovalHandler, useValue: deps.handlers.cancel },
        // Started at bootstrap, stopped before the bus drains (beforeApplicationShutdown).
        { provide: ExpiryTimer, useValue: deps.expiryTimer },
        { provide: RevokeGrantHandler, useValue: deps.handlers.revokeGrant },
        { provide: RotateKeyHandler, useValue: deps.handlers.rotateKey },
        { provide: JWKS_SOURCE, useValue: deps.jwks },
        { provide: READINESS, useValue: deps.readiness },
        { provide: APPROVAL_LOGGER, useValue: deps.logger },
        // Closed by Nest after the bus drained (onApplicationShutdown).
        { provide: ServiceRuntime, useValue: deps.runtime },
      ],
    };
  }
}
