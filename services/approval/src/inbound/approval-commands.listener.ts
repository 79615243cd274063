import { Controller, Inject, type Type } from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { busOptions, type JetStreamContext } from '@writ/bus';
import { CancelApproval, IssueGrant, RequestApproval, RevokeGrant, RotateKey, hasErrorCode, parseContract, type RevokeGrantReply, type RotateKeyReply } from '@writ/contracts';
import { METRICS, writMetrics, type Logger } from '@writ/telemetry';
import { ApprovalServiceError, TERMINAL_CODES } from '../application/approval-errors.js';
import { CancelApprovalHandler } from '../application/cancel-approval.handler.js';
import { IssueGrantHandler } from '../application/issue-grant.handler.js';
import { RequestApprovalHandler } from '../application/request-approval.handler.js';
import { ResolveApprovalRequest, type ResolveApprovalReply } from '../application/resolve-approval.contract.js';
import { ResolveApprovalHandler } from '../application/resolve-approval.handler.js';
import { RevokeGrantHandler } from '../application/revoke-grant.handler.js';
import { RotateKeyHandler } from '../application/rotate-key.handler.js';
import type { CommandOrigin } from '../application/ports.js';
import type { ApprovalSubjects } from '../config.js';

export const APPROVAL_LOGGER = Symbol('approval.logger');

/** Codes that can never succeed on redelivery: dead-lettered at once with the reason. */
const ERROR_ACTIONS = Object.fromEntries(TERMINAL_CODES.map((code) => [code, 'dead-letter' as const]));

/** The message's idempotency key, else its stream position: stable across redeliveries. */
function originOf(ctx: JetStreamContext): CommandOrigin {
  return { commandId: ctx.idempotencyKey ?? `${ctx.stream}-${ctx.streamSequence}` };
}

/** Anything without a Writ code is a bug or an outage: typed before it reaches the bus (retried with backoff). */
function typed(error: unknown): never {
  if (hasErrorCode(error)) throw error;
  throw new ApprovalServiceError('APPROVAL_UNAVAILABLE', 'the command could not be handled now', { cause: error });
}

/**
 * The service's bus listeners. Made per subject set (subjects derive from the
 * configured root, and decorators need them at class definition): parse with
 * the contract (CONTRACT_INVALID → dead letter) → application handler → ack.
 */
export function approvalCommandsListener(subjects: ApprovalSubjects, commandsStream: string): Type {
  const consumer = (verb: string) => busOptions({ stream: commandsStream, deadLetterSubject: subjects.deadLetter(verb), errorActions: ERROR_ACTIONS });

  @Controller()
  class ApprovalCommandsListener {
    readonly #metrics = writMetrics();
    readonly #resolved = this.#metrics.counter(METRICS.approvalsResolved, { initial: [{ status: 'granted' }, { status: 'denied' }] });
    readonly #issued = this.#metrics.counter(METRICS.grantsIssued);
    readonly #revoked = this.#metrics.counter(METRICS.grantsRevoked, { initial: [{}] });

    constructor(
      @Inject(RequestApprovalHandler) private readonly requests: RequestApprovalHandler,
      @Inject(ResolveApprovalHandler) private readonly resolutions: ResolveApprovalHandler,
      @Inject(IssueGrantHandler) private readonly grants: IssueGrantHandler,
      @Inject(CancelApprovalHandler) private readonly cancellations: CancelApprovalHandler,
      @Inject(RevokeGrantHandler) private readonly revocations: RevokeGrantHandler,
      @Inject(RotateKeyHandler) private readonly rotations: RotateKeyHandler,
      @Inject(APPROVAL_LOGGER) private readonly log: Logger,
    ) {}

    @EventPattern<string>(subjects.request, consumer('request'))
    async request(@Payload() body: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
      const command = parseContract('RequestApproval', RequestApproval, body);
      const outcome = await this.requests.handle(command, originOf(ctx)).catch(typed);
      this.log.info({ task_id: command.task_id, attempt_id: command.attempt_id, approval_id: command.approval_id, outcome }, 'approval request handled');
    }

    @MessagePattern<string>(subjects.resolve)
    async resolve(@Payload() body: unknown): Promise<ResolveApprovalReply> {
      const request = parseContract('ResolveApproval', ResolveApprovalRequest, body);
      const reply = await this.resolutions.resolve(request, {
        recorded: ({ status }) => {
          if (status === 'granted' || status === 'denied') this.#resolved.add(1, { status });
        },
      });
      this.log.info({ task_id: reply.task_id, approval_id: reply.approval_id, status: reply.status, resolved_by: reply.resolved_by }, 'approval resolved');
      return reply;
    }

    @MessagePattern<string>(subjects.revokeGrant)
    async revokeGrant(@Payload() body: unknown): Promise<RevokeGrantReply> {
      const request = parseContract('RevokeGrant', RevokeGrant, body);
      const reply = await this.revocations.revoke(request);
      if (reply.status === 'revoked') this.#revoked.add(1, {});
      this.log.info({ task_id: reply.task_id, grant_id: reply.grant_id, status: reply.status, revoked_by: reply.revoked_by }, 'grant revocation handled');
      return reply;
    }

    @MessagePattern<string>(subjects.rotateKey)
    async rotateKey(@Payload() body: unknown): Promise<RotateKeyReply> {
      const request = parseContract('RotateKey', RotateKey, body);
      const reply = await this.rotations.rotate(request);
      this.log.info({ principal_id: reply.principal_id, kid: reply.kid, previous_kid: reply.previous_kid, retire_after: reply.retire_after, status: reply.status }, 'signing key rotation handled');
      return reply;
    }

    @EventPattern<string>(subjects.cancel, consumer('cancel'))
    async cancel(@Payload() body: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
      const command = parseContract('CancelApproval', CancelApproval, body);
      const outcome = await this.cancellations.handle(command, originOf(ctx)).catch(typed);
      this.log.info({ task_id: command.task_id, approval_id: command.approval_id, cause: command.cause, outcome }, 'approval cancellation handled');
    }

    @EventPattern<string>(subjects.issueGrant, consumer('issue-grant'))
    async issueGrant(@Payload() body: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
      const command = parseContract('IssueGrant', IssueGrant, body);
      const outcome = await this.grants.handle(command, originOf(ctx)).catch(typed);
      // Counted when minted now: a redelivery that finds the grant issued is not a second grant.
      if (outcome === 'issued') this.#issued.add(1, { action_class: command.action_request.action_class });
      this.log.debug({ task_id: command.task_id, attempt_id: command.attempt_id, outcome }, 'grant command handled');
    }
  }
  return ApprovalCommandsListener;
}
