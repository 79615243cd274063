import { COMMANDS, Id, KeyRotation, RotateKeyReply, parseContract } from '@writ/contracts';
import { importEd25519PrivateJwk, signJws } from '@writ/crypto';
import { rooted } from '@writ/runtime';
import type { CliIo, Connection } from '../cli-io.js';
import { connectNats } from '../event-log.js';
import { readJsonFile } from '../files.js';
import { cell } from '../format.js';
import { requestService } from '../service-request.js';

/** Services whose signing key `writ keys rotate` can rotate (their `<root>.qry.<service>.rotate-key`). */
export const ROTATING_SERVICES = ['approval'] as const;
export type RotatingService = (typeof ROTATING_SERVICES)[number];

const ROTATE_SUBJECTS: Readonly<Record<RotatingService, string>> = { approval: COMMANDS.approvalRotateKey };

export interface KeysRotateOptions {
  readonly service: RotatingService;
  /** Path of the director's PRIVATE JWK. */
  readonly key: string;
  /** The director's principal id (`requested_by`). */
  readonly principal: string;
  readonly reason?: string;
  readonly json?: boolean;
}

/**
 * `writ keys rotate --service approval --key <file> --principal <director>`:
 * signs a KeyRotation `{ service, requested_by, requested_at, reason? }` with
 * the director's key and sends it to `<root>.qry.<service>.rotate-key`. The
 * service appends `principal.key_added` for a new key, then signs with it; the
 * old key stays valid until `retire_after` (printed), then it is revoked.
 */
export async function keysRotate(options: KeysRotateOptions, conn: Connection, io: CliIo): Promise<RotateKeyReply> {
  const principal = parseContract('--principal', Id, options.principal);
  const key = await importEd25519PrivateJwk(await readJsonFile(io.cwd, options.key, 'private JWK'));
  const rotation = parseContract('KeyRotation', KeyRotation, {
    service: options.service,
    requested_by: principal,
    requested_at: io.now().toISOString(),
    ...(options.reason === undefined ? {} : { reason: options.reason }),
  });
  const rotationJws = await signJws(JSON.stringify(rotation), key);
  const nc = await connectNats(conn);
  let reply: RotateKeyReply;
  try {
    reply = await requestService(nc, rooted(ROTATE_SUBJECTS[options.service], conn.subjectRoot), { rotation_jws: rotationJws }, RotateKeyReply, 'RotateKeyReply');
  } finally {
    await nc.drain().catch(() => undefined);
  }
  io.stdout(
    options.json === true
      ? JSON.stringify(reply)
      : `${cell(reply.status)} ${cell(reply.principal_id)}: signing with ${cell(reply.kid)}; ${cell(reply.previous_kid)} stays valid until ${cell(reply.retire_after)}`,
  );
  return reply;
}
