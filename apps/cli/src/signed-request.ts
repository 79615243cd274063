import type { NatsConnection } from '@nats-io/transport-node';
import { Id, parseContract } from '@writ/contracts';
import { importEd25519PrivateJwk, type Ed25519SigningKey } from '@writ/crypto';
import { rooted, signRequest, type SignedRequestKind } from '@writ/runtime';
import type { z } from 'zod';
import type { CliIo, Connection } from './cli-io.js';
import { connectNats } from './event-log.js';
import { readJsonFile } from './files.js';
import { requestService } from './service-request.js';

/** A director as the CLI signs for it: the principal id (`--principal`) and its private key (`--key`). */
export interface DirectorSigner {
  readonly principalId: string;
  /**
   * Signs a request of `request`'s kind now: `fields` plus the signer and signed-at
   * fields (checked against the contract first), with the kind's `typ` if it has one.
   * The services verify it with `verifySignedRequest` of @writ/runtime, against the same kind.
   */
  sign<S extends z.ZodType, SF extends string, TF extends string>(request: SignedRequestKind<S, SF, TF>, fields: Omit<z.input<S>, SF | TF>): Promise<string>;
}

/**
 * The director's signer: `principal` checked as an Id, the PRIVATE JWK read from
 * `keyFile` (relative to the working directory). Loaded before anything is asked
 * of the projection or the bus, so a wrong key file fails first.
 */
export async function directorSigner(io: CliIo, keyFile: string, principal: string): Promise<DirectorSigner> {
  const principalId = parseContract('--principal', Id, principal);
  const key: Ed25519SigningKey = await importEd25519PrivateJwk(await readJsonFile(io.cwd, keyFile, 'private JWK'));
  return {
    principalId,
    sign: async (request, fields) => (await signRequest(request, fields, { principalId, key, now: io.now() })).jws,
  };
}

/** How a signed request travels: `requestService` unless a command keeps its own refusal codes. */
export type ServiceRequester = <S extends z.ZodType>(nc: NatsConnection, subject: string, payload: unknown, shape: S, what: string) => Promise<z.output<S>>;

/**
 * Sends `body` (which carries the signed JWS) on `command` under the connection's
 * subject root and answers the reply checked against `reply`; NATS is drained
 * afterwards whatever happens. A service's refusal is raised with its own code.
 */
export async function sendSignedRequest<R extends z.ZodType>(
  conn: Connection,
  command: string,
  body: Readonly<Record<string, unknown>>,
  reply: R,
  what: string,
  request: ServiceRequester = requestService,
): Promise<z.output<R>> {
  const nc = await connectNats(conn);
  try {
    return await request(nc, rooted(command, conn.subjectRoot), body, reply, what);
  } finally {
    await nc.drain().catch(() => undefined);
  }
}
