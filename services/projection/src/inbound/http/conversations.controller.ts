import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { ConversationFocusList, ConversationHistory, HttpReadScope } from '@writ/contracts';
import { PublicRoute, callerOf } from '@writ/runtime/nest';
import { Forwarding } from '../../application/forwarding.js';
import type { JsonObject } from '../../application/projected-event.js';
import { ConversationReads } from '../../application/conversations.js';
import { ProjectionError } from '../../application/projection-errors.js';
import { ReadScope } from './read-scope.js';

/** Route parameter: the verified caller's principal id (whose conversations a read without `principal_id` is about). */
const CallerId = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const caller = callerOf(context.switchToHttp().getRequest());
  if (caller === undefined) throw new ProjectionError('PROJECTION_INTERNAL', 'a read route ran without a verified caller');
  return (caller.principal as { principal_id: string }).principal_id;
});

/** A principal's conversations (issue 17): focus and session history, projections only. */
@Controller('v1')
export class ConversationsController {
  constructor(
    @Inject(ConversationReads) private readonly reads: ConversationReads,
    @Inject(Forwarding) private readonly forwarding: Forwarding,
  ) {}

  /**
   * `{ message_jws }`: a free-form message signed by its sender, forwarded to
   * ingress, which verifies it, records it first and binds it. Public: the
   * signed message is the credential, so an agent sends one here.
   */
  @PublicRoute()
  @Post('messages')
  @HttpCode(200)
  submit(@Body() body: unknown): Promise<JsonObject> {
    return this.forwarding.submitMessage(body);
  }

  /** The focus in each of a principal's conversations (`?principal_id=`, default the caller; an agent: its own). */
  @Get('focus')
  focus(@Query() query: { principal_id?: unknown }, @ReadScope() scope: HttpReadScope, @CallerId() caller: string): Promise<ConversationFocusList> {
    return this.reads.focus(query, scope, caller);
  }

  /** One conversation's messages and where each was bound, in order (`?principal_id=&after=<seq>&limit=`). */
  @Get('conversations/:id/history')
  history(@Param('id') id: string, @Query() query: { principal_id?: unknown; after?: unknown; limit?: unknown }, @ReadScope() scope: HttpReadScope, @CallerId() caller: string): Promise<ConversationHistory> {
    return this.reads.history(id, query, scope, caller);
  }
}
