import { Id, WritError, parseActionRequest, parseContract } from '@writ/contracts';
import { importEd25519PrivateJwk, signJws } from '@writ/crypto';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { connectNats } from '../event-log.js';
import { readJsonFile } from '../files.js';
import { publishSignedAction } from '../ingress-submission.js';

export interface ActionSubmitOptions {
  /** Path of the PRIVATE JWK that signs. */
  readonly key: string;
  /** Who proposes; default the request's `proposed_by`. */
  readonly principal?: string;
  /** POST `<url>/v1/actions` instead of publishing to NATS. */
  readonly http?: string;
  readonly json?: boolean;
}

export type SubmitResult =
  | { readonly channel: 'nats'; readonly subject: string; readonly ack: { stream: string; seq: number; duplicate: boolean } }
  | { readonly channel: 'http'; readonly status: number; readonly body: unknown };

/**
 * `writ action submit <file>`: fills `proposed_at` (now) and `proposed_by`
 * (when missing), checks the ActionRequest contract, signs it as a compact
 * EdDSA JWS and publishes it to `<root>.ingress.action.<principal>` with
 * `Writ-Idempotency-Key` = action_request_id (prints the JetStream ack), or POSTs it
 * to `<url>/v1/actions` (prints the reply; a refusal exits non-zero with its code).
 */
export async function actionSubmit(file: string, options: ActionSubmitOptions, conn: Connection, io: CliIo): Promise<SubmitResult> {
  const document = await readJsonFile(io.cwd, file, 'ActionRequest');
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new CliError('CLI_FILE_UNREADABLE', `${file} must hold an ActionRequest object`);
  }
  const proposedBy = (document as { proposed_by?: unknown }).proposed_by;
  const principal = options.principal ?? (typeof proposedBy === 'string' ? proposedBy : undefined);
  if (principal === undefined) throw new CliError('CLI_PRINCIPAL_REQUIRED', 'name the proposer with --principal (or proposed_by in the file)');
  parseContract('--principal', Id, principal);
  if (typeof proposedBy === 'string' && proposedBy !== principal) {
    throw new CliError('CLI_PRINCIPAL_MISMATCH', `the request is proposed_by ${proposedBy}, not ${principal}; ingress would refuse it`);
  }
  return submitActionRequest({ ...document, proposed_by: principal }, principal, options, conn, io);
}

/**
 * Signs an ActionRequest (`proposed_at` set to now) with the key at `options.key` and sends it as
 * `writ action submit` does: published to `<root>.ingress.action.<principal>`, or POSTed to
 * `<options.http>/v1/actions`. Commands that build a request themselves (`writ memory promote`) use it.
 */
export async function submitActionRequest(document: Record<string, unknown>, principal: string, options: ActionSubmitOptions, conn: Connection, io: CliIo): Promise<SubmitResult> {
  const request = parseActionRequest({ ...document, proposed_by: principal, proposed_at: io.now().toISOString() });
  const key = await importEd25519PrivateJwk(await readJsonFile(io.cwd, options.key, 'private JWK'));
  const jws = await signJws(JSON.stringify(request), key);

  if (options.http !== undefined) return submitOverHttp(options.http, jws, request.action_request_id, principal, io);

  const subject = `${conn.subjectRoot}.ingress.action.${principal}`;
  const nc = await connectNats(conn);
  try {
    const ack = await publishSignedAction(nc, subject, jws, request.action_request_id);
    const result = { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
    io.stdout(options.json === true ? JSON.stringify({ subject, action_request_id: request.action_request_id, ...result }) : JSON.stringify(result));
    return { channel: 'nats', subject, ack: result };
  } catch (cause) {
    throw new CliError('CLI_NATS_UNREACHABLE', `JetStream did not store the request on ${subject} (is ingress's stream up?)`, { cause });
  } finally {
    await nc.drain().catch(() => undefined);
  }
}

async function submitOverHttp(base: string, jws: string, actionRequestId: string, principal: string, io: CliIo): Promise<SubmitResult> {
  const url = `${base.replace(/\/+$/, '')}/v1/actions`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/jose', 'idempotency-key': actionRequestId, 'writ-principal': principal },
      body: jws,
    });
  } catch (cause) {
    throw new CliError('CLI_HTTP_FAILED', `cannot reach ${url}`, { cause });
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    // not JSON: reported as text
  }
  const reply = (typeof body === 'object' && body !== null ? body : {}) as { code?: unknown; reason_code?: unknown; detail?: unknown; message?: unknown };
  if (!response.ok) {
    const code = typeof reply.reason_code === 'string' ? reply.reason_code : typeof reply.code === 'string' ? reply.code : 'CLI_HTTP_FAILED';
    // Problem details (RFC 9457): `detail`; `message` from a server before them.
    const message = typeof reply.detail === 'string' ? reply.detail : typeof reply.message === 'string' ? reply.message : `${url} answered ${response.status}`;
    // The remote code (INGRESS_STALE, CONTRACT_INVALID...) is what the caller branches on.
    throw new WritError(code, message, { details: { status: response.status, body } });
  }
  io.stdout(JSON.stringify(body));
  return { channel: 'http', status: response.status, body };
}
