import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** A directory of files an e2e test hands to the `writ` CLI (keys, briefs, claims), made before all and removed after all. */
export interface ScratchFiles {
  /** The directory (valid once `beforeAll` ran). */
  dir(): string;
  /** Writes `content` (a string as is, anything else as indented JSON) to `name` in the directory; its path. */
  file(name: string, content: unknown): Promise<string>;
}

export function scratchFiles(prefix: string): ScratchFiles {
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), prefix));
  });
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
  const current = (): string => {
    if (dir === undefined) throw new Error('scratchFiles: the directory is made in beforeAll');
    return dir;
  };
  return {
    dir: current,
    async file(name, content) {
      const target = path.join(current(), name);
      await writeFile(target, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
      return target;
    },
  };
}
