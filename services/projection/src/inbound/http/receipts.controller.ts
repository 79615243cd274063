import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ReadService } from '../../application/read-service.js';
import type { ReceiptRow } from '../../application/views/index.js';
import type { HttpReadScope, ReceiptPage } from '@writ/contracts';
import { ReadScope } from './read-scope.js';

@Controller('v1/receipts')
export class ReceiptsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** Receipts, newest first: `?task_id=&principal_id=&action_request_id=&result_code=&receipt_class=&since=&until=&limit=&cursor=` (an agent: its tasks'). */
  @Get()
  list(@Query() query: unknown, @ReadScope() scope: HttpReadScope): Promise<ReceiptPage> {
    return this.reads.receipts(query, scope);
  }

  /** The receipt as signed and its compact JWS: verify it offline against `GET /v1/keys`. */
  @Get(':id')
  receipt(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<ReceiptRow> {
    return this.reads.receipt(id, scope);
  }
}
