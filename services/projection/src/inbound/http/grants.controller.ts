import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ReadService } from '../../application/read-service.js';
import type { GrantRow } from '../../application/views/index.js';

@Controller('v1/grants')
export class GrantsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** The grant as projected (never its JWS); read-only: the executor checks a grant against the log itself. */
  @Get(':id')
  grant(@Param('id') id: string): Promise<GrantRow> {
    return this.reads.grant(id);
  }
}
