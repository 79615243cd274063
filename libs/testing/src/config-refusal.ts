import { expect } from 'vitest';

/**
 * What `loadConfig` throws when a variable is set under a refused former name (`renamedVariable`):
 * RUNTIME_CONFIG_INVALID, its message naming the former name and the current one. For `toThrow`.
 */
export function refusedByName(message: RegExp) {
  return expect.objectContaining({ code: 'RUNTIME_CONFIG_INVALID', message: expect.stringMatching(message) });
}
