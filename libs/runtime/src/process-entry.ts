import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * True when the module at `moduleUrl` (`import.meta.url`) is the process
 * entry (`node dist/main.js`, through any symlink), not an import (a test, a
 * tool): a service's `main.ts` starts the service only then.
 */
export function isProcessEntry(moduleUrl: string, argv: readonly string[] = process.argv): boolean {
  const entry = argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
