import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { PublicRoute } from '@writ/runtime/nest';
import { Forwarding } from '../../application/forwarding.js';
import type { JsonObject } from '../../application/projected-event.js';
import { ReadService } from '../../application/read-service.js';
import type { BeliefList, DecisionTimeline, HttpReadScope, TaskPage, TaskView } from '@writ/contracts';
import type { WorkingStateRow } from '@writ/contracts/projection-rows';
import { ReadScope } from './read-scope.js';

@Controller('v1/tasks')
export class TasksController {
  constructor(
    @Inject(ReadService) private readonly reads: ReadService,
    @Inject(Forwarding) private readonly forwarding: Forwarding,
  ) {}

  /** Tasks, newest first: `?status=&principal_id=&policy_profile=&q=&since=&until=&limit=&cursor=` (an agent: its own). */
  @Get()
  list(@Query() query: unknown, @ReadScope() scope: HttpReadScope): Promise<TaskPage> {
    return this.reads.tasks(query, scope);
  }

  /** The task and its event timeline (`?after=<task_seq>&limit=<n>` pages it). */
  @Get(':id')
  task(@Param('id') id: string, @Query('after') after: unknown, @Query('limit') limit: unknown, @ReadScope() scope: HttpReadScope): Promise<TaskView> {
    return this.reads.task(id, { after, limit }, scope);
  }

  /** The task's decision timeline (policy decisions and recorded decisions, in log order; `?after=<task_seq>&limit=`). */
  @Get(':id/decisions')
  decisions(@Param('id') id: string, @Query('after') after: unknown, @Query('limit') limit: unknown, @ReadScope() scope: HttpReadScope): Promise<DecisionTimeline> {
    return this.reads.decisions(id, { after, limit }, scope);
  }

  /** The task's working state: its entries and revision (an agent: its own tasks only). */
  @Get(':id/working-state')
  workingState(@Param('id') id: string, @ReadScope() scope: HttpReadScope): Promise<WorkingStateRow> {
    return this.reads.workingState(id, scope);
  }

  /** The task's beliefs, every status, in assertion order (`?status=` keeps one). */
  @Get(':id/beliefs')
  beliefs(@Param('id') id: string, @Query() query: unknown, @ReadScope() scope: HttpReadScope): Promise<BeliefList> {
    return this.reads.beliefs(id, query, scope);
  }

  /**
   * `{ request_jws }`: a signed working state revision, forwarded to the
   * orchestrator, which checks the signature, its type, and that the signer
   * owns the task or is a director. Public: the signed request is the credential.
   */
  @PublicRoute()
  @Post(':id/working-state')
  @HttpCode(200)
  reviseWorkingState(@Param('id') id: string, @Body() body: unknown): Promise<JsonObject> {
    return this.forwarding.submitKnowledge({ taskId: id, kind: 'working_state', body });
  }

  /** `{ request_jws }`: a signed belief assertion (or supersession) or revocation, forwarded as a revision is. */
  @PublicRoute()
  @Post(':id/beliefs')
  @HttpCode(200)
  changeBelief(@Param('id') id: string, @Body() body: unknown): Promise<JsonObject> {
    return this.forwarding.submitKnowledge({ taskId: id, kind: 'belief', body });
  }

  /**
   * `{ claim_jws }` (`kind`: done, blocked or correction), forwarded to the
   * orchestrator, which checks the signature, the JWS type against the kind,
   * and that the signer owns the task. Public: the signed claim is the
   * credential, so an agent whose bus credential publishes only its ingress
   * subject claims here.
   */
  @PublicRoute()
  @Post(':id/claims/:kind')
  @HttpCode(200)
  claim(@Param('id') id: string, @Param('kind') kind: string, @Body() body: unknown): Promise<JsonObject> {
    return this.forwarding.submitClaim({ taskId: id, kind, body });
  }
}
