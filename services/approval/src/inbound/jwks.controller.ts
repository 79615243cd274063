import { Controller, Get, Header, Inject, ServiceUnavailableException } from '@nestjs/common';
import { PublicRoute } from '@writ/runtime/nest';
import type { PublicEd25519Jwk } from '@writ/contracts';
import type { JwksSource } from '../application/ports.js';

export const JWKS_SOURCE = Symbol('approval.jwks');

/**
 * `GET /.well-known/jwks.json`: the approval service's public signing keys that
 * are not retired (RFC 7517 key set; `kid`, `alg: EdDSA`, `use: sig`), from the
 * log. During a rotation both keys are listed until the old one retires.
 */
@PublicRoute()
@Controller()
export class JwksController {
  constructor(@Inject(JWKS_SOURCE) private readonly source: JwksSource) {}

  @Get('.well-known/jwks.json')
  @Header('Cache-Control', 'public, max-age=60')
  async jwks(): Promise<{ readonly keys: readonly PublicEd25519Jwk[] }> {
    try {
      return await this.source.jwks();
    } catch {
      throw new ServiceUnavailableException({ code: 'APPROVAL_UNAVAILABLE', message: 'the key set cannot be read from the log now; retry' });
    }
  }
}
