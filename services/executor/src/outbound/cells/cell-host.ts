import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Id } from '@writ/contracts';
import { CELL_DIRS, CELL_FILES } from '@writ/kernel';
import { ExecutorError } from '../../application/executor-errors.js';
import type { CellHostPort, CheckpointRecord, RestoreOptions } from '../../application/ports.js';
import { CELL_HARNESS_USER, CELL_WORKSPACE, cellUserSpec, type CellUser } from './cell-config.js';
import {
  appendHarnessLine,
  clearRestorableAreas,
  ensureCellHomeBase,
  ensureParticipantHome,
  participantHomeOwner,
  participantHomes,
  projectEntries,
  removeParticipantHome,
  writeHarnessFile,
} from './cell-home.js';
import type { CellRuntime } from './cell-runtime.js';
import { joinTarballs, paxGlobalComment, TarballError } from './tarball.js';

export interface CellHostOptions {
  /** Largest checkpoint tarball (it travels over the exec stream and is held in memory once). */
  readonly checkpointMaxBytes: number;
  /** Wall clock of one capture or restore inside the cell. */
  readonly checkpointTimeoutMs: number;
}

/** `<cellsRoot>/.scrubbing/<cell_id>`: a scrub in progress (a task id never holds a dot, so this is never a cell). */
const SCRUBBING_DIR = '.scrubbing';
const SHARED = CELL_DIRS.shared.replace(/\/$/, '');
const HOME = CELL_DIRS.home.replace(/\/$/, '');
/** Output kept of a restore's tar (its error messages). */
const RESTORE_OUTPUT_BYTES = 64 * 1024;

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

function checkpointFailed(message: string, details: Record<string, unknown>, cause?: unknown): ExecutorError {
  return new ExecutorError('EXECUTOR_CHECKPOINT_FAILED', message, { cause, details });
}

/** Member names of a tarball, listed (never extracted) by the host's tar. */
async function listTarball(bytes: Uint8Array): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('tar', ['-tf', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => reject(checkpointFailed(`the checkpoint could not be listed: ${error.message} (is tar installed on the host?)`, {}, error)));
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8').split('\n').filter((line) => line !== ''));
      else reject(checkpointFailed(`the checkpoint is not a readable tarball: ${Buffer.concat(err).toString('utf8').trim().slice(0, 300)}`, { exit_code: code }));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(bytes);
  });
}

/** Whether `user` is one an exec may run as (a seat's or the harness's, never root's). */
function isCellUser(user: CellUser): boolean {
  try {
    cellUserSpec(user);
    return true;
  } catch {
    return false;
  }
}

/** `./a/b` → `a`. */
function firstSegment(name: string): string {
  return name.replace(/^(\.\/)+/, '').split('/')[0] ?? '';
}

/**
 * The executor's host side of its cells (`CellHostPort`): CELL_HOME on disk (cell-home.ts),
 * the container through the `CellRuntime`, and checkpoints captured and restored by the
 * cell's own busybox tar, inside the running cell as the cell user: the host never
 * extracts (nor reads as root) a tree the cell controls. The host's own tar only lists a
 * tarball's member names.
 */
export class CellHost implements CellHostPort {
  readonly #runtime: CellRuntime;
  readonly #options: CellHostOptions;

  constructor(runtime: CellRuntime, options: CellHostOptions) {
    this.#runtime = runtime;
    this.#options = options;
  }

