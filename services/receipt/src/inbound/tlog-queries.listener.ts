import { Controller, Inject, UseFilters, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { BusExceptionFilter } from '@writ/bus';
import {
  GetConsistencyProof,
  GetInclusionProof,
  GetTreeHead,
  hasErrorCode,
  parseContract,
  type ConsistencyProofReply,
  type InclusionProofReply,
  type SignedTreeHead,
} from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { TlogError } from '../application/tlog-errors.js';
import { TlogKeeper } from '../application/tlog-keeper.js';
import { RECEIPT_LOGGER } from './receipt-commands.listener.js';

export interface TlogQuerySubjects {
  readonly treeHead: string;
  readonly inclusionProof: string;
  readonly consistencyProof: string;
}

/** Anything without a Writ code is an outage or a bug: replied as TLOG_UNAVAILABLE, logged with its cause. */
function typed(logger: Logger, what: string) {
  return (error: unknown): never => {
    if (hasErrorCode(error)) throw error;
    logger.error({ err: error }, `${what} failed`);
    throw new TlogError('TLOG_UNAVAILABLE', `the transparency log could not answer (${what}) now; ask again`, { cause: error });
  };
}

/**
 * `<root>.qry.receipt.tree-head | inclusion-proof | consistency-proof`
 * (request/reply over core NATS, queue group `receipt`): parse with the
 * contract (CONTRACT_INVALID is replied), ask the keeper, reply the
 * contract-checked answer. Refusals reply `{ code, message }` with header
 * Writ-Error-Code: RECEIPT_NOT_IN_LOG, TLOG_TREE_SIZE_INVALID,
 * TLOG_TREE_HEAD_NOT_FOUND, TLOG_UNAVAILABLE.
 */
export function tlogQueriesListener(subjects: TlogQuerySubjects): Type {
  @Controller()
  @UseFilters(new BusExceptionFilter())
  class TlogQueriesListener {
    constructor(
      @Inject(TlogKeeper) private readonly keeper: TlogKeeper,
      @Inject(RECEIPT_LOGGER) private readonly logger: Logger,
    ) {}

    @MessagePattern<string>(subjects.treeHead)
    async treeHead(@Payload() payload: unknown): Promise<SignedTreeHead> {
      parseContract('GetTreeHead', GetTreeHead, payload ?? {});
      return this.keeper.treeHead().catch(typed(this.logger, 'tree-head'));
    }

    @MessagePattern<string>(subjects.inclusionProof)
    async inclusionProof(@Payload() payload: unknown): Promise<InclusionProofReply> {
      const query = parseContract('GetInclusionProof', GetInclusionProof, payload);
      return this.keeper.inclusionProof(query).catch(typed(this.logger, 'inclusion-proof'));
    }

    @MessagePattern<string>(subjects.consistencyProof)
    async consistencyProof(@Payload() payload: unknown): Promise<ConsistencyProofReply> {
      const query = parseContract('GetConsistencyProof', GetConsistencyProof, payload);
      return this.keeper.consistencyProof(query).catch(typed(this.logger, 'consistency-proof'));
    }
  }
  return TlogQueriesListener;
}
