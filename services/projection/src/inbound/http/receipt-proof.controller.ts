import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import type { HttpReadScope, InclusionProofReply } from '@writ/contracts';
import { ReadService } from '../../application/read-service.js';
import { ReceiptProofs } from '../../application/receipt-proofs.js';
import { ReadScope } from './read-scope.js';

/**
 * The receipt's inclusion proof for verifiers without a bus connection (the
 * console in a browser). Read like the receipt itself: another principal's
 * receipt, or an unknown id, answers 404 PROJECTION_NOT_FOUND before the
 * receipt service is asked anything.
 */
@Controller('v1/receipts')
export class ReceiptProofController {
  constructor(
    @Inject(ReadService) private readonly reads: ReadService,
    @Inject(ReceiptProofs) private readonly proofs: ReceiptProofs,
  ) {}

  /** `?tree_size=` proves against the head of that size (default the latest signed head, which the answer carries). */
  @Get(':id/inclusion-proof')
  async inclusionProof(@Param('id') id: string, @Query('tree_size') treeSize: unknown, @ReadScope() scope: HttpReadScope): Promise<InclusionProofReply> {
    const receipt = await this.reads.receipt(id, scope);
    return this.proofs.inclusionProof(receipt.receipt_id, treeSize);
  }
}
