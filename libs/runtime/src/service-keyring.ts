import { chmod, mkdir, open as openFile, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { exportEd25519PrivateJwk, generateEd25519Key, importEd25519PrivateJwk, type Ed25519SigningKey } from '@writ/crypto';
import { z } from 'zod';
import { RuntimeError } from './runtime-errors.js';

/** The kid regex of PublicEd25519Jwk: it also keeps a kid safe as a file name (no `/`, never `..` alone). */
const Kid = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:-]+$/)
  .refine((kid) => kid !== '.' && kid !== '..', 'must not be "." or ".."');
const Instant = z.iso.datetime({ offset: true });

/** A key that no longer signs and is still valid until `retire_after` (then its revocation is due). */
export const RetiringKey = z.strictObject({ kid: Kid, retire_after: Instant, replaced_by: Kid });
export type RetiringKey = z.infer<typeof RetiringKey>;

/**
 * `keyring.json` beside the keys. `pending` is a rotation begun (its key file written) and not
 * yet switched to: it is finished on the next start, so a crash between adding the key to the
 * log and signing with it leaves nothing half done.
 */
export const KeyringState = z.strictObject({
  version: z.literal(1),
  active: Kid,
  retiring: z.array(RetiringKey).max(64),
  retired: z.array(z.strictObject({ kid: Kid, retired_at: Instant })).max(1_024),
  pending: z.strictObject({ kid: Kid, retire_after: Instant, requested_by: z.string().min(1).max(128).optional() }).optional(),
});
export type KeyringState = z.infer<typeof KeyringState>;

export const KEYRING_STATE_FILE = 'keyring.json';
/** Held (created exclusively, removed after) while one process changes the keyring: processes sharing the directory take turns. */
export const KEYRING_LOCK_FILE = 'keyring.lock';
/** How often a process waiting for the lock tries again, and how long it waits in all. */
const LOCK_RETRY_MS = 20;
const LOCK_WAIT_MS = 15_000;
/** A lock not touched for this long was left by a process that died holding it: it is broken. A live holder touches it every third of it. */
const LOCK_STALE_MS = 30_000;

export interface ServiceKeyringOptions {
  /** The key directory (`/var/lib/writ/keys/approval`): `<kid>.jwk.json` private keys (0600) and `keyring.json`. */
  readonly dir: string;
  /** The single key file of older releases; migrated in on the first start of the keyring. */
  readonly legacyKeyFile?: string;
  /** The kid of a key generated on first start (no keyring, no legacy file). */
  readonly newKid: () => string;
}

export interface OpenedKeyring {
  readonly keyring: ServiceKeyring;
  /** How the active key came to be: read from the keyring, migrated from the legacy file, or generated now. */
  readonly origin: 'keyring' | 'migrated' | 'generated';
}

/**
 * A service's signing keys on disk, over rotations: one active key, the keys it
 * replaced until they retire, and the kids already retired. Only this process's
 * file system is touched here; putting keys in the log (`principal.key_added`
 * before a key signs, `principal.key_revoked` when it retires) is
 * `RotatingServiceKey`'s part. Private keys never leave the directory; the state
 * file is replaced atomically (write, then rename), so a crash leaves either the
 * old or the new state.
 *
 * Several processes may share the directory (replicas of one service on one
 * volume): each change runs under the directory's lock file on the state as
 * it is on disk then (`exclusive`), and `reload` picks up what another process
 * changed (a rotation: the active key switches).
 */
export class ServiceKeyring {
  #state: KeyringState;
  #active: Ed25519SigningKey;
  #pendingKey: Ed25519SigningKey | undefined;

  private constructor(
    readonly dir: string,
    state: KeyringState,
    active: Ed25519SigningKey,
    pendingKey: Ed25519SigningKey | undefined,
  ) {
    this.#state = state;
    this.#active = active;
    this.#pendingKey = pendingKey;
  }

  /**
   * Opens the directory (created 0700 when missing). Without `keyring.json` the
   * legacy key file, if any, becomes the active key (copied in under its kid; the
   * old file is left in place), else a key is generated. A key or state that cannot
   * be read is RUNTIME_KEY_INVALID: a signing key is never silently replaced.
   */
  static async open(options: ServiceKeyringOptions): Promise<OpenedKeyring> {
    await mkdir(options.dir, { recursive: true, mode: 0o700 });
    // Under the lock: two replicas starting together on a new directory generate (or migrate) one key, not two.
    return withDirectoryLock(options.dir, () => ServiceKeyring.#openLocked(options));
  }

  static async #openLocked(options: ServiceKeyringOptions): Promise<OpenedKeyring> {
    const statePath = join(options.dir, KEYRING_STATE_FILE);
    const text = await readOptional(statePath, 'the keyring state');
    if (text !== undefined) {
      const state = parseState(text, statePath);
      const active = await readKey(options.dir, state.active);
      const pendingKey = state.pending === undefined ? undefined : await readKey(options.dir, state.pending.kid);
      return { keyring: new ServiceKeyring(options.dir, state, active, pendingKey), origin: 'keyring' };
    }

    let origin: OpenedKeyring['origin'] = 'generated';
    let key: Ed25519SigningKey | undefined;
    const legacy = options.legacyKeyFile === undefined ? undefined : await readOptional(options.legacyKeyFile, 'the signing key');
    if (legacy !== undefined) {
      key = await importKey(legacy, options.legacyKeyFile as string, true);
      origin = 'migrated';
    } else {
      key = await generateEd25519Key({ kid: Kid.parse(options.newKid()), extractable: true });
    }
    await writeKey(options.dir, key, origin === 'migrated');
    const state: KeyringState = { version: 1, active: key.kid, retiring: [], retired: [] };
    await writeState(options.dir, state);
    return { keyring: new ServiceKeyring(options.dir, state, await readKey(options.dir, key.kid), undefined), origin };
  }

