import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { run, type CliIo } from '../src/main.js';

/**
 * The CLI run against nothing: NATS and the API point at closed ports, so a command that got past
 * its own checks (arguments, files, what it may sign) would fail to connect instead; a
 * `key.json` of `{}` sits in the working directory. For specs of what a command refuses before it
 * signs or sends anything.
 */
export function offlineCli(prefix: string): {
  /** Runs `writ <argv>` there: its exit code and what it wrote to stderr. */
  readonly writ: (argv: string[]) => Promise<{ code: number; stderr: string }>;
  /** Writes `content` as JSON to `name` in the working directory; returns `name`. */
  readonly file: (name: string, content: unknown) => Promise<string>;
} {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
    await writeFile(join(dir, 'key.json'), '{}');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  return {
    writ: async (argv) => {
      const err: string[] = [];
      const io: CliIo = { env: { WRIT_NATS_URL: 'nats://127.0.0.1:1', WRIT_URL: 'http://127.0.0.1:1' }, cwd: dir, stdout: () => undefined, stderr: (t) => void err.push(t), now: () => new Date() };
      return { code: await run(argv, io), stderr: err.join('\n') };
    },
    file: async (name, content) => {
      await writeFile(join(dir, name), JSON.stringify(content));
      return name;
    },
  };
}
