import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ReadService } from '../../application/read-service.js';
import type { GrantRow } from '../../application/views/index.js';
import type { HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';

@Controller('v1/grants')
export class GrantsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** The active grant view: `?status=active|exhausted|revoked&task_id=&limit=`, newest issue first (never a JWS). */
  @Get()
  list(@Query('status') status: unknown, @Query('task_id') taskId: unknown, @Query('limit') limit: unknown, @ReadScope() scope: HttpReadScope): Promise<{ readonly grants: readonly GrantRow[] }> {
    return this.reads.grants({ status, task_id: taskId, limit }, scope);
  }

  /** The grant as projected (never its JWS); read-only: the executor checks a grant against the log itself. */
  @Get(':id')
  grant(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<GrantRow> {
    return this.reads.grant(id, scope);
  }
}
