import { Controller, Get } from '@nestjs/common';
import { processBuildInfo } from '@writ/runtime';
import { PublicRoute } from '@writ/runtime/nest';
import { STATUS_BY_CODE } from '../http-status.js';
import { API_COMPONENTS, API_ROUTES } from './api-routes.js';
import { openApiDocument } from './openapi-document.js';

/** The OpenAPI document of this API, as the running build describes it (generated once, on first request). */
export function projectionOpenApi(version: string): Record<string, unknown> {
  return openApiDocument({
    title: 'Writ HTTP API',
    version,
    description:
      "Writ's public HTTP API, served by the projection service: the read models (rows as the log said when the projection last caught up; nothing authorizes on them), " +
      'the signed POSTs forwarded to ingress and approval, keys and health. Errors are RFC 9457 problem details (application/problem+json) carrying Writ\'s stable code. ' +
      'services/projection/README.md, "HTTP API"; docs/security.md, "HTTP reads".',
    routes: API_ROUTES,
    components: API_COMPONENTS,
    statusByCode: STATUS_BY_CODE,
    security: {
      name: 'writHttpToken',
      description:
        'Authorization: Bearer <compact JWS>, EdDSA, typ writ-http+jws, signed by a registered key of the calling principal, audience writ-http:<subject root>, at most 15 minutes (writ http token; docs/security.md, "HTTP reads").',
    },
  });
}

@PublicRoute()
@Controller('v1')
export class OpenApiController {
  #document: Record<string, unknown> | undefined;

  /** Public, like the JWKS: the API's shape is no secret, what it answers is. */
  @Get('openapi.json')
  document(): Record<string, unknown> {
    this.#document ??= projectionOpenApi(processBuildInfo().version);
    return this.#document;
  }
}
