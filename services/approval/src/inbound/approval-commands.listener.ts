import { Controller, Inject, type Type } from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { busOptions, type JetStreamContext } from '@writ/bus';
import { IssueGrant, RequestApproval, hasErrorCode, parseContract } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { ApprovalServiceError, TERMINAL_CODES } from '../application/approval-errors.js';
import { IssueGrantHandler } from '../application/issue-grant.handler.js';
import { RequestApprovalHandler } from '../application/request-approval.handler.js';
import { ResolveApprovalRequest, type ResolveApprovalReply } from '../application/resolve-approval.contract.js';
import { ResolveApprovalHandler } from '../application/resolve-approval.handler.js';
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
    constructor(
      @Inject(RequestApprovalHandler) private readonly requests: RequestApprovalHandler,
      @Inject(ResolveApprovalHandler) private readonly resolutions: ResolveApprovalHandler,
      @Inject(IssueGrantHandler) private readonly grants: IssueGrantHandler,
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
      const reply = await this.resolutions.resolve(request);
      this.log.info({ task_id: reply.task_id, approval_id: reply.approval_id, status: reply.status, resolved_by: reply.resolved_by }, 'approval resolved');
      return reply;
    }

    @EventPattern<string>(subjects.issueGrant, consumer('issue-grant'))
    async issueGrant(@Payload() body: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
      const command = parseContract('IssueGrant', IssueGrant, body);
      const outcome = await this.grants.handle(command, originOf(ctx)).catch(typed);
      this.log.info({ task_id: command.task_id, attempt_id: command.attempt_id, outcome }, 'grant command handled');
    }
  }
  return ApprovalCommandsListener;
}
