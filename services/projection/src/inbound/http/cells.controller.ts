import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ReadService } from '../../application/read-service.js';
import type { CellRow } from '../../application/views/index.js';
import type { HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';

@Controller('v1/cells')
export class CellsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** Cells: `?status=ACTIVE|…&limit=`, most recently changed first. */
  @Get()
  list(@Query('status') status: unknown, @Query('limit') limit: unknown, @ReadScope() scope: HttpReadScope): Promise<{ readonly cells: readonly CellRow[] }> {
    return this.reads.cells({ status, limit }, scope);
  }

  /** One cell (a task's execution cell is `task-<task_id>`). */
  @Get(':id')
  cell(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<CellRow> {
    return this.reads.cell(id, scope);
  }
}
