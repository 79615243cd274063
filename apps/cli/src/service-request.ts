import { errors, type NatsConnection } from '@nats-io/transport-node';
import { WritError, parseContract } from '@writ/contracts';
import type { z } from 'zod';
import { CliError } from './cli-errors.js';

/** How long a Writ service may take to answer a request. */
const REQUEST_TIMEOUT_MS = 15_000;

/** A Writ error code as services send it (`CONTEXT_REASON`). */
const REMOTE_CODE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;

/**
 * A request to a Writ service over core NATS (`<root>.qry.<service>.<name>`):
 * the JSON reply checked against `shape`. A refusal (header Writ-Error-Code,
 * body `{ code, message }`) is raised with the service's own code, which the
 * CLI exits with; nobody answering in time is CLI_SERVICE_UNAVAILABLE.
 */
export async function requestService<S extends z.ZodType>(nc: NatsConnection, subject: string, payload: unknown, shape: S, what: string): Promise<z.output<S>> {
  let reply;
  try {
    reply = await nc.request(subject, JSON.stringify(payload), { timeout: REQUEST_TIMEOUT_MS });
  } catch (cause) {
    if (isPermissionViolation(cause)) {
      throw new CliError('CLI_BUS_FORBIDDEN', `the bus credential in use (WRIT_NATS_CREDS) may not send ${subject}: an agent's credential publishes its own ingress subject only; use the operator's or a director's`, { cause, details: { subject } });
    }
    throw new CliError('CLI_SERVICE_UNAVAILABLE', `no service answered on ${subject} (is it running, under this WRIT_SUBJECT_ROOT?)`, { cause, details: { subject } });
  }
  let body: unknown;
  try {
    body = reply.json<unknown>();
  } catch (cause) {
    throw new CliError('CLI_SERVICE_UNAVAILABLE', `the answer on ${subject} is not JSON`, { cause, details: { subject } });
  }
  const code = reply.headers?.get('Writ-Error-Code');
  if (code !== undefined && code !== '') {
    const message = typeof (body as { message?: unknown } | null)?.message === 'string' ? (body as { message: string }).message : `${subject} refused the request`;
    throw new WritError(REMOTE_CODE.test(code) ? code : 'CLI_FAILED', message, { details: { subject, remote: true } });
  }
  return parseContract(what, shape, body);
}

/** The server refused the request or its reply inbox for permissions (somewhere in the cause chain). */
function isPermissionViolation(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current instanceof errors.PermissionViolationError || /Permissions Violation/.test(current.message)) return true;
  }
  return false;
}
