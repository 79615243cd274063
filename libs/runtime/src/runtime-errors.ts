import { WritError } from '@writ/contracts';

export type RuntimeErrorCode =
  | 'RUNTIME_CONFIG_INVALID'
  | 'RUNTIME_KEY_INVALID'
  | 'RUNTIME_NATS_UNAVAILABLE'
  | 'RUNTIME_STREAM_MISMATCH'
  | 'RUNTIME_REGISTRY_UNAVAILABLE'
  /** A key rotation or retirement could not be recorded in the log (it kept changing, or the kid was revoked); nothing switched. */
  | 'RUNTIME_KEY_ROTATION_FAILED';

export class RuntimeError extends WritError<RuntimeErrorCode> {}
