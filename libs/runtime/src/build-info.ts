import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What a process says about itself on `/healthz`, so `writ doctor` can show every service's version and a mixed release. */
export interface BuildInfo {
  /** The package that runs (`@writ/orchestrator`), or `unknown`. */
  readonly service: string;
  /** Its package version, or `unknown`. */
  readonly version: string;
  /** The source revision the operator started it from (`WRIT_COMMIT`, set by scripts/writ-up.sh and the images), when known. */
  readonly commit?: string;
}

/**
 * The nearest package.json above the entry script (`services/<name>/dist/main.js`
 * → `services/<name>/package.json`): read once, so a version never drifts from
 * what was built. A process started some other way reports `unknown`, never fails.
 */
export function buildInfo(entry: string | null = process.argv[1] ?? null, env: NodeJS.ProcessEnv = process.env): BuildInfo {
  const commit = env['WRIT_COMMIT'] ? { commit: env['WRIT_COMMIT'] } : {};
  for (let dir = entry === null ? undefined : dirname(entry); dir !== undefined; ) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (typeof manifest.name === 'string' && typeof manifest.version === 'string') return { service: manifest.name, version: manifest.version, ...commit };
    } catch {
      // No (readable) package.json here: look one level up.
    }
    const parent = dirname(dir);
    dir = parent === dir ? undefined : parent;
  }
  return { service: 'unknown', version: 'unknown', ...commit };
}

let cached: BuildInfo | undefined;

/** This process's build info, computed at first use. */
export function processBuildInfo(): BuildInfo {
  cached ??= buildInfo();
  return cached;
}
