import { symlink, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { isProcessEntry } from './process-entry.js';

const here = fileURLToPath(import.meta.url);
const dirs: string[] = [];

afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('isProcessEntry', () => {
  it('given the process was started with this file, also through a symlink, then true', async () => {
    expect(isProcessEntry(import.meta.url, ['node', here])).toBe(true);
    const dir = await mkdtemp(join(tmpdir(), 'writ-entry-'));
    dirs.push(dir);
    await symlink(here, join(dir, 'main.js'));
    expect(isProcessEntry(import.meta.url, ['node', join(dir, 'main.js')])).toBe(true);
  });

  it('given another entry, none, or one that does not exist, then false', () => {
    expect(isProcessEntry(import.meta.url, ['node', fileURLToPath(new URL('./index.ts', import.meta.url))])).toBe(false);
    expect(isProcessEntry(import.meta.url, ['node'])).toBe(false);
    expect(isProcessEntry(import.meta.url, ['node', '/nonexistent/main.js'])).toBe(false);
  });
});
