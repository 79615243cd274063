import { chown, lstat, mkdir, rm } from 'node:fs/promises';
import type { Duplex } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import Docker from 'dockerode';
import { CELL_GID, CELL_UID, resolveCellConfig, type CellConfig, type CellRuntimeOptions } from './cell-config.js';
import { CellError, dockerStatus, fromDockerError, type CellErrorCode } from './cell-errors.js';
import { CELL_LABELS, cellContainerSpec } from './cell-hardening.js';
import { inspectCellImage, type CellImage } from './cell-image.js';
import { assertHostCwd, assertTaskId, cellHostPaths, resolveCellCwd, type CellHostPaths } from './cell-paths.js';
import { CappedSink, DockerStreamDemuxer } from './exec-output.js';
import { KILLED_EXIT_CODE, supervisedArgv } from './exec-wrapper.js';
import { diffSnapshots, snapshotDirectory, type WorkspaceDiff, type WorkspaceSnapshot } from './workspace-snapshot.js';

/** A task's cell as `openCell` left it: running, hardened, with its workspace mounted. */
export interface CellHandle {
  readonly task_id: string;
  readonly container_id: string;
  readonly container_name: string;
  readonly image: string;
  readonly image_id: string;
  /** Host directory mounted at /workspace. */
  readonly workspace_dir: string;
  /** SHA-256 of the create request (see cell-hardening.ts), also the label `writ.cell.spec`. */
  readonly spec_sha256: string;
  /** True when an existing container of the task was reused (warm path, or restarted). */
  readonly reused: boolean;
}

export interface CellExecOptions {
  /** Program and arguments, run as given (no shell unless argv[0] is one). */
  readonly argv: readonly string[];
  /** Working directory relative to /workspace (or absolute under it). Default /workspace. */
  readonly cwd?: string;
  /** Wall-clock limit in whole milliseconds; the action's whole process group is killed at it. */
  readonly timeoutMs: number;
  /** Bytes kept of stdout and, separately, of stderr; the rest is read and dropped. */
  readonly maxOutputBytes: number;
  /** Bytes (or UTF-8 text) fed to the action's stdin, which is then closed. Default: /dev/null. */
  readonly stdin?: string | Uint8Array;
}

export interface CellExecResult {
  /** The action's exit status; 128 + n when killed by signal n (137 for SIGKILL). */
  readonly exit_code: number;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  readonly stdout_truncated: boolean;
  readonly stderr_truncated: boolean;
  /** Bytes the action wrote to each stream, including what was dropped. */
  readonly stdout_bytes: number;
  readonly stderr_bytes: number;
  /** The in-cell deadline fired and killed the action's process group. */
  readonly timed_out: boolean;
  /** Host wall-clock time from exec creation to the known exit status. */
  readonly duration_ms: number;
}

/** An action as the executor records it: the exec plus what it did to the workspace. */
export interface CellActionResult {
  readonly result: CellExecResult;
  readonly before: WorkspaceSnapshot;
  readonly after: WorkspaceSnapshot;
  readonly diff: WorkspaceDiff;
}

export interface CellMount {
  readonly type: string;
  readonly source: string;
  readonly destination: string;
  readonly rw: boolean;
  readonly propagation: string;
}

/** What Docker reports it actually applied to the task's container (the attestation). */
export interface CellEnvironment {
  readonly task_id: string;
  readonly container_id: string;
  readonly running: boolean;
  readonly image: string;
  readonly image_id: string;
  readonly spec_sha256: string | null;
  readonly network_mode: string;
  readonly readonly_rootfs: boolean;
  readonly privileged: boolean;
  readonly cap_drop: readonly string[];
  readonly cap_add: readonly string[];
  readonly security_opt: readonly string[];
  readonly user: string;
  readonly memory: number;
  readonly memory_swap: number;
  readonly pids_limit: number | null;
  readonly nano_cpus: number;
  readonly ipc_mode: string;
  readonly tmpfs: Readonly<Record<string, string>>;
  readonly mounts: readonly CellMount[];
  /** Names only: values never leave the runtime. */
  readonly env_names: readonly string[];
}

export interface CloseCellOptions {
  /** Also delete `<cellsRoot>/<taskId>` (the workspace) from the host. Default false. */
  readonly scrub?: boolean;
}

export interface CloseCellResult {
  readonly containers_removed: number;
  readonly workspace_scrubbed: boolean;
}

