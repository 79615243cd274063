import { COMMANDS, SeedVerdict, WritError, type SpawnManifest } from '@writ/contracts';
import { importEd25519PublicJwk } from '@writ/crypto';
import { rooted } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { connectNats } from '../event-log.js';
import { readJsonFile } from '../files.js';
import { requestService } from '../service-request.js';

export interface ParticipantVerifyOptions {
  /** The child's PUBLIC JWK file (`writ principal keygen` prints one). */
  readonly childKey: string;
  readonly json?: boolean;
}

/**
 * `writ participant verify <manifest.json> --child-key <public.jwk.json>`: asks
 * ingress to verify a signed `seed.spawn.v1` manifest
 * (`<root>.qry.ingress.spawn-verify`). Accepted, the participant is spawned
 * and active; refused, ingress recorded `participant.spawn_refused` and the
 * command fails with its code (exit 1).
 */
export async function participantVerify(file: string, options: ParticipantVerifyOptions, conn: Connection, io: CliIo): Promise<SeedVerdict> {
  const manifest = (await readJsonFile(io.cwd, file, 'spawn manifest')) as Partial<SpawnManifest>;
  const jwk = await readJsonFile(io.cwd, options.childKey, 'child public JWK');
  let x: string;
  try {
    x = (await importEd25519PublicJwk(jwk)).publicJwk.x;
  } catch (cause) {
    throw new CliError('CLI_JWK_INVALID', `${options.childKey} is not a public Ed25519 JWK`, { cause });
  }
  const nc = await connectNats(conn);
  let verdict: SeedVerdict;
  try {
    verdict = await requestService(nc, rooted(COMMANDS.ingressSpawnVerify, conn.subjectRoot), { manifest, child_public_key: x }, SeedVerdict, 'SeedVerdict');
  } finally {
    await nc.drain().catch(() => undefined);
  }
  if (options.json === true) io.stdout(JSON.stringify(verdict));
  else io.stdout(`${verdict.seed_id}: ${verdict.outcome}, ${verdict.status}${verdict.manifest_hash === undefined ? '' : ` (manifest ${verdict.manifest_hash})`}`);
  if (verdict.outcome === 'refused') throw new WritError(verdict.code ?? 'SPAWN_MANIFEST_INVALID', verdict.message ?? 'the manifest was refused');
  return verdict;
}
