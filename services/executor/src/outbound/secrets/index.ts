export { redactBytes, redactionMark, redactText } from './redact.js';
export { DirectorySecretSource, SECRET_MAX_BYTES, secretEnvName, type ResolvedSecret, type SecretSource } from './secret-source.js';
