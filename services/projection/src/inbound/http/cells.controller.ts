import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ReadService } from '../../application/read-service.js';
import type { CellRow } from '../../application/views/index.js';
import type { CellPage, HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';

@Controller('v1/cells')
export class CellsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** Cells, newest first: `?status=ACTIVE|…&task_id=&principal_id=&director_id=&since=&until=&limit=&cursor=` (an agent: its tasks'). */
  @Get()
  list(@Query() query: unknown, @ReadScope() scope: HttpReadScope): Promise<CellPage> {
    return this.reads.cells(query, scope);
  }

  /** One cell (a task's execution cell is `task-<task_id>`). */
  @Get(':id')
  cell(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<CellRow> {
    return this.reads.cell(id, scope);
  }
}
