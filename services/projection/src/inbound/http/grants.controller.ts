import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { PublicRoute } from '@writ/runtime/nest';
import { Forwarding } from '../../application/forwarding.js';
import type { JsonObject } from '../../application/projected-event.js';
import { ReadService } from '../../application/read-service.js';
import type { GrantRow } from '../../application/views/index.js';
import type { HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';

@Controller('v1/grants')
export class GrantsController {
  constructor(
    @Inject(ReadService) private readonly reads: ReadService,
    @Inject(Forwarding) private readonly forwarding: Forwarding,
  ) {}

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

  /**
   * `{ task_id, revocation_jws }`, forwarded to the approval service, which
   * checks the signature and that the signer is a director who did not propose
   * the action (`writ grant revoke` sends the same over NATS). Public: the
   * signed revocation is the credential.
   */
  @PublicRoute()
  @Post(':id/revoke')
  @HttpCode(200)
  revoke(@Param('id') id: string, @Body() body: unknown): Promise<JsonObject> {
    return this.forwarding.revokeGrant({ grantId: id, body });
  }
}
