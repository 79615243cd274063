import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import type { ApprovalDetail } from '../../application/approval-detail.js';
import { Forwarding } from '../../application/forwarding.js';
import type { JsonObject } from '../../application/projected-event.js';
import { ReadService } from '../../application/read-service.js';
import type { ApprovalPage, HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';
import { PublicRoute } from '@writ/runtime/nest';

@Controller('v1/approvals')
export class ApprovalsController {
  constructor(
    @Inject(ReadService) private readonly reads: ReadService,
    @Inject(Forwarding) private readonly forwarding: Forwarding,
  ) {}

  /** The approval inbox, oldest request first: `?status=pending&task_id=&principal_id=&action_class=&risk_band=&since=&until=&limit=&cursor=` (an agent: its tasks'). */
  @Get()
  list(@Query() query: unknown, @ReadScope() scope: HttpReadScope): Promise<ApprovalPage> {
    return this.reads.approvals(query, scope);
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
