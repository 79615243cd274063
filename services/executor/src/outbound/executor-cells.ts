import { constants } from 'node:fs';
import { lstat, mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { hasErrorCode, WritError } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { ExecutorError } from '../application/executor-errors.js';
import type { ActionExecOptions, CellCloser, CellPort, UseRecords } from '../application/ports.js';
import { cellUserSpec, fenceUseRecord, readUseRecord, removeUseRecord, useRecordDir, type CellUser, type UseRecord } from './cells/index.js';
import type { CellEnvironment, CellExecResult, CellHandle, CellImage, CellPool, CellRuntime, WorkspaceSnapshot } from './cells/index.js';
import type { EgressNetworks } from './egress/index.js';
import { readGitHead, type GitHead } from './git-head.js';
import { DirectorySecretSource, redactBytes, redactText, type ResolvedSecret, type SecretSource } from './secrets/index.js';

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/** A user an exec may take (see cellUserSpec): never root's, never a system user. */
function validUser(user: CellUser): boolean {
  try {
    cellUserSpec(user);
    return true;
  } catch {
    return false;
  }
}

/**
 * The cell runtime plus the host-side checks file actions need. Paths are
 * always workspace-relative in what this reports: host paths stay here.
 */
export class ExecutorCells implements CellPort, CellCloser {
  readonly #runtime: CellRuntime;
  readonly #pool: CellPool | undefined;
  readonly #secrets: SecretSource;
  /**
   * The secrets each task's cell has held, by value: those its execs resolved and those `holdSecrets`
   * resolved for redaction (earlier uses', as the log says). Every output of the cell is redacted of
   * all of them and a changed file holding one is not kept as an artifact, so a secret an action left
   * in the workspace does not leave through a later action that reads the file back (invariant 6).
   * Values, not handles: a rotated secret's old value may still sit in the workspace.
   */
  readonly #cellSecrets = new Map<string, Map<string, ResolvedSecret>>();
  readonly #egress: EgressNetworks | undefined;
  /** The attestation of a task's latest egress exec, read before its cell went (see `environment`). */
  readonly #egressEnvironment = new Map<string, CellEnvironment>();

  /** `pool`: the warm pool of this executor (WRIT_CELL_POOL_SIZE), started by `startPool()`. */
  /** `secrets`: where granted secret handles are resolved at execution time (default: none can be, WRIT_SECRETS_DIR unset). */
  /** `egress`: per-action egress networks for grants naming hosts (absent: such an action fails EXECUTOR_EGRESS_UNAVAILABLE). */
  constructor(runtime: CellRuntime, pool?: CellPool, secrets: SecretSource = new DirectorySecretSource(undefined), egress?: EgressNetworks) {
    this.#runtime = runtime;
    this.#egress = egress;
    this.#pool = pool;
    this.#secrets = secrets;
  }

  get runtime(): CellRuntime {
    return this.#runtime;
  }

  get pool(): CellPool | undefined {
    return this.#pool;
  }

  /** Reaps the pooled cells a crashed process of this executor left, then fills the pool in the background. */
  async startPool(): Promise<void> {
    await this.#pool?.start();
  }

  /** Stops the refill and removes the unclaimed pooled cells (claimed ones are tasks' cells and stay). */
  async stopPool(): Promise<void> {
    await this.#pool?.stop();
  }

  ensureImage(): Promise<CellImage> {
    return this.#runtime.ensureImage();
  }

  openCell(taskId: string): Promise<CellHandle> {
    return this.#guard(() => this.#runtime.openCell(taskId));
  }

  snapshotWorkspace(taskId: string): Promise<WorkspaceSnapshot> {
    return this.#guard(() => this.#runtime.snapshotWorkspace(taskId));
  }

  /**
   * Runs one exec; `secretHandles` (already checked against the grant) are resolved now,
   * passed as `WRIT_SECRET_<HANDLE>` to this exec only, and their values are replaced by
   * `[redacted:<handle>]` in what comes back: stdout, stderr and any error message.
   */
  async exec(taskId: string, options: ActionExecOptions): Promise<CellExecResult> {
    const { secretHandles, egressHosts, ...cellOptions } = options;
    this.#egressEnvironment.delete(taskId);
    const secrets: readonly ResolvedSecret[] = secretHandles === undefined || secretHandles.length === 0 ? [] : await this.#secrets.resolve(secretHandles);
    const held = this.#held(taskId);
    for (const secret of secrets) held.set(secret.value, secret);
    // Redacted of every secret the cell has held, not only this exec's: the workspace may hold them.
    const redact = [...held.values()];
    const withEgress = egressHosts !== undefined && egressHosts.length > 0;
    const env = Object.fromEntries(secrets.map((secret) => [secret.env, secret.value]));
    const run = (extra: Readonly<Record<string, string>>) =>
      this.#guard(() => this.#runtime.exec(taskId, secrets.length === 0 && Object.keys(extra).length === 0 ? cellOptions : { ...cellOptions, env: { ...cellOptions.env, ...extra, ...env } }));
    let result: CellExecResult;
    try {
      result = withEgress ? await this.#execWithEgress(taskId, egressHosts, run) : await run({});
    } catch (error) {
      if (!hasErrorCode(error) || !(error instanceof Error)) throw error;
      const message = redactText(error.message, redact);
      if (message === error.message) throw error;
      throw new WritError(error.code, message);
    }
    if (redact.length === 0) return result;
    return {
      ...result,
      stdout: redactBytes(result.stdout, redact, result.stdout_truncated),
      stderr: redactBytes(result.stderr, redact, result.stderr_truncated),
    };
  }

  async holdSecrets(taskId: string, handles: readonly string[]): Promise<void> {
    const held = this.#held(taskId);
    for (const handle of new Set(handles)) {
      // One at a time: a handle the store no longer resolves (removed, renamed) must not hide the others.
      const resolved = await this.#secrets.resolve([handle]).catch(() => []);
      for (const secret of resolved) held.set(secret.value, secret);
    }
  }

  #held(taskId: string): Map<string, ResolvedSecret> {
    let held = this.#cellSecrets.get(taskId);
    if (held === undefined) {
      held = new Map();
      this.#cellSecrets.set(taskId, held);
    }
    return held;
  }

  /**
   * An exec whose grant names hosts: a fresh internal network with the egress proxy on its
   * gateway, the task's cell replaced by one on that network (same workspace, same
   * hardening, `NetworkMode` aside), the proxy variables in this exec's environment. Then
   * the attestation is read, and the cell and the network go: the task's next action gets
   * a new cell with no network. Nothing here runs the action when setup fails
   * (EXECUTOR_EGRESS_UNAVAILABLE).
   */
  async #execWithEgress(taskId: string, hosts: readonly string[], run: (env: Readonly<Record<string, string>>) => Promise<CellExecResult>): Promise<CellExecResult> {
    if (this.#egress === undefined) {
      throw new ExecutorError('EXECUTOR_EGRESS_UNAVAILABLE', `the grant names egress hosts but this executor has no egress configured; task ${taskId} ran nothing`, {
        details: { task_id: taskId },
      });
    }
    const session = await this.#egress.open(taskId, hosts);
    try {
      try {
        await this.#guard(() => this.#runtime.openCell(taskId, { network: session.network }));
      } catch (error) {
        throw new ExecutorError('EXECUTOR_EGRESS_UNAVAILABLE', `the cell of task ${taskId} could not be started on its egress network: ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
          details: { task_id: taskId, network: session.network },
        });
      }
      const result = await run(session.env);
      const environment = await this.#runtime.environment(taskId).catch(() => undefined);
      if (environment !== undefined) this.#egressEnvironment.set(taskId, { ...environment, egress_hosts: session.hosts });
      return result;
    } finally {
      // The networked cell lives for this action only; the network cannot go while a container is on it.
      await this.#runtime.closeCell(taskId, { scrub: false }).catch(() => undefined);
      await session.close();
    }
  }

  /** Removes the task's containers and keeps its workspace (`scrub: false`). */
  closeCell(taskId: string): Promise<{ readonly containers_removed: number }> {
    // Held again from the log by the task's next action (`holdSecrets`): nothing is lost with the memory.
    this.#cellSecrets.delete(taskId);
    return this.#guard(() => this.#runtime.closeCell(taskId, { scrub: false }));
  }

  environment(taskId: string): Promise<CellEnvironment> {
    const egress = this.#egressEnvironment.get(taskId);
    if (egress !== undefined) {
      this.#egressEnvironment.delete(taskId);
      return Promise.resolve(egress);
    }
    return this.#guard(() => this.#runtime.environment(taskId));
  }

  /**
   * Cell errors end up in `execution.completed.error.message`: where the cells live on
   * this host is not the log's business, so the cells root is replaced there (code and
   * cause are kept).
   */
  async #guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const root = this.#runtime.config.cellsRoot;
      if (!hasErrorCode(error) || !(error instanceof Error) || !error.message.includes(root)) throw error;
      throw new WritError(error.code, error.message.split(root).join('<cells-root>'), { cause: error });
    }
  }

  /**
   * Refuses a path reached through a symlink: every existing segment of
   * `relative` below the workspace must be a real directory or (last) a
   * non-link. Segments that do not exist yet are fine (a write creates them).
   */
  async assertPlainPath(taskId: string, relative: string): Promise<void> {
    const { workspaceDir } = this.#runtime.hostPaths(taskId);
    const segments = relative.split('/');
    let current = workspaceDir;
    for (const [index, segment] of segments.entries()) {
      current = path.join(current, segment);
      let stat;
      try {
        stat = await lstat(current);
      } catch (error) {
        if (errnoCode(error) === 'ENOENT') return;
        throw error;
      }
      const shown = segments.slice(0, index + 1).join('/');
      if (stat.isSymbolicLink()) {
        throw new ExecutorError('EXECUTOR_PATH_ESCAPE', `${relative} goes through the symlink ${shown}; file actions never follow symlinks`, {
          details: { path: relative, symlink: shown },
        });
      }
      if (index < segments.length - 1 && !stat.isDirectory()) return;
    }
  }

  gitHead(taskId: string, repoRelative: string): Promise<GitHead | undefined> {
    return readGitHead(this.#runtime.hostPaths(taskId).workspaceDir, repoRelative);
  }

  async readChangedFile(taskId: string, relative: string, sha256: string, maxBytes: number): Promise<Uint8Array | undefined> {
    const { workspaceDir } = this.#runtime.hostPaths(taskId);
    const segments = relative.split('/');
    if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) return undefined;
    let current = workspaceDir;
    for (const segment of segments.slice(0, -1)) {
      current = path.join(current, segment);
      const stat = await lstat(current).catch(() => undefined);
      if (stat === undefined || !stat.isDirectory()) return undefined;
    }
    let handle;
    try {
      // O_NOFOLLOW: a symlink put in the file's place since the snapshot is not followed.
      handle = await open(path.join(workspaceDir, relative), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch {
      return undefined;
    }
    try {
      const stat = await handle.stat();
      if (!stat.isFile() || stat.size > maxBytes) return undefined;
      const bytes = await handle.readFile();
      // Only the content the snapshot hashed is kept: anything else is not what the action left.
      if (sha256Hex(bytes) !== sha256) return undefined;
      // A file holding a secret the cell held stays in the workspace, never in an artifact.
      const secrets = this.#cellSecrets.get(taskId)?.values() ?? [];
      return [...secrets].some((secret) => Buffer.from(bytes).includes(Buffer.from(secret.value, 'utf8'))) ? undefined : bytes;
    } finally {
      await handle.close();
    }
  }
}

/** The per-use records of the runtime's cells, from the host (crash reconciliation). */
export class ExecutorUseRecords implements UseRecords {
  readonly #runtime: CellRuntime;

  constructor(runtime: CellRuntime) {
    this.#runtime = runtime;
  }

  read(taskId: string, useId: string, maxOutputBytes: number): Promise<UseRecord | undefined> {
    return readUseRecord(this.#runtime.hostPaths(taskId).usesDir, useId, maxOutputBytes);
  }

  async fence(taskId: string, useId: string): Promise<boolean> {
    const paths = this.#runtime.hostPaths(taskId);
    await mkdir(paths.usesDir, { mode: 0o711 }).catch((error: unknown) => {
      if (errnoCode(error) !== 'EEXIST') throw error;
    });
    return fenceUseRecord(paths.usesDir, useId);
  }

  remove(taskId: string, useId: string): Promise<void> {
    return removeUseRecord(this.#runtime.hostPaths(taskId).usesDir, useId);
  }

  /**
   * Sent as the owner of the use's record: the seat the action ran as (prepareUseRecord gave it
   * the directory), the one uid in the cell allowed to signal its processes (no CAP_KILL).
   */
  async killGroup(taskId: string, pgid: number, useId: string): Promise<void> {
    if (!Number.isSafeInteger(pgid) || pgid <= 1) return;
    const owner = await lstat(useRecordDir(this.#runtime.hostPaths(taskId).usesDir, useId)).then(
      (stat): CellUser | undefined => (stat.isDirectory() ? { uid: stat.uid, gid: stat.gid } : undefined),
      () => undefined,
    );
    const user = owner !== undefined && validUser(owner) ? owner : undefined;
    await this.#runtime.exec(taskId, { argv: ['kill', '-KILL', `-${pgid}`], timeoutMs: 5_000, maxOutputBytes: 1_024, ...(user === undefined ? {} : { user }) }).catch(() => undefined);
  }

  async hostsCell(taskId: string): Promise<boolean> {
    return lstat(this.#runtime.hostPaths(taskId).taskDir).then(
      (stat) => stat.isDirectory(),
      () => false,
    );
  }
}
