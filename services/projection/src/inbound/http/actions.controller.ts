import { Body, Controller, Get, Headers, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { Forwarding } from '../../application/forwarding.js';
import type { JsonObject } from '../../application/projected-event.js';
import { ReadService, type ActionView } from '../../application/read-service.js';
import type { ActionPage, HttpReadScope } from '@writ/contracts';
import { ReadScope } from './read-scope.js';
import { PublicRoute } from '@writ/runtime/nest';

interface StatusResponse {
  status(code: number): unknown;
}

@Controller('v1/actions')
export class ActionsController {
  constructor(
    @Inject(ReadService) private readonly reads: ReadService,
    @Inject(Forwarding) private readonly forwarding: Forwarding,
  ) {}

  /** Actions, newest first: `?status=&principal_id=&task_id=&action_class=&risk_band=&since=&until=&limit=&cursor=` (an agent: its own). */
  @Get()
  list(@Query() query: unknown, @ReadScope() scope: HttpReadScope): Promise<ActionPage> {
    return this.reads.actions(query, scope);
  }

  /** The action's status and the ids of what decided and ran it (docs/governed-path.md, "Action status"). */
  @Get(':id')
  action(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<ActionView> {
    return this.reads.action(id, scope);
  }

  /**
   * A signed ActionRequest (the compact JWS as `application/jose` or
   * `text/plain`, or a `SubmitAction` JSON document), forwarded to ingress:
   * 202 with ingress's answer when accepted, 200 for a duplicate, 4xx
   * `{ code, message }` when ingress rejects it (its reason code).
   */
  @PublicRoute()
  @Post()
  async submit(
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Headers('writ-principal') principalId: string | undefined,
    @Res({ passthrough: true }) response: StatusResponse,
  ): Promise<JsonObject> {
    const outcome = await this.forwarding.submitAction({ body, idempotencyKey, principalId });
    response.status(outcome.kind === 'duplicate' ? 200 : 202);
    return outcome.reply;
  }
}
