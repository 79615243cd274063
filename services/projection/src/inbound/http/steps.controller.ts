import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ReadService, type StepView } from '../../application/read-service.js';
import type { AttemptRow, StepRow } from '../../application/views/index.js';

@Controller('v1')
export class StepsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** The step queue: `?status=ready|running|blocked|…&task_id=&limit=`, oldest planned first. */
  @Get('steps')
  list(@Query('status') status: unknown, @Query('task_id') taskId: unknown, @Query('limit') limit: unknown): Promise<{ readonly steps: readonly StepRow[] }> {
    return this.reads.steps({ status, task_id: taskId, limit });
  }

  /** One step with its attempts. */
  @Get('steps/:id')
  step(@Param('id') id: string): Promise<StepView> {
    return this.reads.step(id);
  }

  /** One attempt: status and the ids of what decided, authorized, ran and receipted it. */
  @Get('attempts/:id')
  attempt(@Param('id') id: string): Promise<AttemptRow> {
    return this.reads.attempt(id);
  }
}
