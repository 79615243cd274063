import { COMMANDS, RotateKeyReply } from '@writ/contracts';
import { SIGNED_REQUESTS } from '@writ/runtime';
import type { CliIo, Connection } from '../cli-io.js';
import { cell } from '../format.js';
import { directorSigner, sendSignedRequest } from '../signed-request.js';

/** Services whose signing key `writ keys rotate` can rotate (their `<root>.qry.<service>.rotate-key`). */
export const ROTATING_SERVICES = ['approval', 'receipt'] as const;
export type RotatingService = (typeof ROTATING_SERVICES)[number];

const ROTATE_SUBJECTS: Readonly<Record<RotatingService, string>> = { approval: COMMANDS.approvalRotateKey, receipt: COMMANDS.receiptRotateKey };

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
 * `writ keys rotate --service approval|receipt --key <file> --principal <director>`:
 * signs a KeyRotation `{ service, requested_by, requested_at, reason? }` with
 * the director's key and sends it to `<root>.qry.<service>.rotate-key`. The
 * service appends `principal.key_added` for a new key, then signs with it
 * (approval: grants; receipt: receipts and tree heads); the old key stays
 * valid until `retire_after` (printed), then it is revoked. What it signed
 * before stays verifiable against the key history in the log.
 */
export async function keysRotate(options: KeysRotateOptions, conn: Connection, io: CliIo): Promise<RotateKeyReply> {
  const director = await directorSigner(io, options.key, options.principal);
  const rotationJws = await director.sign(SIGNED_REQUESTS.keyRotation, {
    service: options.service,
    ...(options.reason === undefined ? {} : { reason: options.reason }),
  });
  const reply = await sendSignedRequest(conn, ROTATE_SUBJECTS[options.service], { rotation_jws: rotationJws }, RotateKeyReply, 'RotateKeyReply');
  io.stdout(
    options.json === true
      ? JSON.stringify(reply)
      : `${cell(reply.status)} ${cell(reply.principal_id)}: signing with ${cell(reply.kid)}; ${cell(reply.previous_kid)} stays valid until ${cell(reply.retire_after)}`,
  );
  return reply;
}
