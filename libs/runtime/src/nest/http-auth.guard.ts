import { HttpException, HttpStatus, SetMetadata, createParamDecorator, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { hasErrorCode, type HttpAuthErrorCode } from '@writ/contracts';
import { HttpAuthError, type HttpCaller } from '../http-credential.js';

const PUBLIC_ROUTE = 'writ:http-public';

/**
 * Marks a controller or a route as readable without a credential: health and
 * readiness, the JWKS, and the endpoints whose body is itself signed by its
 * sender (a signed ActionRequest, a signed seed document). Everything else
 * needs `Authorization: Bearer <token>` (`HttpAuthGuard`).
 */
export const PublicRoute = (): ClassDecorator & MethodDecorator => SetMetadata(PUBLIC_ROUTE, true);

/** Verifies the `Authorization` header (`verifyHttpBearer` against the service's principal registry). */
export type HttpBearerVerifier = (authorization: string | undefined) => Promise<HttpCaller>;

interface AuthenticatedRequest {
  headers: Record<string, string | string[] | undefined>;
  writCaller?: HttpCaller;
}

/** A refusal as HTTP: 401 `{ code, message }`; `code` is also a property, so an app's exception filter keeps it. */
export class HttpAuthException extends HttpException {
  readonly code: HttpAuthErrorCode;

  constructor(error: HttpAuthError) {
    super({ code: error.code, message: error.message }, HttpStatus.UNAUTHORIZED);
    this.code = error.code;
    this.message = error.message;
  }
}

/**
 * The HTTP side of the trust boundary, global on every service's HTTP app
 * (`startServiceApp`): a route not marked `@PublicRoute()` runs only for a
 * verified caller, which the route reads with `@Caller()`. A service that
 * verifies no credential (no `verify`) refuses every route but its public ones.
 * Bus handlers of the hybrid app are not concerned (their messages carry
 * their own signatures and the bus its permissions).
 */
export class HttpAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly verify: HttpBearerVerifier | undefined,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    if (this.reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, [context.getHandler(), context.getClass()]) === true) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (this.verify === undefined) {
      throw new HttpAuthException(new HttpAuthError('HTTP_AUTH_MISSING', 'this route is not served to anyone by this service'));
    }
    const header = request.headers['authorization'];
    try {
      request.writCaller = await this.verify(Array.isArray(header) ? header[0] : header);
    } catch (error) {
      if (error instanceof HttpAuthError || (hasErrorCode(error) && error.code.startsWith('HTTP_AUTH_'))) throw new HttpAuthException(error as HttpAuthError);
      throw error;
    }
    return true;
  }
}

/** The verified caller of a guarded route (undefined on a public one). */
export function callerOf(request: unknown): HttpCaller | undefined {
  return (request as AuthenticatedRequest | undefined)?.writCaller;
}

/** Route parameter: the verified caller (`HttpCaller`). */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): HttpCaller | undefined => callerOf(context.switchToHttp().getRequest()));
