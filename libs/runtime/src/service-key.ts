import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { exportEd25519PrivateJwk, generateEd25519Key, importEd25519PrivateJwk, type Ed25519SigningKey } from '@writ/crypto';
import { RuntimeError } from './runtime-errors.js';

/**
 * The signing key of a service (approval signs grants, receipt signs receipts).
 * Read from `path` (a private JWK, mode 0600); on first start it is generated
 * there. The file lives outside the repository (default under /var/lib/writ);
 * only its public half ever leaves the process, as `principal.registered`.
 */
export async function loadOrCreateServiceKey(path: string, kid: string): Promise<{ key: Ed25519SigningKey; created: boolean }> {
  let text: string | undefined;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new RuntimeError('RUNTIME_KEY_INVALID', `cannot read the signing key at ${path}: ${(cause as Error).message}`, { cause });
    }
  }
  if (text !== undefined) {
    try {
      return { key: await importEd25519PrivateJwk(JSON.parse(text)), created: false };
    } catch (cause) {
      throw new RuntimeError('RUNTIME_KEY_INVALID', `the signing key at ${path} is not a private Ed25519 JWK; restore it or move it away to generate a new one`, { cause });
    }
  }
  const key = await generateEd25519Key({ kid, extractable: true });
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  try {
    await writeFile(path, JSON.stringify(await exportEd25519PrivateJwk(key)), { mode: 0o600, flag: 'wx' });
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== 'EEXIST') throw cause;
    // Two processes of one service started together on a new key file: the one that created it wins, the other takes its key.
    return { key: await readWrittenKey(path), created: false };
  }
  await chmod(path, 0o600);
  return { key: await importEd25519PrivateJwk(JSON.parse(await readFile(path, 'utf8'))), created: true };
}

/** The key another process is writing at `path` (exclusively created, so it becomes whole within moments). */
async function readWrittenKey(path: string): Promise<Ed25519SigningKey> {
  let last: unknown;
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      return await importEd25519PrivateJwk(JSON.parse(await readFile(path, 'utf8')));
    } catch (cause) {
      last = cause;
      await delay(20);
    }
  }
  throw new RuntimeError('RUNTIME_KEY_INVALID', `the signing key at ${path} is not a private Ed25519 JWK; restore it or move it away to generate a new one`, { cause: last });
}
