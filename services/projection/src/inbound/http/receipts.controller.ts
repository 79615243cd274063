import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ReadService } from '../../application/read-service.js';
import type { ReceiptRow } from '../../application/views/index.js';
import type { HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';

@Controller('v1/receipts')
export class ReceiptsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** The receipt as signed and its compact JWS: verify it offline against `GET /v1/keys`. */
  @Get(':id')
  receipt(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<ReceiptRow> {
    return this.reads.receipt(id, scope);
  }
}
