import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ReadService } from '../../application/read-service.js';
import type { ArtifactRow } from '../../application/views/index.js';

@Controller('v1/artifacts')
export class ArtifactsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** The artifact catalog: `?task_id=&kind=&limit=`, in task order. The content is in the artifact store, by `sha256`. */
  @Get()
  list(@Query('task_id') taskId: unknown, @Query('kind') kind: unknown, @Query('limit') limit: unknown): Promise<{ readonly artifacts: readonly ArtifactRow[] }> {
    return this.reads.artifacts({ task_id: taskId, kind, limit });
  }

  @Get(':id')
  artifact(@Param('id') id: string): Promise<ArtifactRow> {
    return this.reads.artifact(id);
  }
}