  #home(cellId: string): string {
    return this.#runtime.hostPaths(cellId).workspaceDir;
  }

  #scrubbingDir(): string {
    return path.join(this.#runtime.config.cellsRoot, SCRUBBING_DIR);
  }

  async holds(cellId: string): Promise<boolean> {
    return lstat(path.join(this.#home(cellId), CELL_FILES.metadata)).then(
      (stat) => stat.isFile(),
      () => false,
    );
  }

  async localCells(): Promise<readonly string[]> {
    const root = this.#runtime.config.cellsRoot;
    const names = await readdir(root).catch((error: unknown) => {
      if (errnoCode(error) === 'ENOENT') return [] as string[];
      throw error;
    });
    const held: string[] = [];
    for (const name of names) if (Id.safeParse(name).success && (await this.holds(name))) held.push(name);
    const scrubbing = await readdir(this.#scrubbingDir()).catch(() => [] as string[]);
    return [...new Set([...held, ...scrubbing.filter((name) => Id.safeParse(name).success)])].sort();
  }

  async incarnation(cellId: string): Promise<number | null> {
    try {
      const file = path.join(this.#home(cellId), CELL_FILES.metadata);
      const stat = await lstat(file);
      if (!stat.isFile() || stat.uid !== 0) return null;
      const seq = (JSON.parse(await readFile(file, 'utf8')) as { spawn_seq?: unknown }).spawn_seq;
      return typeof seq === 'number' && Number.isSafeInteger(seq) ? seq : null;
    } catch {
      return null;
    }
  }

  async open(cellId: string): Promise<void> {
    await this.#runtime.openCell(cellId);
  }

  stop(cellId: string): Promise<boolean> {
    return this.#runtime.stopCell(cellId);
  }

  ensureHome(cellId: string, participantId: string, owner: CellUser): Promise<void> {
    cellUserSpec(owner);
    return ensureParticipantHome(this.#home(cellId), Id.parse(participantId), owner);
  }

  removeHome(cellId: string, participantId: string): Promise<void> {
    return removeParticipantHome(this.#home(cellId), Id.parse(participantId));
  }

  writeMetadata(cellId: string, metadata: Readonly<Record<string, unknown>>): Promise<void> {
    return writeHarnessFile(this.#home(cellId), CELL_FILES.metadata, `${JSON.stringify(metadata, null, 2)}\n`);
  }

  appendSpawnLog(cellId: string, entry: Readonly<Record<string, unknown>>): Promise<void> {
    return appendHarnessLine(this.#home(cellId), CELL_FILES.spawn_log, JSON.stringify(entry));
  }

  appendDecision(cellId: string, entry: Readonly<Record<string, unknown>>): Promise<void> {
    return appendHarnessLine(this.#home(cellId), CELL_FILES.decisions, JSON.stringify(entry));
  }

  writeCheckpointRecord(cellId: string, record: CheckpointRecord): Promise<void> {
    return writeHarnessFile(this.#home(cellId), `${CELL_DIRS.checkpoints}${Id.parse(record.checkpoint_id)}.json`, `${JSON.stringify(record)}\n`);
  }

  /**
   * The checkpoint tarball: `tar -cf -` of the project's entries and `shared/` by the harness
   * user (the cell group reads them), then of each `home/<participant>/` by the user that owns
   * it (no uid in the cell reads every home), joined on the host into one archive (nothing is
   * extracted or read as root). `.lazarus/` is the harness's and is rebuilt, not restored.
   * A pax global comment first names the cell and a random nonce: the bytes are this
   * checkpoint's alone, so no task or other cell ever stores the same object, and deleting
   * it after the archive retention takes nothing from anyone else.
   */
  async captureCheckpoint(cellId: string): Promise<Uint8Array> {
    const home = this.#home(cellId);
    let budget = this.#options.checkpointMaxBytes;
    const capture = async (members: readonly string[], user: CellUser): Promise<Uint8Array> => {
      const result = await this.#runtime.exec(cellId, {
        argv: ['tar', '-cf', '-', ...members.map((name) => `./${name}`)],
        cwd: CELL_WORKSPACE,
        timeoutMs: this.#options.checkpointTimeoutMs,
        maxOutputBytes: budget,
        user,
      });
      if (result.stdout_truncated) {
        throw checkpointFailed(`the checkpoint of cell ${cellId} is larger than ${this.#options.checkpointMaxBytes} bytes (WRIT_CELL_CHECKPOINT_MAX_BYTES)`, { cell_id: cellId, bytes: result.stdout_bytes });
      }
      if (result.exit_code !== 0 || result.timed_out) {
        throw checkpointFailed(`tar in cell ${cellId} exited ${result.exit_code}${result.timed_out ? ' (timed out)' : ''}: ${result.stderr.toString('utf8').trim().slice(0, 300)}`, {
          cell_id: cellId,
          exit_code: result.exit_code,
        });
      }
      budget -= result.stdout.length;
      return new Uint8Array(result.stdout);
    };
    const parts = [await capture([...(await projectEntries(home)), SHARED], CELL_HARNESS_USER)];
    for (const name of await participantHomes(home)) {
      const owner = await participantHomeOwner(home, name);
      // Only a home the harness made and handed to a seat (never root's, never a link) is read, as that seat.
      if (owner === undefined || !isCellUser(owner)) throw checkpointFailed(`home/${name} of cell ${cellId} is not a seat's home directory`, { cell_id: cellId, participant_id: name });
      parts.push(await capture([`${HOME}/${name}`], owner));
    }
    try {
      return joinTarballs(parts, paxGlobalComment(`writ checkpoint of cell ${cellId}, nonce ${randomBytes(16).toString('hex')}`));
    } catch (error) {
      if (error instanceof TarballError) throw checkpointFailed(`the checkpoint of cell ${cellId} could not be assembled: ${error.message}`, { cell_id: cellId }, error);
      throw error;
    }
  }

  /**
   * Empties the project and the shared area, then extracts the tarball in the running cell:
   * the project and `shared/` as the harness user, and (`homes`) each home of a seat named in
   * `owners`, emptied and made again first, as that seat's user. A substitute (`homes: false`)
   * never inherits a home.
   */
  async restoreCheckpoint(cellId: string, tarball: Uint8Array, options: RestoreOptions): Promise<void> {
    const home = this.#home(cellId);
    const names = await listTarball(tarball);
    const dotted = names.some((name) => name.startsWith('./'));
    const tops = new Map<string, string>();
    const homes = new Set<string>();
    for (const name of names) {
      const top = firstSegment(name);
      if (top === '' || top === '.lazarus') continue;
      if (top === HOME) {
        const owner = name.replace(/^(\.\/)+/, '').split('/')[1];
        if (owner !== undefined && owner !== '' && Id.safeParse(owner).success) homes.add(owner);
        continue;
      }
      // The member name as the tarball spells it (with its `./`), so that tar selects it.
      if (!tops.has(top)) tops.set(top, name.startsWith('./') ? `./${top}` : top);
    }
    await clearRestorableAreas(home);
    await ensureCellHomeBase(home);
    const extract = async (selected: readonly string[], user: CellUser): Promise<void> => {
      const result = await this.#runtime.exec(cellId, {
        argv: ['tar', '-xof', '-', ...selected],
        cwd: CELL_WORKSPACE,
        stdin: tarball,
        timeoutMs: this.#options.checkpointTimeoutMs,
        maxOutputBytes: RESTORE_OUTPUT_BYTES,
        user,
      });
      if (result.exit_code !== 0 || result.timed_out) {
        throw checkpointFailed(`restoring a checkpoint in cell ${cellId} failed (tar exited ${result.exit_code}): ${result.stderr.toString('utf8').trim().slice(0, 300)}`, {
          cell_id: cellId,
          exit_code: result.exit_code,
        });
      }
    };
    if (tops.size > 0) await extract([...tops.values()], CELL_HARNESS_USER);
    if (!options.homes) return;
    for (const participantId of homes) {
      const owner = options.owners?.[participantId];
      if (owner === undefined) continue;
      await removeParticipantHome(home, participantId);
      await ensureParticipantHome(home, participantId, owner);
      await extract([dotted ? `./${HOME}/${participantId}` : `${HOME}/${participantId}`], owner);
    }
  }

  async markScrubbing(cellId: string): Promise<void> {
    await mkdir(this.#scrubbingDir(), { recursive: true, mode: 0o700 });
    await writeFile(path.join(this.#scrubbingDir(), Id.parse(cellId)), '', { mode: 0o600 });
  }

  async clearScrubbing(cellId: string): Promise<void> {
    await rm(path.join(this.#scrubbingDir(), Id.parse(cellId)), { force: true });
    // The marker directory goes with its last marker: nothing of a scrubbed cell stays on the host.
    await rmdir(this.#scrubbingDir()).catch(() => undefined);
  }

  async scrub(cellId: string): Promise<void> {
    await this.#runtime.closeCell(cellId, { scrub: true });
  }
}
