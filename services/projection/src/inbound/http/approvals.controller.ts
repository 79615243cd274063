import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import type { ApprovalDetail } from '../../application/approval-detail.js';
import { Forwarding } from '../../application/forwarding.js';
import type { JsonObject } from '../../application/projected-event.js';
import { ReadService } from '../../application/read-service.js';
import type { ApprovalRow } from '../../application/views/index.js';
import type { HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';
import { PublicRoute } from '@writ/runtime/nest';

@Controller('v1/approvals')
export class ApprovalsController {
  constructor(
    @Inject(ReadService) private readonly reads: ReadService,
    @Inject(Forwarding) private readonly forwarding: Forwarding,
  ) {}

  /** The approval inbox: `?status=pending` (any approval status), oldest request first. */
  @Get()
  list(@Query('status') status: unknown, @Query('limit') limit: unknown, @ReadScope() scope: HttpReadScope): Promise<{ readonly approvals: readonly ApprovalRow[] }> {
    return this.reads.approvals({ status, limit }, scope);
  }

  /** One approval: status, packet (and its artifact ref), state witness, expiry, resolution with resolver and cause, decisions. */
  @Get(':id')
  show(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<ApprovalDetail> {
    return this.reads.approval(id, scope);
  }

  /** `{ task_id, resolution_jws }`, forwarded to the approval service, which checks the signature and the resolver's role. */
  @PublicRoute()
  @Post(':id/grant')
  @HttpCode(200)
  grant(@Param('id') id: string, @Body() body: unknown): Promise<JsonObject> {
    return this.forwarding.resolveApproval({ approvalId: id, decision: 'grant', body });
  }

  @PublicRoute()
  @Post(':id/deny')
  @HttpCode(200)
  deny(@Param('id') id: string, @Body() body: unknown): Promise<JsonObject> {
    return this.forwarding.resolveApproval({ approvalId: id, decision: 'deny', body });
  }
}
