import { Controller, Get, Inject, Query } from '@nestjs/common';
import type { ProjectionStatus } from '@writ/contracts';
import { ProjectionError } from '../../application/projection-errors.js';
import { ProjectionStatusReader } from '../../application/projection-status.js';
import type { HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';
import { requireAll } from '../../application/read-service.js';

@Controller('v1/projections')
export class ProjectionsController {
  constructor(@Inject(ProjectionStatusReader) private readonly statusReader: ProjectionStatusReader) {}

  /** Lag (events and ms), rows per view, `?checksums=true` for each view's checksum (reads every row), and the last rebuild job. */
  @Get('status')
  status(@Query('checksums') checksums: unknown, @ReadScope() scope: HttpReadScope): Promise<ProjectionStatus> {
    requireAll(scope, "the projection's status", 'ask an operator');
    if (checksums !== undefined && checksums !== 'true' && checksums !== 'false') {
      throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'checksums must be true or false', { details: { parameter: 'checksums' } });
    }
    return this.statusReader.status({ checksums: checksums === 'true' });
  }
}
