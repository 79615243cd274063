import { WritError } from '@writ/contracts';

export type RuntimeErrorCode =
  | 'RUNTIME_CONFIG_INVALID'
  | 'RUNTIME_KEY_INVALID'
  | 'RUNTIME_NATS_UNAVAILABLE'
  | 'RUNTIME_STREAM_MISMATCH'
  | 'RUNTIME_REGISTRY_UNAVAILABLE';

export class RuntimeError extends WritError<RuntimeErrorCode> {}