  /** The key that signs now. */
  get active(): Ed25519SigningKey {
    return this.#active;
  }

  get state(): KeyringState {
    return structuredClone(this.#state);
  }

  /** The rotation begun and not yet switched to, with its key. */
  get pending(): { readonly key: Ed25519SigningKey; readonly retire_after: string; readonly requested_by?: string } | undefined {
    const pending = this.#state.pending;
    if (pending === undefined || this.#pendingKey === undefined) return undefined;
    return { key: this.#pendingKey, retire_after: pending.retire_after, ...(pending.requested_by === undefined ? {} : { requested_by: pending.requested_by }) };
  }

  /**
   * Re-reads the state file, which another process sharing the directory may
   * have changed, and takes its keys; true when the active key switched. The
   * file is only ever replaced whole (rename), so a read sees one state or the other.
   */
  async reload(): Promise<boolean> {
    const statePath = join(this.dir, KEYRING_STATE_FILE);
    const text = await readOptional(statePath, 'the keyring state');
    if (text === undefined) throw new RuntimeError('RUNTIME_KEY_INVALID', `${statePath} is gone; restore it from a backup (the keys beside it are intact)`);
    const state = parseState(text, statePath);
    if (JSON.stringify(state) === JSON.stringify(this.#state)) return false;
    const active = state.active === this.#active.kid ? this.#active : await readKey(this.dir, state.active);
    const pendingKid = state.pending?.kid;
    const pendingKey = pendingKid === undefined ? undefined : pendingKid === this.#pendingKey?.kid ? this.#pendingKey : await readKey(this.dir, pendingKid);
    const switched = active !== this.#active;
    this.#state = state;
    this.#active = active;
    this.#pendingKey = pendingKey;
    return switched;
  }

  /**
   * Runs `work` holding the directory's lock, on the state as it is on disk
   * now (reloaded first): every change of the keyring goes through here, so
   * processes sharing the directory never write over each other's changes.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return withDirectoryLock(this.dir, async () => {
      await this.reload();
      return work();
    });
  }

  /** Whether the kid is (or was) one of this keyring's keys. */
  knows(kid: string): boolean {
    const s = this.#state;
    return s.active === kid || s.pending?.kid === kid || s.retiring.some((key) => key.kid === kid) || s.retired.some((key) => key.kid === kid);
  }

  /**
   * Step 1 of a rotation: a new key is generated and written (0600) and recorded as
   * pending, with the time the current key will retire. Nothing signs with it yet.
   */
  async begin(kid: string, retireAfter: Date, requestedBy?: string): Promise<Ed25519SigningKey> {
    if (this.#state.pending !== undefined) {
      throw new RuntimeError('RUNTIME_KEY_INVALID', `a rotation to ${this.#state.pending.kid} is already under way; finish it first`, { details: { kid: this.#state.pending.kid } });
    }
    const key = await generateEd25519Key({ kid: Kid.parse(kid), extractable: true });
    await writeKey(this.dir, key, false);
    const imported = await readKey(this.dir, key.kid);
    await this.#save({
      ...this.#state,
      pending: { kid: key.kid, retire_after: retireAfter.toISOString(), ...(requestedBy === undefined ? {} : { requested_by: requestedBy }) },
    });
    this.#pendingKey = imported;
    return imported;
  }

  /** Step 2, once the log holds the new key: it signs from now on, and the old key is retiring. */
  async switchToPending(): Promise<{ readonly active: string; readonly retiring: RetiringKey }> {
    const pending = this.#state.pending;
    const key = this.#pendingKey;
    if (pending === undefined || key === undefined) throw new RuntimeError('RUNTIME_KEY_INVALID', 'no rotation is under way');
    const retiring: RetiringKey = { kid: this.#state.active, retire_after: pending.retire_after, replaced_by: pending.kid };
    const { pending: _done, ...rest } = this.#state;
    await this.#save({ ...rest, active: pending.kid, retiring: [...this.#state.retiring.filter((k) => k.kid !== retiring.kid), retiring] });
    this.#active = key;
    this.#pendingKey = undefined;
    return { active: key.kid, retiring };
  }

  /** Retiring keys whose `retire_after` is at or before `now`. */
  due(now: Date): RetiringKey[] {
    return this.#state.retiring.filter((key) => Date.parse(key.retire_after) <= now.getTime());
  }

  /** The log holds the key's revocation: it leaves the retiring list (its file stays, for audit and restore). */
  async markRetired(kid: string, at: Date): Promise<void> {
    if (!this.#state.retiring.some((key) => key.kid === kid)) return;
    await this.#save({
      ...this.#state,
      retiring: this.#state.retiring.filter((key) => key.kid !== kid),
      retired: [...this.#state.retired, { kid, retired_at: at.toISOString() }].slice(-1_024),
    });
  }

  async #save(state: KeyringState): Promise<void> {
    await writeState(this.dir, KeyringState.parse(state));
    this.#state = state;
  }
}

function parseState(text: string, statePath: string): KeyringState {
  try {
    return KeyringState.parse(JSON.parse(text));
  } catch (cause) {
    throw new RuntimeError('RUNTIME_KEY_INVALID', `${statePath} is not a keyring state; restore it from a backup (the keys beside it are intact)`, { cause });
  }
}

/**
 * Runs `work` holding `<dir>/keyring.lock`, created exclusively (`wx`) and
 * removed after; while `work` runs (a log append may wait out an outage) its
 * time is touched every 10 s. A waiter retries every 20 ms for up to 15 s
 * (RUNTIME_KEY_LOCKED after that); a lock untouched for 30 s was left by a
 * process that died holding it and is broken.
 */
async function withDirectoryLock<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const path = join(dir, KEYRING_LOCK_FILE);
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await openFile(path, 'wx', 0o600);
      try {
        // Who holds it, for an operator who finds it left behind.
        await handle.writeFile(JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() }));
      } catch (cause) {
        await unlink(path).catch(() => undefined);
        throw cause;
      } finally {
        await handle.close();
      }
      break;
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new RuntimeError('RUNTIME_KEY_INVALID', `cannot create the keyring lock ${path}: ${(cause as Error).message}`, { cause });
      }
      const held = await stat(path).catch(() => undefined);
      if (held !== undefined && Date.now() - held.mtimeMs > LOCK_STALE_MS) {
        await unlink(path).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline) {
        throw new RuntimeError('RUNTIME_KEY_LOCKED', `${path} is held by another process sharing the key directory; retry (a lock older than ${LOCK_STALE_MS / 1000} s is broken by itself)`, {
          details: { lock: path },
        });
      }
      await delay(LOCK_RETRY_MS);
    }
  }
  const touch = setInterval(() => {
    const now = new Date();
    void utimes(path, now, now).catch(() => undefined);
  }, LOCK_STALE_MS / 3);
  touch.unref();
  try {
    return await work();
  } finally {
    clearInterval(touch);
    await unlink(path).catch(() => undefined);
  }
}

