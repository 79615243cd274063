export { RuntimeError, type RuntimeErrorCode } from './runtime-errors.js';
export { loadConfig } from './service-config.js';
export { ensureWritStreams, writStreamConfigs, type WritStreamsOptions } from './writ-streams.js';
export { loadOrCreateServiceKey } from './service-key.js';
export {
  PrincipalRegistry,
  evolvePrincipal,
  registerServicePrincipal,
  type PrincipalRecord,
  type PrincipalRegistryOptions,
} from './principal-registry.js';
