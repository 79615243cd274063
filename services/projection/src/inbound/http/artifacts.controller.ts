import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ReadService } from '../../application/read-service.js';
import type { ArtifactRow } from '../../application/views/index.js';
import type { HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';

@Controller('v1/artifacts')
export class ArtifactsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** The artifact catalog: `?task_id=&kind=&limit=`, in task order. The content is in the artifact store, by `sha256`. */
  @Get()
  list(@Query('task_id') taskId: unknown, @Query('kind') kind: unknown, @Query('limit') limit: unknown, @ReadScope() scope: HttpReadScope): Promise<{ readonly artifacts: readonly ArtifactRow[] }> {
    return this.reads.artifacts({ task_id: taskId, kind, limit }, scope);
  }

  @Get(':id')
  artifact(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<ArtifactRow> {
    return this.reads.artifact(id, scope);
  }
}
