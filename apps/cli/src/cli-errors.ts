import { WritError } from '@writ/contracts';

/** Failures of the CLI itself; errors of the libraries it drives keep their own codes (EVENTSTORE_*, CRYPTO_*, CONTRACT_INVALID). */
export type CliErrorCode =
  /** Unknown command or option, missing argument (exit status 2). */
  | 'CLI_USAGE'
  /** `--out` names a file that exists: a key is never overwritten. */
  | 'CLI_FILE_EXISTS'
  /** A file could not be read, or is not JSON. */
  | 'CLI_FILE_UNREADABLE'
  /** The JWK is not a public Ed25519 key Writ accepts. */
  | 'CLI_JWK_INVALID'
  /** The JWK given where a public key belongs carries the private part `d`. */
  | 'CLI_PRIVATE_KEY_REFUSED'
  /** The principal exists with another type or roles, or the kid names another key (or a revoked one). */
  | 'CLI_PRINCIPAL_CONFLICT'
  | 'CLI_PRINCIPAL_NOT_FOUND'
  /** `action submit` cannot tell who proposes: no `--principal` and no `proposed_by`. */
  | 'CLI_PRINCIPAL_REQUIRED'
  /** `--principal` and the request's `proposed_by` disagree. */
  | 'CLI_PRINCIPAL_MISMATCH'
  /** No event log (stream) to write to: the stack is not up, or another stream name is configured. */
  | 'CLI_EVENT_LOG_MISSING'
  | 'CLI_NATS_UNREACHABLE'
  /** The HTTP endpoint could not be reached or answered an error. */
  | 'CLI_HTTP_FAILED'
  /** Anything unexpected. */
  | 'CLI_FAILED';

export class CliError extends WritError<CliErrorCode> {
  constructor(code: CliErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'CliError';
  }
}
