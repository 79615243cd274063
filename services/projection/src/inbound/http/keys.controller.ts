import { Controller, Get, Inject } from '@nestjs/common';
import { PublicRoute } from '@writ/runtime/nest';
import type { PublicEd25519Jwk } from '@writ/contracts';
import { ReadService } from '../../application/read-service.js';

@PublicRoute()
@Controller('v1/keys')
export class KeysController {
  constructor(@Inject(ReadService) private readonly reads: ReadService) {}

  /** JWKS of the service principals' active public keys (grant and receipt signers). */
  @Get()
  keys(): Promise<{ readonly keys: readonly PublicEd25519Jwk[] }> {
    return this.reads.keys();
  }
}
