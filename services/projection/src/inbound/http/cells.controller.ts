import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ReadService } from '../../application/read-service.js';
import type { CellRow } from '../../application/views/index.js';

@Controller('v1/cells')
export class CellsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** Cells: `?status=ACTIVE|…&limit=`, most recently changed first. */
  @Get()
  list(@Query('status') status: unknown, @Query('limit') limit: unknown): Promise<{ readonly cells: readonly CellRow[] }> {
    return this.reads.cells({ status, limit });
  }

  /** One cell (a task's execution cell is `task-<task_id>`). */
  @Get(':id')
  cell(@Param('id') id: string): Promise<CellRow> {
    return this.reads.cell(id);
  }
}
