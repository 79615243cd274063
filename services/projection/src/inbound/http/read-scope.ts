import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { HttpReadScope, PrincipalType } from '@writ/contracts';
import { httpReadScope } from '@writ/kernel';
import { callerOf } from '@writ/runtime/nest';
import { ProjectionError } from '../../application/projection-errors.js';

/**
 * Route parameter: what the verified caller (the global `HttpAuthGuard`) may
 * read, `httpReadScope` of its principal as the log says now. A guarded route
 * always has a caller; none here is a wiring bug, answered as a 500.
 */
export const ReadScope = createParamDecorator((_data: unknown, context: ExecutionContext): HttpReadScope => {
  const caller = callerOf(context.switchToHttp().getRequest());
  if (caller === undefined) throw new ProjectionError('PROJECTION_INTERNAL', 'a read route ran without a verified caller');
  const principal = caller.principal as { principal_id: string; roles: readonly string[]; principal_type?: PrincipalType | string };
  return httpReadScope(principal);
});