async function readOptional(path: string, what: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new RuntimeError('RUNTIME_KEY_INVALID', `cannot read ${what} at ${path}: ${(cause as Error).message}`, { cause });
  }
}

async function importKey(text: string, path: string, extractable = false): Promise<Ed25519SigningKey> {
  try {
    return await importEd25519PrivateJwk(JSON.parse(text), { extractable });
  } catch (cause) {
    throw new RuntimeError('RUNTIME_KEY_INVALID', `the signing key at ${path} is not a private Ed25519 JWK; restore it from a backup`, { cause });
  }
}

const keyPath = (dir: string, kid: string) => join(dir, `${Kid.parse(kid)}.jwk.json`);

async function readKey(dir: string, kid: string): Promise<Ed25519SigningKey> {
  const path = keyPath(dir, kid);
  const text = await readOptional(path, 'the signing key');
  if (text === undefined) throw new RuntimeError('RUNTIME_KEY_INVALID', `the keyring names key ${kid} but ${path} is missing; restore it from a backup`, { details: { kid } });
  const key = await importKey(text, path);
  if (key.kid !== kid) throw new RuntimeError('RUNTIME_KEY_INVALID', `${path} holds key ${key.kid}, not ${kid}`, { details: { kid } });
  return key;
}

/** A private key file, 0600; never overwritten (`wx`), except a migrated key already there with the same content. */
async function writeKey(dir: string, key: Ed25519SigningKey, mayExist: boolean): Promise<void> {
  const path = keyPath(dir, key.kid);
  const text = JSON.stringify(await exportEd25519PrivateJwk(key));
  try {
    await writeFile(path, text, { mode: 0o600, flag: 'wx' });
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== 'EEXIST' || !mayExist || (await readFile(path, 'utf8')) !== text) {
      throw new RuntimeError('RUNTIME_KEY_INVALID', `cannot write the new key ${path}: ${(cause as Error).message}`, { cause });
    }
  }
  await chmod(path, 0o600);
}

async function writeState(dir: string, state: KeyringState): Promise<void> {
  const path = join(dir, KEYRING_STATE_FILE);
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, path);
}
