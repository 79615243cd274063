import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ReadService } from '../../application/read-service.js';
import type { ReceiptRow } from '../../application/views/index.js';

@Controller('v1/receipts')
export class ReceiptsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** The receipt as signed and its compact JWS: verify it offline against `GET /v1/keys`. */
  @Get(':id')
  receipt(@Param('id') id: string): Promise<ReceiptRow> {
    return this.reads.receipt(id);
  }
}
