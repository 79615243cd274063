import { Controller, Get, Inject } from '@nestjs/common';
import { asyncApiDocument } from '@writ/contracts/projection-rows';
import { PublicRoute } from '@writ/runtime/nest';

/** The provider of this deployment's document (bound by the module). */
export const ASYNCAPI_DOCUMENT = Symbol.for('writ.projection.asyncapi');

/** `host:port` of the first NATS server of `WRIT_NATS_URL` (never its credentials). */
function natsHost(url: string): string | undefined {
  try {
    return new URL(url.split(',')[0]?.trim() ?? '').host || undefined;
  } catch {
    return undefined;
  }
}

/** The AsyncAPI document for a deployment's subject root and NATS URL. */
export function deploymentAsyncApi(root: string, natsUrl: string): Record<string, unknown> {
  const host = natsHost(natsUrl);
  return asyncApiDocument({ root, ...(host === undefined ? {} : { natsHost: host }) });
}

/**
 * `GET /v1/asyncapi.json`: the AsyncAPI 3.0 document of the public subjects
 * for this deployment's subject root (docs/asyncapi.json is the same for the
 * root `writ`). Public like the JWKS: it describes the contract, no data.
 */
@Controller('v1/asyncapi.json')
export class AsyncApiController {
  constructor(@Inject(ASYNCAPI_DOCUMENT) private readonly document: Record<string, unknown>) {}

  @PublicRoute()
  @Get()
  get(): Record<string, unknown> {
    return this.document;
  }
}
