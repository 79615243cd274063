import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { ExecutorError } from '../../application/executor-errors.js';

/** A handle name as grants carry it (contracts `Name`), kept to what is safe as a file name and an env suffix. */
const HANDLE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
/** A secret larger than this is not a credential; refusing it keeps redaction and env sizes bounded. */
export const SECRET_MAX_BYTES = 64 * 1024;

/** `deploy-token` → `WRIT_SECRET_DEPLOY_TOKEN`: the variable the action reads the value from. */
export function secretEnvName(handle: string): string {
  return `WRIT_SECRET_${handle.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** One resolved secret: only ever in memory, only for the exec it was resolved for. */
export interface ResolvedSecret {
  readonly handle: string;
  readonly env: string;
  readonly value: string;
}

/** Where secret values come from at execution time. */
export interface SecretSource {
  /** The values of exactly `handles`, or EXECUTOR_SECRET_UNAVAILABLE naming the handle (never the value). */
  resolve(handles: readonly string[]): Promise<readonly ResolvedSecret[]>;
}

function unavailable(handle: string, why: string): ExecutorError {
  return new ExecutorError('EXECUTOR_SECRET_UNAVAILABLE', `secret handle ${JSON.stringify(handle)} cannot be resolved: ${why}`, { details: { handle } });
}

/**
 * `WRIT_SECRETS_DIR`: one regular file per handle, named by the handle, owned by
 * the executor's user and readable by it only (mode 0600 or stricter: anything
 * group- or world-accessible is refused, as ssh refuses a loose key). The file is
 * opened without following links and read at each use, so a rotated secret is
 * picked up at the next use and nothing is cached. A trailing newline is dropped.
 */
export class DirectorySecretSource implements SecretSource {
  constructor(private readonly dir: string | undefined) {}

  async resolve(handles: readonly string[]): Promise<readonly ResolvedSecret[]> {
    const out: ResolvedSecret[] = [];
    const envs = new Map<string, string>();
    for (const handle of new Set(handles)) {
      if (!HANDLE.test(handle)) throw unavailable(handle, 'not a handle name');
      const env = secretEnvName(handle);
      const clash = envs.get(env);
      if (clash !== undefined) throw unavailable(handle, `it maps to ${env} like ${JSON.stringify(clash)}`);
      envs.set(env, handle);
      if (this.dir === undefined) throw unavailable(handle, 'this executor has no WRIT_SECRETS_DIR');
      out.push({ handle, env, value: await this.#read(handle) });
    }
    return out;
  }

  async #read(handle: string): Promise<string> {
    let file;
    try {
      file = await open(path.join(this.dir as string, handle), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (error) {
      throw unavailable(handle, `no readable file for it in the secrets directory (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    try {
      const stat = await file.stat();
      if (!stat.isFile()) throw unavailable(handle, 'its entry is not a regular file');
      if ((stat.mode & 0o077) !== 0) throw unavailable(handle, `its file is accessible to group or others (mode ${(stat.mode & 0o777).toString(8)}; use 0600)`);
      if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) throw unavailable(handle, 'its file is not owned by the executor user');
      if (stat.size > SECRET_MAX_BYTES) throw unavailable(handle, `its file is over ${SECRET_MAX_BYTES} bytes`);
      const value = (await file.readFile('utf8')).replace(/\r?\n$/, '');
      if (value.length === 0) throw unavailable(handle, 'its file is empty');
      if (value.includes('\0')) throw unavailable(handle, 'its value holds a NUL byte');
      return value;
    } finally {
      await file.close();
    }
  }
}
