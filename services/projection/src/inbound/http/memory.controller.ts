import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import type { HttpReadScope, MemoryList } from '@writ/contracts';
import type { MemoryRow } from '@writ/contracts/projection-rows';
import { ReadService } from '../../application/read-service.js';
import { ReadScope } from './read-scope.js';

/** Durable memory (issue 17): read only; a record is promoted or invalidated by a memory_write action, never here. */
@Controller('v1/memory')
export class MemoryController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** Memory records, newest first: `?status=&scope=&task_id=&limit=` (an agent: the ones it promoted). */
  @Get()
  list(@Query() query: unknown, @ReadScope() scope: HttpReadScope): Promise<MemoryList> {
    return this.reads.memoryRecords(query, scope);
  }

  /** One record with its status, trust tier, evidence, promotion reason and policy / approval / receipt refs. */
  @Get(':id')
  record(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<MemoryRow> {
    return this.reads.memoryRecord(id, scope);
  }
}
