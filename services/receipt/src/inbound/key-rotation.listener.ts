import { Controller, Inject, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { RotateKey, parseContract, type RotateKeyReply } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { RotateKeyHandler } from '../application/rotate-key.handler.js';
import { RECEIPT_LOGGER } from './receipt-commands.listener.js';

/**
 * `<root>.qry.receipt.rotate-key` (request/reply over core NATS, queue group
 * `receipt`: one replica answers; replicas sharing the key directory take the
 * rotation up at their next check). Parse with the contract (CONTRACT_INVALID
 * is replied), rotate, reply; refusals reply `{ code, message }` with header
 * Writ-Error-Code.
 */
export function keyRotationListener(subject: string): Type {
  @Controller()
  class KeyRotationListener {
    constructor(
      @Inject(RotateKeyHandler) private readonly rotations: RotateKeyHandler,
      @Inject(RECEIPT_LOGGER) private readonly log: Logger,
    ) {}

    @MessagePattern<string>(subject)
    async rotateKey(@Payload() body: unknown): Promise<RotateKeyReply> {
      const request = parseContract('RotateKey', RotateKey, body);
      const reply = await this.rotations.rotate(request);
      this.log.info({ principal_id: reply.principal_id, kid: reply.kid, previous_kid: reply.previous_kid, retire_after: reply.retire_after, status: reply.status }, 'signing key rotation handled');
      return reply;
    }
  }
  return KeyRotationListener;
}
