import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PublicEd25519Jwk } from '@writ/contracts';
import { exportEd25519PrivateJwk, generateEd25519Key, type Ed25519PublicJwk } from '@writ/crypto';
import { CliError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';

export interface KeygenOptions {
  /** Key id; default: the RFC 7638 thumbprint. */
  readonly kid?: string;
  /** Where the PRIVATE JWK goes (mode 0600, never overwritten); default `./writ-<kid>.private.jwk.json`. */
  readonly out?: string;
}

/**
 * `writ principal keygen`: a fresh Ed25519 key pair. The private JWK is
 * written to a new file readable by its owner only; the public JWK (what
 * `writ principal add --jwk` takes) is printed. The private key never reaches stdout.
 */
export async function principalKeygen(options: KeygenOptions, io: CliIo): Promise<{ publicJwk: Ed25519PublicJwk; out: string }> {
  if (options.kid !== undefined) {
    const kid = PublicEd25519Jwk.shape.kid.safeParse(options.kid);
    if (!kid.success) throw new CliError('CLI_USAGE', `--kid ${JSON.stringify(options.kid)} ${kid.error.issues[0]?.message ?? 'is invalid'}`);
  }
  const key = await generateEd25519Key({ ...(options.kid === undefined ? {} : { kid: options.kid }), extractable: true });
  const out = resolve(io.cwd, options.out ?? `writ-${key.kid.replace(/[^A-Za-z0-9._-]/g, '_')}.private.jwk.json`);
  try {
    // `wx`: refuse to replace an existing key file; 0600 from the first byte.
    await writeFile(out, `${JSON.stringify(await exportEd25519PrivateJwk(key))}\n`, { mode: 0o600, flag: 'wx' });
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'EEXIST') throw new CliError('CLI_FILE_EXISTS', `${out} exists; a key file is never overwritten`, { cause });
    throw new CliError('CLI_FILE_UNREADABLE', `cannot write ${out}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, { cause });
  }
  io.stdout(JSON.stringify(key.publicJwk));
  io.stderr(`private key written to ${out} (mode 0600); keep it secret`);
  return { publicJwk: key.publicJwk, out };
}
