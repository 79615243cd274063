import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ReadService } from '../../application/read-service.js';
import type { PrincipalRow } from '../../application/views/index.js';
import type { HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';

@Controller('v1/principals')
export class PrincipalsController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** A principal with its roles and public keys (never a private part). Ingress and approval authorize against the log, not this. */
  @Get(':id')
  principal(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<PrincipalRow> {
    return this.reads.principal(id, scope);
  }
}