/** Ceiling of one exec's timeout: one day. */
const MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000;
/** Ceiling of the output kept per stream: 64 MiB. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
/** Interval of the exit-status poll after an exec's stream has ended. */
const EXIT_POLL_MS = 5;

const NOT_FOUND_STATUS: Partial<Record<number, CellErrorCode>> = { 404: 'CELL_NOT_FOUND', 409: 'CELL_NOT_FOUND' };

function validateExecOptions(options: CellExecOptions): void {
  const bad = (message: string, option: string) => new CellError('CELL_ARGUMENT_INVALID', message, { details: { option } });
  if (!Array.isArray(options.argv) || options.argv.length === 0) throw bad('argv must be a non-empty array of strings', 'argv');
  for (const arg of options.argv) {
    if (typeof arg !== 'string' || arg.includes('\0')) throw bad('every argv element must be a string without NUL bytes', 'argv');
  }
  if (options.argv[0] === '') throw bad('argv[0] must name a program', 'argv');
  if (!Number.isSafeInteger(options.timeoutMs) || options.timeoutMs < 1 || options.timeoutMs > MAX_TIMEOUT_MS) {
    throw bad(`timeoutMs must be a whole number of milliseconds in 1..${MAX_TIMEOUT_MS}`, 'timeoutMs');
  }
  if (options.stdin !== undefined && typeof options.stdin !== 'string' && !(options.stdin instanceof Uint8Array)) {
    throw bad('stdin must be a string or a Uint8Array', 'stdin');
  }
  if (!Number.isSafeInteger(options.maxOutputBytes) || options.maxOutputBytes < 0 || options.maxOutputBytes > MAX_OUTPUT_BYTES) {
    throw bad(`maxOutputBytes must be an integer in 0..${MAX_OUTPUT_BYTES}`, 'maxOutputBytes');
  }
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * The executor's Docker cells: one long-lived, hardened container per task, with
 * the task's host workspace as its only writable mount, driven through `docker exec`.
 * Docker is the source of truth (containers are found by name and labels), so a
 * restarted executor finds the cells it left running.
 */
export class CellRuntime {
  readonly config: CellConfig;
  readonly #docker: Docker;

  constructor(options: CellRuntimeOptions & { readonly docker?: Docker } = {}) {
    this.config = resolveCellConfig(options);
    this.#docker = options.docker ?? new Docker({ socketPath: this.config.socketPath });
  }

  containerName(taskId: string): string {
    return `${this.config.namePrefix}${assertTaskId(taskId)}`;
  }

  hostPaths(taskId: string): CellHostPaths {
    return cellHostPaths(this.config.cellsRoot, taskId);
  }

  /** The configured cell image as the local engine has it, or CELL_IMAGE_MISSING. Never pulls. */
  ensureImage(): Promise<CellImage> {
    return inspectCellImage(this.#docker, this.config.image);
  }

  /**
   * Returns the task's running cell, creating and starting it when needed. A running
   * container made from the same request (same image id, same hardening, same
   * workspace: label `writ.cell.spec`) is reused as is; a stopped one is started
   * again; one made any other way is removed and replaced.
   */
  async openCell(taskId: string): Promise<CellHandle> {
    assertTaskId(taskId);
    const image = await this.ensureImage();
    const paths = this.hostPaths(taskId);
    await this.#prepareWorkspace(paths);
    const name = this.containerName(taskId);
    const { spec, specSha256 } = cellContainerSpec({
      taskId,
      containerName: name,
      image: image.image,
      imageId: image.image_id,
      workspaceDir: paths.workspaceDir,
      config: this.config,
    });
    const handle = (containerId: string, reused: boolean): CellHandle => ({
      task_id: taskId,
      container_id: containerId,
      container_name: name,
      image: image.image,
      image_id: image.image_id,
      workspace_dir: paths.workspaceDir,
      spec_sha256: specSha256,
      reused,
    });

    // Two openCell calls may race on one task: the loser of the create sees 409 and looks again.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const existing = await this.#inspect(name);
      if (existing !== undefined) {
        if (existing.Config.Labels?.[CELL_LABELS.spec] === specSha256 && existing.Image === image.image_id) {
          if (!existing.State.Running) await this.#start(existing.Id, taskId, false);
          return handle(existing.Id, true);
        }
        await this.#remove(existing.Id);
      }
      let containerId: string;
      try {
        containerId = (await this.#docker.createContainer(spec)).id;
      } catch (error) {
        if (dockerStatus(error) === 409) continue;
        throw fromDockerError(error, `creating the cell of task ${taskId}`, 'CELL_START_FAILED', {}, { task_id: taskId });
      }
      await this.#start(containerId, taskId, true);
      return handle(containerId, false);
    }
    throw new CellError('CELL_START_FAILED', `the cell of task ${taskId} kept being replaced while it was being opened`, { details: { task_id: taskId } });
  }

  /**
   * Runs one action in the task's cell through `docker exec` (Tty off, stdout and
   * stderr demultiplexed). The action runs under the in-cell supervisor
   * (exec-wrapper.ts): at `timeoutMs` its whole process group is SIGKILLed and the
   * result says `timed_out`. If the exec is still not over `hostGraceMs` later,
   * the host restarts the cell's container and throws CELL_EXEC_TIMEOUT.
   */
  async exec(taskId: string, options: CellExecOptions): Promise<CellExecResult> {
    assertTaskId(taskId);
    validateExecOptions(options);
    const cwd = resolveCellCwd(options.cwd);
    await assertHostCwd(this.hostPaths(taskId).workspaceDir, cwd);
    const container = this.#docker.getContainer(this.containerName(taskId));
    const withStdin = options.stdin !== undefined;
    const what = `exec in the cell of task ${taskId}`;
    const startedAt = performance.now();
    const deadline = startedAt + options.timeoutMs + this.config.hostGraceMs;

    let exec: Docker.Exec;
    let stream: Duplex;
    try {
      exec = await container.exec({
        Cmd: supervisedArgv(options.argv, options.timeoutMs),
        AttachStdin: withStdin,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        Privileged: false,
        User: `${CELL_UID}:${CELL_GID}`,
        WorkingDir: cwd.containerPath,
      });
      stream = (await exec.start({ hijack: true, stdin: withStdin })) as Duplex;
    } catch (error) {
      throw fromDockerError(error, what, 'CELL_EXEC_FAILED', NOT_FOUND_STATUS, { task_id: taskId });
    }

    const stdout = new CappedSink(options.maxOutputBytes);
    const stderr = new CappedSink(options.maxOutputBytes);
    const demuxer = new DockerStreamDemuxer(stdout, stderr);
    const outcome = await new Promise<'ended' | 'deadline' | CellError>((resolve) => {
      let settled = false;
      const settle = (value: 'ended' | 'deadline' | CellError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      };
      const timer = setTimeout(() => settle('deadline'), Math.max(0, deadline - performance.now()));
      stream.on('data', (chunk: Buffer) => {
        try {
          demuxer.push(chunk);
        } catch (error) {
          settle(fromDockerError(error, what, 'CELL_EXEC_FAILED'));
        }
      });
      // Docker closes the stream once the output is complete; the exit status (polled
      // below) is what proves the exec is over.
      const ended = () => settle(demuxer.atFrameBoundary ? 'ended' : new CellError('CELL_EXEC_FAILED', `${what}: the output stream ended inside a frame`));
      stream.on('end', ended);
      stream.on('close', ended);
      stream.on('error', (error: Error) => {
        // The action may exit without reading its stdin: a write error then is not a failure.
        if (withStdin && (errnoCode(error) === 'EPIPE' || errnoCode(error) === 'ECONNRESET')) return;
        settle(fromDockerError(error, what, 'CELL_EXEC_FAILED'));
      });
      if (withStdin) stream.end(typeof options.stdin === 'string' ? Buffer.from(options.stdin, 'utf8') : options.stdin);
    });

    if (outcome === 'deadline') throw await this.#abandonExec(taskId, stream, options, stdout, stderr);
    if (outcome instanceof CellError) {
      stream.destroy();
      throw outcome;
    }

    // The stream can end a moment before Docker records the exit status.
    let exitCode: number | null = null;
    for (;;) {
      let info: Docker.ExecInspectInfo;
      try {
        info = await exec.inspect();
      } catch (error) {
        throw fromDockerError(error, what, 'CELL_EXEC_FAILED', NOT_FOUND_STATUS, { task_id: taskId });
      }
      if (!info.Running) {
        exitCode = info.ExitCode;
        break;
      }
      if (performance.now() > deadline) throw await this.#abandonExec(taskId, stream, options, stdout, stderr);
      await delay(EXIT_POLL_MS);
    }
    const durationMs = performance.now() - startedAt;
    if (exitCode === null) throw new CellError('CELL_EXEC_FAILED', `${what}: Docker reported no exit status`, { details: { task_id: taskId } });
    return {
      exit_code: exitCode,
      stdout: stdout.bytes(),
      stderr: stderr.bytes(),
      stdout_truncated: stdout.truncated,
      stderr_truncated: stderr.truncated,
      stdout_bytes: stdout.seenBytes,
      stderr_bytes: stderr.seenBytes,
      // The in-cell timer starts after the host's clock, so a kill by it is always past timeoutMs here.
      timed_out: exitCode === KILLED_EXIT_CODE && durationMs >= options.timeoutMs,
      duration_ms: Math.round(durationMs * 1000) / 1000,
    };
  }

  /** Snapshot of the task's workspace on the host (see workspace-snapshot.ts). */
  snapshotWorkspace(taskId: string): Promise<WorkspaceSnapshot> {
    return snapshotDirectory(this.hostPaths(taskId).workspaceDir);
  }

  /** An action as recorded: snapshot, exec, snapshot, diff. */
  async runAction(taskId: string, options: CellExecOptions): Promise<CellActionResult> {
    const before = await this.snapshotWorkspace(taskId);
    const result = await this.exec(taskId, options);
    const after = await this.snapshotWorkspace(taskId);
    return { result, before, after, diff: diffSnapshots(before, after) };
  }

  /**
   * Removes every container of the task (by name and by label). The workspace stays
   * unless `scrub`, which deletes `<cellsRoot>/<taskId>` and checks it is gone.
   * Closing a task that has no cell is not an error.
   */
  async closeCell(taskId: string, options: CloseCellOptions = {}): Promise<CloseCellResult> {
    assertTaskId(taskId);
    const ids = new Set<string>();
    try {
      const labelled = await this.#docker.listContainers({
        all: true,
        filters: { label: [`${CELL_LABELS.cell}=1`, `${CELL_LABELS.taskId}=${taskId}`] },
      });
      for (const container of labelled) ids.add(container.Id);
    } catch (error) {
      throw fromDockerError(error, `listing the containers of task ${taskId}`, 'CELL_DOCKER_UNAVAILABLE');
    }
    const named = await this.#inspect(this.containerName(taskId));
    if (named !== undefined) ids.add(named.Id);
    let removed = 0;
    for (const id of ids) if (await this.#remove(id)) removed += 1;

    if (options.scrub !== true) return { containers_removed: removed, workspace_scrubbed: false };
    const { taskDir } = this.hostPaths(taskId);
    try {
      await rm(taskDir, { recursive: true, force: true, maxRetries: 3 });
      await lstat(taskDir).then(
        () => {
          throw new CellError('CELL_SCRUB_FAILED', `${taskDir} still exists after scrubbing`);
        },
        (error: unknown) => {
          if (errnoCode(error) !== 'ENOENT') throw error;
        },
      );
    } catch (error) {
      if (error instanceof CellError) throw error;
      throw new CellError('CELL_SCRUB_FAILED', `could not delete the workspace of task ${taskId} at ${taskDir}`, { cause: error, details: { task_id: taskId } });
    }
    return { containers_removed: removed, workspace_scrubbed: true };
  }

  /** What Docker says it applied to the task's container, read back from `inspect`. */
  async environment(taskId: string): Promise<CellEnvironment> {
    const info = await this.#inspect(this.containerName(taskId));
    if (info === undefined) {
      throw new CellError('CELL_NOT_FOUND', `task ${taskId} has no cell: call openCell first`, { details: { task_id: taskId } });
    }
    const host = info.HostConfig;
    return {
      task_id: taskId,
      container_id: info.Id,
      running: info.State.Running,
      image: info.Config.Image,
      image_id: info.Image,
      spec_sha256: info.Config.Labels?.[CELL_LABELS.spec] ?? null,
      network_mode: host.NetworkMode ?? '',
      readonly_rootfs: host.ReadonlyRootfs === true,
      privileged: host.Privileged === true,
      cap_drop: (host.CapDrop as string[] | null) ?? [],
      cap_add: (host.CapAdd as string[] | null) ?? [],
      security_opt: (host.SecurityOpt as string[] | null) ?? [],
      user: info.Config.User,
      memory: host.Memory ?? 0,
      memory_swap: host.MemorySwap ?? 0,
      pids_limit: host.PidsLimit ?? null,
      nano_cpus: host.NanoCpus ?? 0,
      ipc_mode: host.IpcMode ?? '',
      tmpfs: host.Tmpfs ?? {},
      mounts: (info.Mounts ?? []).map((mount) => ({
        type: mount.Type ?? '',
        source: mount.Source,
        destination: mount.Destination,
        rw: mount.RW,
        propagation: mount.Propagation,
      })),
      env_names: (info.Config.Env ?? []).map((entry) => entry.slice(0, Math.max(0, entry.indexOf('=')))),
    };
  }

  /** `<cellsRoot>/<taskId>/workspace`, owned by the cell user, reached through no symlink. */
  async #prepareWorkspace(paths: CellHostPaths): Promise<void> {
    try {
      await mkdir(this.config.cellsRoot, { recursive: true, mode: 0o711 });
      for (const [dir, mode] of [
        [paths.taskDir, 0o700],
        [paths.workspaceDir, 0o750],
      ] as const) {
        await mkdir(dir, { mode }).catch((error: unknown) => {
          if (errnoCode(error) !== 'EEXIST') throw error;
        });
        const stat = await lstat(dir);
        if (!stat.isDirectory()) {
          throw new CellError('CELL_START_FAILED', `${dir} exists but is not a directory (symlinks are refused)`, { details: { path: dir } });
        }
      }
      const stat = await lstat(paths.workspaceDir);
      if (stat.uid !== CELL_UID || stat.gid !== CELL_GID) await chown(paths.workspaceDir, CELL_UID, CELL_GID);
    } catch (error) {
      if (error instanceof CellError) throw error;
      throw new CellError('CELL_START_FAILED', `could not prepare the workspace ${paths.workspaceDir} (owned by ${CELL_UID}:${CELL_GID}; chown needs root)`, {
        cause: error,
        details: { workspace: paths.workspaceDir },
      });
    }
  }

  async #inspect(name: string): Promise<Docker.ContainerInspectInfo | undefined> {
    try {
      return await this.#docker.getContainer(name).inspect();
    } catch (error) {
      if (dockerStatus(error) === 404) return undefined;
      throw fromDockerError(error, `inspecting container ${name}`, 'CELL_DOCKER_UNAVAILABLE');
    }
  }

  /** True when a container was removed, false when it was already gone. */
  async #remove(id: string): Promise<boolean> {
    try {
      await this.#docker.getContainer(id).remove({ force: true, v: true });
      return true;
    } catch (error) {
      if (dockerStatus(error) === 404) return false;
      // 409: removal already in progress (another closeCell); it will be gone.
      if (dockerStatus(error) === 409) return false;
      throw fromDockerError(error, `removing container ${id}`, 'CELL_DOCKER_UNAVAILABLE');
    }
  }

  async #start(id: string, taskId: string, created: boolean): Promise<void> {
    try {
      await this.#docker.getContainer(id).start();
      const info = await this.#docker.getContainer(id).inspect();
      if (!info.State.Running) {
        throw new CellError('CELL_START_FAILED', `the cell of task ${taskId} stopped right after it started (exit ${info.State.ExitCode}${info.State.Error ? `: ${info.State.Error}` : ''})`, {
          details: { task_id: taskId, exit_code: info.State.ExitCode },
        });
      }
    } catch (error) {
      // A container we just created and could not start is residue: remove it.
      if (created) await this.#remove(id).catch(() => false);
      throw fromDockerError(error, `starting the cell of task ${taskId}`, 'CELL_START_FAILED', { 304: 'CELL_START_FAILED' }, { task_id: taskId });
    }
  }

  /**
   * The host-side deadline passed: something in the cell outlived the in-cell kill
   * and holds the exec open. Restarting the container kills every process in it
   * (PID 1 included); the workspace is a bind mount and stays as it is.
   */
  async #abandonExec(taskId: string, stream: Duplex, options: CellExecOptions, stdout: CappedSink, stderr: CappedSink): Promise<CellError> {
    stream.destroy();
    let restarted = true;
    let restartError: unknown;
    try {
      await this.#docker.getContainer(this.containerName(taskId)).restart({ t: 0 });
    } catch (error) {
      restarted = false;
      restartError = error;
    }
    return new CellError(
      'CELL_EXEC_TIMEOUT',
      `exec in the cell of task ${taskId} was still running ${this.config.hostGraceMs} ms after its ${options.timeoutMs} ms timeout; ` +
        (restarted ? 'the cell was restarted to stop it' : 'restarting the cell failed as well'),
      {
        cause: restartError,
        details: {
          task_id: taskId,
          timeout_ms: options.timeoutMs,
          host_grace_ms: this.config.hostGraceMs,
          cell_restarted: restarted,
          stdout_bytes: stdout.seenBytes,
          stderr_bytes: stderr.seenBytes,
        },
      },
    );
  }
}
