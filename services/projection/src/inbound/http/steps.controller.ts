import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ReadService, type StepView } from '../../application/read-service.js';
import type { AttemptRow, StepRow } from '../../application/views/index.js';
import type { HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';

@Controller('v1')
export class StepsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** The step queue: `?status=ready|running|blocked|…&task_id=&limit=`, oldest planned first. */
  @Get('steps')
  list(@Query('status') status: unknown, @Query('task_id') taskId: unknown, @Query('limit') limit: unknown, @ReadScope() scope: HttpReadScope): Promise<{ readonly steps: readonly StepRow[] }> {
    return this.reads.steps({ status, task_id: taskId, limit }, scope);
  }

  /** One step with its attempts. */
  @Get('steps/:id')
  step(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<StepView> {
    return this.reads.step(id, scope);
  }

  /** One attempt: status and the ids of what decided, authorized, ran and receipted it. */
  @Get('attempts/:id')
  attempt(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<AttemptRow> {
    return this.reads.attempt(id, scope);
  }
}
