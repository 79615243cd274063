import { Controller, Get, Inject, Param, Query, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { ContextPackReads } from '../../application/context-packs.js';
import { ReadService, type StepView } from '../../application/read-service.js';
import type { AttemptRow, StepRow } from '../../application/views/index.js';
import type { HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';

@Controller('v1')
export class StepsController {
  constructor(
    @Inject(ReadService) private readonly reads: ReadService,
    @Inject(ContextPackReads) private readonly packs: ContextPackReads,
  ) {}

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

  /**
   * The context pack the attempt was proposed under (Hermit 15.6), as stored: its canonical
   * bytes verbatim (so a client can hash the body), `Writ-Content-Sha256` the hash they were
   * verified against. An agent reads its own attempts' packs only.
   */
  @Get('attempts/:id/context')
  async context(@Param('id') id: string, @ReadScope() scope: HttpReadScope, @Res() res: ServerResponse): Promise<void> {
    const served = await this.packs.attemptContext(id, scope);
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Writ-Content-Sha256', served.sha256);
    res.setHeader('Cache-Control', 'private, no-store');
    res.end(Buffer.from(served.bytes));
  }
}
