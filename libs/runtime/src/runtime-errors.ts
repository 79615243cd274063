import { WritError } from '@writ/contracts';

export type RuntimeErrorCode =
  | 'RUNTIME_CONFIG_INVALID'
  | 'RUNTIME_KEY_INVALID'
  /** Another process sharing the key directory held its lock for longer than a change takes; retried by the caller. */
  | 'RUNTIME_KEY_LOCKED'
  | 'RUNTIME_NATS_UNAVAILABLE'
  | 'RUNTIME_STREAM_MISMATCH'
  | 'RUNTIME_REGISTRY_UNAVAILABLE'
  /** A key rotation or retirement could not be recorded in the log (it kept changing, or the kid was revoked); nothing switched. */
  | 'RUNTIME_KEY_ROTATION_FAILED'
  /** The NATS authority (`<WRIT_HOME>/nats`) is missing, or the server refused an account update made with it. */
  | 'RUNTIME_BUS_AUTHORITY_MISSING';

export class RuntimeError extends WritError<RuntimeErrorCode> {}
