import { readFile } from 'node:fs/promises';
import { jetstream } from '@nats-io/jetstream';
import { connect, credsAuthenticator, headers, type NatsConnection } from '@nats-io/transport-node';
import { AgentError } from './agent-errors.js';
import { INGRESS_IDEMPOTENCY_KEY_HEADER } from './contracts.js';

/** How to reach Writ's NATS: its URL(s) and the agent's bus credential (`writ principal add` writes it). */
export interface NatsOptions {
  /** `nats://127.0.0.1:4223` (Writ's own server; the machine's anonymous one on 4222 is not Writ's). */
  readonly servers: string | readonly string[];
  /** The `.creds` file `writ principal add` wrote (0600). */
  readonly credsFile?: string;
  /** Or the `.creds` text itself. */
  readonly creds?: string | Uint8Array;
  /** The connection's name on the server (default the agent's principal id). */
  readonly name?: string;
}

/** What JetStream answered a publish: the request is durably in the ingress stream. */
export interface PublishAck {
  readonly stream: string;
  readonly seq: number;
  /** True when the stream already held a message with this id (only with Nats-Msg-Id, which the SDK never sets). */
  readonly duplicate: boolean;
}

/** Connects with the agent's credential; AGENT_NATS_UNREACHABLE with the fix when it cannot. */
export async function connectNats(options: NatsOptions, defaultName: string): Promise<NatsConnection> {
  let creds: Uint8Array | undefined;
  if (options.credsFile !== undefined) {
    try {
      creds = await readFile(options.credsFile);
    } catch (cause) {
      throw new AgentError('AGENT_NATS_UNREACHABLE', `cannot read the bus credential ${options.credsFile} (${(cause as { code?: string }).code ?? 'error'}); writ principal add writes <agent>.creds`, { cause });
    }
  } else if (options.creds !== undefined) {
    creds = typeof options.creds === 'string' ? new TextEncoder().encode(options.creds) : options.creds;
  }
  const servers = typeof options.servers === 'string' ? options.servers : [...options.servers];
  try {
    return await connect({ servers, name: options.name ?? defaultName, timeout: 5_000, ...(creds === undefined ? {} : { authenticator: credsAuthenticator(creds) }) });
  } catch (cause) {
    throw new AgentError('AGENT_NATS_UNREACHABLE', `cannot connect to Writ's NATS at ${String(servers)} (${(cause as Error).message}); check WRIT_NATS_URL and the agent's .creds`, { cause });
  }
}

/**
 * Publishes a signed request to the agent's ingress subject with JetStream
 * and waits for the stream's ack. The idempotency key travels in
 * `Writ-Idempotency-Key`, never `Nats-Msg-Id`: JetStream dedupes msg ids
 * across the whole ingress stream, so another principal publishing the same
 * id first would make the stream drop this request.
 */
export async function publishAction(nc: NatsConnection, subject: string, jws: string, idempotencyKey: string): Promise<PublishAck> {
  const h = headers();
  h.set(INGRESS_IDEMPOTENCY_KEY_HEADER, idempotencyKey);
  try {
    const ack = await jetstream(nc).publish(subject, jws, { headers: h });
    return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
  } catch (cause) {
    if (isPermissionViolation(cause)) {
      throw new AgentError('AGENT_BUS_FORBIDDEN', `the bus credential may not publish ${subject}: an agent's credential publishes <root>.ingress.action.<its own id> only (is the principal id, or the subject root, another?)`, {
        cause,
        details: { subject },
      });
    }
    throw new AgentError('AGENT_SUBMIT_NOT_STORED', `JetStream did not store the request on ${subject} (${(cause as Error).message}); is Writ's ingress stream up, under this subject root?`, { cause, details: { subject } });
  }
}

/**
 * A request/reply to a Writ service on `<root>.qry.<service>.<name>` (core NATS),
 * the JSON reply returned as is. A service's refusal (header `Writ-Error-Code`,
 * body `{ code, message }`) is `refusalCode` with Writ's code as `remoteCode`.
 */
export async function requestService(nc: NatsConnection, subject: string, body: unknown, refusalCode: 'AGENT_CLAIM_REFUSED', timeoutMs = 15_000): Promise<unknown> {
  let reply;
  try {
    reply = await nc.request(subject, JSON.stringify(body), { timeout: timeoutMs });
  } catch (cause) {
    if (isPermissionViolation(cause)) {
      throw new AgentError(
        'AGENT_BUS_FORBIDDEN',
        `the bus credential may not send ${subject}: the credential writ principal add issues an agent publishes its own ingress subject only; send claims over a connection whose credential may (README, "Claims")`,
        { cause, details: { subject } },
      );
    }
    throw new AgentError('AGENT_SERVICE_UNAVAILABLE', `no service answered on ${subject} within ${timeoutMs} ms (is the orchestrator running, under this subject root?)`, { cause, details: { subject } });
  }
  let parsed: unknown;
  try {
    parsed = reply.json<unknown>();
  } catch (cause) {
    throw new AgentError('AGENT_SERVICE_UNAVAILABLE', `the answer on ${subject} is not JSON`, { cause, details: { subject } });
  }
  const code = reply.headers?.get('Writ-Error-Code');
  if (code !== undefined && code !== '') {
    const message = (parsed as { message?: unknown } | null)?.message;
    throw new AgentError(refusalCode, `${subject} refused the request (${code}): ${typeof message === 'string' ? message : 'no message'}`, { remoteCode: code, details: { subject } });
  }
  return parsed;
}

/** The server refused a publish or a reply inbox for permissions (somewhere in the cause chain). Checked by name: nats.js may be another copy. */
function isPermissionViolation(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current.name === 'PermissionViolationError' || /Permissions Violation/i.test(current.message)) return true;
  }
  return false;
}
