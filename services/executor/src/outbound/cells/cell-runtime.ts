import { lstat, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import Docker from 'dockerode';
import { CELL_GID, CELL_HARNESS_USER, CELL_UID, cellUserSpec, resolveCellConfig, type CellConfig, type CellRuntimeOptions, type CellUser } from './cell-config.js';
import { CellError, dockerStatus, fromDockerError, type CellErrorCode } from './cell-errors.js';
import { CELL_ENV, CELL_LABELS, CELL_POOL_LABELS, cellContainerSpec } from './cell-hardening.js';
import { inspectCellImage, type CellImage } from './cell-image.js';
import { assertHostCwd, assertTaskId, cellHostPaths, resolveCellCwd, type CellHostPaths } from './cell-paths.js';
import { CappedSink, DockerStreamDemuxer } from './exec-output.js';
import { CellSupervisor, type SupervisedOutcome } from './cell-supervisor.js';
import { CELL_USES_DIR, FENCED_EXIT_CODE, KILLED_EXIT_CODE, recordedArgv, supervisedArgv } from './exec-wrapper.js';
import { ensureCellHomeBase } from './cell-home.js';
import { prepareUseRecord, readUseRecord } from './use-record.js';
import { mountWorkspaceImage, moveWorkspaceMount, releaseWorkspaceMounts, workspaceImagePath } from './workspace-quota.js';
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
  /** True when the container came from the warm pool (claimed now, or earlier and reused). */
  readonly pooled?: boolean;
}

/** A started, hardened cell of the warm pool, bound to no task yet (see cell-pool.ts). */
export interface PooledCell {
  readonly container_id: string;
  readonly container_name: string;
  readonly image_id: string;
  readonly spec_sha256: string;
  /** `<cellsRoot>/.pool/<owner>/<slot>`. */
  readonly slot_dir: string;
  /** `<slot_dir>/workspace`: the container's bind mount source, empty until claimed. */
  readonly workspace_dir: string;
}

/** Where the pool takes its cells from (the `CellPool`). */
export interface PooledCellSource {
  take(): PooledCell | undefined;
}

/**
 * `<cellsRoot>/<taskId>/cell.json`: the durable record that the task's container (found
 * by name, renamed at claim) is a pooled cell bound to the task. Written last when a cell
 * is claimed: a container named for the task without a matching binding is residue of a
 * claim that did not finish, and is replaced.
 */
interface CellBinding {
  readonly version: 1;
  readonly task_id: string;
  readonly container_id: string;
  readonly container_name: string;
  readonly image_id: string;
  readonly spec_sha256: string;
  readonly pool_owner: string;
  /** The mount source Docker still reports (the workspace was moved from there). */
  readonly pool_workspace: string;
}

/** Directory of the pooled cells' workspaces under the cells root (a task id never has a dot). */
export const CELL_POOL_DIR = '.pool';
const BINDING_FILE = 'cell.json';
/** The harness's part of CELL_HOME: never in an action's diff (see cell-home.ts). */
const HARNESS_ONLY: ReadonlySet<string> = new Set(['.lazarus']);

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
  /**
   * Keep a durable per-use record (needs `useRecords`): the wrapper writes exit status and
   * capped output to `<cellsRoot>/<taskId>/uses/<useId>/`, and `onCreated` is awaited after
   * the exec is created and before it starts (the caller journals it there).
   */
  readonly record?: {
    readonly useId: string;
    readonly onCreated?: (exec: { readonly container_id: string; readonly exec_id: string }) => Promise<void>;
  };
  /**
   * Extra environment of this exec only (e.g. `WRIT_SECRET_<HANDLE>`): passed in the exec
   * request, never in the container's create spec, so `docker inspect` of the cell never
   * shows it and the next exec does not inherit it. Names must not override the cell's own.
   */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Who the exec runs as: the acting seat (application/cell-seats.ts `seatUser`), so its
   * home, its processes and its use record are its own. Default: the harness user 10001:10001.
   */
  readonly user?: CellUser;
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
  /** Egress: the grant's hosts the cell's proxy allowed (set by the egress path; absent: no network). */
  readonly egress_hosts?: readonly string[];
}

export interface OpenCellOptions {
  /**
   * Egress: create (or keep) the task's cell on this Docker network instead of `none`; a
   * cell of the task on another network (or none) is replaced, since the spec differs.
   */
  readonly network?: string;
}

/** Lower-case variables an exec may set: proxy settings most tools read only in lower case. */
const LOWER_CASE_EXEC_ENV = new Set(['http_proxy', 'https_proxy', 'no_proxy']);

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
/**
 * How long an opener waits for another opener's claim of a pooled cell to write its binding (a claim is
 * three renames and a file, but each is a Docker or disk call that a saturated host answers in seconds).
 */
const POOLED_CLAIM_GRACE_MS = 15_000;
/**
 * Rounds of the open loop when openers of one task race (a lost create, a claim taken): each round the
 * loser looks again, after a random pause that breaks the lockstep of two openers retrying together.
 */
const OPEN_ROUNDS = 8;
const OPEN_RETRY_PAUSE_MS = 200;
const BINDING_POLL_MS = 25;
/** How long a new in-cell supervisor may take to say it is ready. */
const SUPERVISOR_READY_MS = 10_000;
/** Interval of the record poll after a supervisor was lost mid-run. */
const SUPERVISOR_LOST_POLL_MS = 25;

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
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (!(/^[A-Z_][A-Z0-9_]*$/.test(name) || LOWER_CASE_EXEC_ENV.has(name)) || name in CELL_ENV || typeof value !== 'string' || value.includes('\0')) {
      throw bad(`env ${name} must be an upper-case name not set by the cell, with a string value without NUL bytes`, 'env');
    }
  }
  if (!Number.isSafeInteger(options.maxOutputBytes) || options.maxOutputBytes < 0 || options.maxOutputBytes > MAX_OUTPUT_BYTES) {
    throw bad(`maxOutputBytes must be an integer in 0..${MAX_OUTPUT_BYTES}`, 'maxOutputBytes');
  }
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

async function pathExists(target: string): Promise<boolean> {
  try {
    await lstat(target);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
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
  #pool: PooledCellSource | undefined;
  readonly #opening = new Map<string, Promise<void>>();
  /** The in-cell supervisors (cell-supervisor.ts) by task, then by exec user. */
  readonly #supervisors = new Map<string, Map<string, Promise<CellSupervisor>>>();

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

  /** Makes `openCell` of a new task take its cell from `source` (the warm pool) when it has one. */
  attachPool(source: PooledCellSource): void {
    this.#pool = source;
  }

  detachPool(source: PooledCellSource): void {
    if (this.#pool === source) this.#pool = undefined;
  }

  /**
   * Returns the task's running cell, creating and starting it when needed. A running
   * container made from the same request (same image id, same hardening, same
   * workspace: label `writ.cell.spec`) is reused as is, and so is a running pooled cell
   * that `<cellsRoot>/<taskId>/cell.json` binds to the task; a stopped one is started
   * again (a stopped pooled cell is replaced: its mount source has moved); one made any
   * other way is removed and replaced. A task without a cell and without a workspace
   * takes a cell of the warm pool when one is ready (see cell-pool.ts).
   */
  async openCell(taskId: string, options: OpenCellOptions = {}): Promise<CellHandle> {
    assertTaskId(taskId);
    // One open per task at a time in this process: a claim (rename, move, bind) is three steps.
    const previous = this.#opening.get(taskId) ?? Promise.resolve();
    const current = previous.then(
      () => this.#openCell(taskId, options),
      () => this.#openCell(taskId, options),
    );
    const tail = current.then(
      () => undefined,
      () => undefined,
    );
    this.#opening.set(taskId, tail);
    void tail.then(() => {
      if (this.#opening.get(taskId) === tail) this.#opening.delete(taskId);
    });
    return current;
  }

  async #openCell(taskId: string, options: OpenCellOptions = {}): Promise<CellHandle> {
    const paths = this.hostPaths(taskId);
    const name = this.containerName(taskId);
    // Two independent engine round trips before anything is decided: asked at once (a cold start is timed against a raw `docker run`).
    const [image, found] = await Promise.all([this.ensureImage(), this.#inspect(name)]);
    const { spec, specSha256 } = cellContainerSpec({
      taskId,
      containerName: name,
      image: image.image,
      imageId: image.image_id,
      workspaceDir: paths.workspaceDir,
      usesDir: paths.usesDir,
      ...(options.network === undefined ? {} : { network: options.network }),
      config: this.config,
    });
    const handle = (containerId: string, reused: boolean, pooledSpec?: string): CellHandle => ({
      task_id: taskId,
      container_id: containerId,
      container_name: name,
      image: image.image,
      image_id: image.image_id,
      workspace_dir: paths.workspaceDir,
      spec_sha256: pooledSpec ?? specSha256,
      reused,
      pooled: pooledSpec !== undefined,
    });

    // Two openCell calls may race on one task: the loser of the create sees 409 and looks again.
    for (let attempt = 0; attempt < OPEN_ROUNDS; attempt += 1) {
      if (attempt > 0) await delay(Math.random() * OPEN_RETRY_PAUSE_MS);
      const existing = attempt === 0 ? found : await this.#inspect(name);
      if (existing !== undefined) {
        if (existing.Config.Labels?.[CELL_LABELS.spec] === specSha256 && existing.Image === image.image_id) {
          await this.#prepareWorkspace(paths);
          if (!existing.State.Running) await this.#start(existing.Id, taskId, false);
          return handle(existing.Id, true);
        }
        if (options.network === undefined && existing.Config.Labels?.[CELL_POOL_LABELS.pool] === '1' && existing.State.Running && existing.Image === image.image_id) {
          const binding = await this.#awaitBinding(paths, existing.Id);
          if (binding?.container_id === existing.Id && existing.Config.Labels[CELL_LABELS.spec] === binding.spec_sha256) {
            await this.#prepareWorkspace(paths);
            return handle(existing.Id, true, binding.spec_sha256);
          }
        }
        this.#dropSupervisors(taskId);
        await this.#remove(existing.Id);
      }
      await this.#removeBinding(paths);
      // Pooled cells have no network: an egress cell is always created for its network.
      if (this.#pool !== undefined && options.network === undefined && !(await pathExists(paths.workspaceDir))) {
        const claimed = await this.#claimPooled(taskId, paths, name, image.image_id);
        if (claimed === 'taken') continue;
        if (claimed !== undefined) return handle(claimed.container_id, false, claimed.spec_sha256);
      }
      await this.#prepareWorkspace(paths);
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
   * Binds a ready pooled cell to the task: the container takes the task's name (Docker
   * refuses a duplicate name, so of two openers only one wins), its empty workspace moves
   * to the task's path (same file system: an atomic rename; the running container keeps
   * its mount), and the binding is written last. Undefined when the pool has nothing
   * usable (the caller opens a cold cell); 'taken' when the task's name was taken meanwhile.
   */
  async #claimPooled(taskId: string, paths: CellHostPaths, name: string, imageId: string): Promise<PooledCell | 'taken' | undefined> {
    let cell: PooledCell | undefined;
    for (;;) {
      cell = this.#pool?.take();
      if (cell === undefined) return undefined;
      // Made from an image the reference no longer names (the image was rebuilt): not this cell.
      if (cell.image_id === imageId) break;
      await this.removePooledCell(cell);
    }
    try {
      await this.#docker.getContainer(cell.container_id).rename({ name });
    } catch (error) {
      await this.removePooledCell(cell).catch(() => undefined);
      if (dockerStatus(error) === 409) return 'taken';
      if (dockerStatus(error) === 404) return undefined;
      throw fromDockerError(error, `binding a pooled cell to task ${taskId}`, 'CELL_START_FAILED', {}, { task_id: taskId });
    }
    try {
      await mkdir(this.config.cellsRoot, { recursive: true, mode: 0o711 });
      await mkdir(paths.taskDir, { mode: 0o700 }).catch((error: unknown) => {
        if (errnoCode(error) !== 'EEXIST') throw error;
      });
      if (!(await lstat(paths.taskDir)).isDirectory()) {
        throw new CellError('CELL_START_FAILED', `${paths.taskDir} exists but is not a directory (symlinks are refused)`, { details: { path: paths.taskDir } });
      }
      if (this.config.diskQuotaBytes > 0) {
        // A mount point cannot be renamed (EBUSY): the task's directory becomes a second mount of the
        // same file system (the one the running cell already has), the slot's mount is dropped, and
        // the image file follows it (the loop device holds the inode, not the path).
        await mkdir(paths.workspaceDir, { mode: 0o755 });
        const image = workspaceImagePath(paths.workspaceDir);
        if (await pathExists(image)) throw Object.assign(new Error(`${image} already exists`), { code: 'EEXIST' });
        await moveWorkspaceMount(cell.workspace_dir, paths.workspaceDir);
        await rename(workspaceImagePath(cell.workspace_dir), image);
      } else {
        // rename(2) never replaces a non-empty directory, and a workspace that appeared meanwhile is never empty-and-ours.
        await rename(cell.workspace_dir, paths.workspaceDir);
      }
      if (this.config.useRecords) await rename(path.join(cell.slot_dir, 'uses'), paths.usesDir);
      await this.#rmSlot(cell.slot_dir);
      await this.#writeBinding(paths, {
        version: 1,
        task_id: taskId,
        container_id: cell.container_id,
        container_name: name,
        image_id: cell.image_id,
        spec_sha256: cell.spec_sha256,
        pool_owner: path.basename(path.dirname(cell.slot_dir)),
        pool_workspace: cell.workspace_dir,
      });
    } catch (error) {
      await this.#remove(cell.container_id).catch(() => false);
      await this.#rmSlot(cell.slot_dir).catch(() => undefined);
      const code = errnoCode(error);
      if (code === 'EEXIST' || code === 'ENOTEMPTY') return undefined;
      if (error instanceof CellError) throw error;
      throw new CellError('CELL_START_FAILED', `could not bind a pooled cell to task ${taskId}`, { cause: error, details: { task_id: taskId } });
    }
    return cell;
  }

  /**
   * Creates and starts one pooled cell: the request of a task's cell (cell-hardening.ts)
   * with an empty task id, the pool's labels and name, and a fresh empty workspace.
   */
  async createPooledCell(owner: string, slot: string): Promise<PooledCell> {
    const image = await this.ensureImage();
    const ownerDir = path.join(this.config.cellsRoot, CELL_POOL_DIR, owner);
    const slotDir = path.join(ownerDir, slot);
    const workspaceDir = path.join(slotDir, 'workspace');
    // Per-use records (crash safety) live beside the workspace and move with it at claim.
    const usesDir = this.config.useRecords ? path.join(slotDir, 'uses') : undefined;
    const name = `${this.config.namePrefix}pool.${owner}.${slot}`;
    try {
      await mkdir(this.config.cellsRoot, { recursive: true, mode: 0o711 });
      await mkdir(ownerDir, { recursive: true, mode: 0o700 });
      await mkdir(slotDir, { mode: 0o700 });
      await mkdir(workspaceDir, { mode: 0o755 });
      if (this.config.diskQuotaBytes > 0) await mountWorkspaceImage(workspaceDir, this.config.diskQuotaBytes);
      // The participant-independent layout (cell-home.ts) is there before the container starts; homes come at claim.
      await ensureCellHomeBase(workspaceDir);
      if (usesDir !== undefined) await mkdir(usesDir, { mode: 0o711 });
    } catch (error) {
      await this.#rmSlot(slotDir).catch(() => undefined);
      if (error instanceof CellError) throw error;
      throw new CellError('CELL_START_FAILED', `could not prepare the pooled cell home ${workspaceDir} (root-owned layout; needs root)`, {
        cause: error,
        details: { workspace: workspaceDir },
      });
    }
    const { spec, specSha256 } = cellContainerSpec({
      taskId: '',
      containerName: name,
      image: image.image,
      imageId: image.image_id,
      workspaceDir,
      ...(usesDir === undefined ? {} : { usesDir }),
      config: {
        ...this.config,
        labels: { ...this.config.labels, [CELL_POOL_LABELS.pool]: '1', [CELL_POOL_LABELS.owner]: owner, [CELL_POOL_LABELS.root]: this.config.cellsRoot },
      },
    });
    let containerId: string;
    try {
      containerId = (await this.#docker.createContainer(spec)).id;
      await this.#start(containerId, `(pool ${owner}/${slot})`, true);
    } catch (error) {
      await this.#rmSlot(slotDir).catch(() => undefined);
      throw fromDockerError(error, `creating pooled cell ${name}`, 'CELL_START_FAILED');
    }
    return { container_id: containerId, container_name: name, image_id: image.image_id, spec_sha256: specSha256, slot_dir: slotDir, workspace_dir: workspaceDir };
  }

  /** Removes an unclaimed pooled cell and its directory. */
  async removePooledCell(cell: PooledCell): Promise<void> {
    await this.#remove(cell.container_id);
    await this.#rmSlot(cell.slot_dir);
  }

  /** Deletes a pool slot (or an owner's pool directory), unmounting its workspace image first. */
  async #rmSlot(dir: string): Promise<void> {
    if (this.config.diskQuotaBytes > 0) await releaseWorkspaceMounts(dir);
    await rm(dir, { recursive: true, force: true });
  }

  /**
   * Removes the owner's pooled cells that were never claimed (still under a pool name)
   * and the owner's pool directory. Claimed cells carry a task's name and are left alone.
   */
  async reapPool(owner: string): Promise<number> {
    let listed: Docker.ContainerInfo[];
    try {
      listed = await this.#docker.listContainers({
        all: true,
        filters: {
          label: [`${CELL_LABELS.cell}=1`, `${CELL_POOL_LABELS.pool}=1`, `${CELL_POOL_LABELS.owner}=${owner}`, `${CELL_POOL_LABELS.root}=${this.config.cellsRoot}`],
        },
      });
    } catch (error) {
      throw fromDockerError(error, `listing the pooled cells of ${owner}`, 'CELL_DOCKER_UNAVAILABLE');
    }
    const poolName = `/${this.config.namePrefix}pool.`;
    let removed = 0;
    for (const container of listed) {
      if (!container.Names.some((entry) => entry.startsWith(poolName))) continue;
      if (await this.#remove(container.Id)) removed += 1;
    }
    // Mounts are released whatever the current setting: a process with a quota may have left them.
    const ownerDir = path.join(this.config.cellsRoot, CELL_POOL_DIR, owner);
    await releaseWorkspaceMounts(ownerDir);
    await rm(ownerDir, { recursive: true, force: true });
    return removed;
  }

  async #readBinding(paths: CellHostPaths): Promise<CellBinding | undefined> {
    try {
      const parsed = JSON.parse(await readFile(path.join(paths.taskDir, BINDING_FILE), 'utf8')) as Partial<CellBinding>;
      return parsed.version === 1 && typeof parsed.container_id === 'string' && typeof parsed.spec_sha256 === 'string' ? (parsed as CellBinding) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The binding of a pooled cell that already carries the task's name. Another opener
   * (an executor of the same host) may be between the rename and the binding of its
   * claim: removing the cell then would make both openers fail in turn. So the binding
   * is awaited for a grace period; past it the cell is an orphan of a claim that died
   * midway, and the caller replaces it.
   */
  async #awaitBinding(paths: CellHostPaths, containerId: string): Promise<CellBinding | undefined> {
    const deadline = performance.now() + POOLED_CLAIM_GRACE_MS;
    for (;;) {
      const binding = await this.#readBinding(paths);
      if (binding !== undefined && binding.container_id === containerId) return binding;
      if (binding !== undefined || performance.now() >= deadline) return binding;
      await delay(BINDING_POLL_MS);
    }
  }

  async #writeBinding(paths: CellHostPaths, binding: CellBinding): Promise<void> {
    const file = path.join(paths.taskDir, BINDING_FILE);
    const temporary = `${file}.${binding.container_id.slice(0, 12)}.tmp`;
    await writeFile(temporary, `${JSON.stringify(binding)}\n`, { mode: 0o600, flush: true });
    await rename(temporary, file);
  }

  async #removeBinding(paths: CellHostPaths): Promise<void> {
    await rm(path.join(paths.taskDir, BINDING_FILE), { force: true });
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
    const record = options.record;
    const user = cellUserSpec(options.user);
    if (record !== undefined) {
      if (!this.config.useRecords) throw new CellError('CELL_ARGUMENT_INVALID', 'a recorded exec needs a runtime with useRecords', { details: { option: 'record' } });
      await prepareUseRecord(this.hostPaths(taskId).usesDir, record.useId, options.user ?? CELL_HARNESS_USER).catch((error: unknown) => {
        throw new CellError('CELL_ARGUMENT_INVALID', `the record directory of use ${record.useId} could not be prepared`, { cause: error, details: { option: 'record' } });
      });
      // Stdin and per-exec environment (secrets) travel only in a Docker exec request, never through the loop.
      if (this.config.supervisor && !withStdin && options.env === undefined) {
        // A loop that cannot start costs this action nothing: it gets its own Docker exec, as without the supervisor.
        const supervisor = await this.#supervisor(taskId, user).catch((error: unknown) => {
          if (error instanceof CellError && error.code === 'CELL_NOT_FOUND') throw error;
          return undefined;
        });
        if (supervisor !== undefined) return this.#execSupervised(taskId, options, { useId: record.useId, onCreated: record.onCreated }, supervisor, cwd.containerPath, startedAt, deadline);
      }
    }

    let exec: Docker.Exec;
    let stream: Duplex;
    try {
      exec = await container.exec({
        Cmd: record === undefined ? supervisedArgv(options.argv, options.timeoutMs) : recordedArgv(options.argv, options.timeoutMs, record.useId, options.maxOutputBytes),
        AttachStdin: withStdin,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        Privileged: false,
        User: user,
        WorkingDir: cwd.containerPath,
        ...(options.env === undefined ? {} : { Env: Object.entries(options.env).map(([name, value]) => `${name}=${value}`) }),
      });
    } catch (error) {
      throw fromDockerError(error, what, 'CELL_EXEC_FAILED', NOT_FOUND_STATUS, { task_id: taskId });
    }
    // Journaled before it starts: a crash from here on leaves the exec findable (its failure is the caller's: nothing ran).
    if (record?.onCreated !== undefined) await record.onCreated({ container_id: (await container.inspect()).Id, exec_id: exec.id });
    try {
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

    if (outcome === 'deadline') throw await this.#abandonExec(taskId, () => stream.destroy(), options, { stdout_bytes: stdout.seenBytes, stderr_bytes: stderr.seenBytes });
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
      if (performance.now() > deadline) throw await this.#abandonExec(taskId, () => stream.destroy(), options, { stdout_bytes: stdout.seenBytes, stderr_bytes: stderr.seenBytes });
      await delay(EXIT_POLL_MS);
    }
    const durationMs = performance.now() - startedAt;
    if (exitCode === null) throw new CellError('CELL_EXEC_FAILED', `${what}: Docker reported no exit status`, { details: { task_id: taskId } });
    if (record !== undefined) return this.#recordedResult(taskId, record.useId, exitCode, durationMs, options);
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

  /**
   * A recorded action through the cell's supervisor (cell-supervisor.ts) instead of a new
   * Docker exec. The record stays the source of the result; when the loop is lost mid-run
   * (the cell restarted, the loop killed) the record is read until it holds an exit status
   * or the host deadline passes, as for an exec whose stream ended early.
   */
  async #execSupervised(
    taskId: string,
    options: CellExecOptions,
    record: NonNullable<CellExecOptions['record']>,
    supervisor: CellSupervisor,
    cwd: string,
    startedAt: number,
    deadline: number,
  ): Promise<CellExecResult> {
    await record.onCreated?.({ container_id: supervisor.containerId, exec_id: supervisor.execId });
    let outcome: SupervisedOutcome = await supervisor.run(
      { useId: record.useId, recordDir: `${CELL_USES_DIR}/${record.useId}`, argv: options.argv, cwd, timeoutMs: options.timeoutMs, maxOutputBytes: options.maxOutputBytes },
      deadline,
    );
    while (outcome.kind === 'lost') {
      const found = await readUseRecord(this.hostPaths(taskId).usesDir, record.useId, options.maxOutputBytes).catch(() => undefined);
      if (found?.fenced === true) outcome = { kind: 'exited', status: FENCED_EXIT_CODE };
      else if (found?.exit_code !== undefined) outcome = { kind: 'exited', status: found.exit_code };
      else if (performance.now() > deadline) outcome = { kind: 'deadline' };
      else await delay(SUPERVISOR_LOST_POLL_MS);
    }
    if (outcome.kind === 'deadline') {
      this.#dropSupervisors(taskId);
      throw await this.#abandonExec(taskId, () => undefined, options, { stdout_bytes: 0, stderr_bytes: 0 });
    }
    return this.#recordedResult(taskId, record.useId, outcome.status, performance.now() - startedAt, options);
  }

  /** The task's running supervisor for `user`, started when there is none (or it ended). */
  async #supervisor(taskId: string, user: string): Promise<CellSupervisor> {
    const byUser = this.#supervisors.get(taskId) ?? new Map<string, Promise<CellSupervisor>>();
    this.#supervisors.set(taskId, byUser);
    const current = byUser.get(user);
    if (current !== undefined) {
      const supervisor = await current.catch(() => undefined);
      if (supervisor?.alive === true) return supervisor;
      if (byUser.get(user) !== current) return this.#supervisor(taskId, user);
    }
    const container = this.#docker.getContainer(this.containerName(taskId));
    const starting = (async () => {
      let id: string;
      try {
        id = (await container.inspect()).Id;
      } catch (error) {
        throw fromDockerError(error, `exec in the cell of task ${taskId}`, 'CELL_EXEC_FAILED', NOT_FOUND_STATUS, { task_id: taskId });
      }
      return CellSupervisor.start(container, id, user, SUPERVISOR_READY_MS);
    })();
    byUser.set(user, starting);
    starting.catch(() => {
      if (byUser.get(user) === starting) byUser.delete(user);
    });
    return starting;
  }

  /** Ends the task's supervisors: its container is about to stop, restart or go. */
  #dropSupervisors(taskId: string): void {
    const byUser = this.#supervisors.get(taskId);
    if (byUser === undefined) return;
    this.#supervisors.delete(taskId);
    for (const starting of byUser.values()) void starting.then((supervisor) => supervisor.close(), () => undefined);
  }

  /** A recorded exec's result, read back from its record (the wrapper writes nothing to the exec's stream). */
  async #recordedResult(taskId: string, useId: string, exitCode: number, durationMs: number, options: CellExecOptions): Promise<CellExecResult> {
    const found = await readUseRecord(this.hostPaths(taskId).usesDir, useId, options.maxOutputBytes);
    if (found?.fenced === true && exitCode === FENCED_EXIT_CODE) {
      throw new CellError('CELL_USE_FENCED', `use ${useId} was fenced by a reconciler before it started; nothing ran`, { details: { task_id: taskId, use_id: useId } });
    }
    if (found === undefined || !found.started || found.exit_code === undefined) {
      throw new CellError('CELL_EXEC_FAILED', `exec in the cell of task ${taskId} ended (status ${exitCode}) without a complete record of use ${useId}`, {
        details: { task_id: taskId, use_id: useId, exit_code: exitCode },
      });
    }
    const rest = (n: number | undefined) => n ?? 0;
    return {
      exit_code: found.exit_code,
      stdout: found.stdout,
      stderr: found.stderr,
      stdout_truncated: rest(found.stdout_rest) > 0,
      stderr_truncated: rest(found.stderr_rest) > 0,
      stdout_bytes: found.stdout.length + rest(found.stdout_rest),
      stderr_bytes: found.stderr.length + rest(found.stderr_rest),
      timed_out: found.timed_out,
      duration_ms: Math.round(durationMs * 1000) / 1000,
    };
  }

  /** Snapshot of the task's workspace (CELL_HOME) on the host, without the harness's `.lazarus/` (see workspace-snapshot.ts). */
  snapshotWorkspace(taskId: string): Promise<WorkspaceSnapshot> {
    return snapshotDirectory(this.hostPaths(taskId).workspaceDir, { skipTopLevel: HARNESS_ONLY });
  }

  /**
   * The graveyard (Lazarus 7.1): stops the task's container and keeps it, with its
   * workspace, so that a resurrection within the closed grace starts it again as it
   * was. Stopped or absent already: nothing to do. True when this call stopped it.
   */
  async stopCell(taskId: string): Promise<boolean> {
    this.#dropSupervisors(taskId);
    const info = await this.#inspect(this.containerName(taskId));
    if (info === undefined || !info.State.Running) return false;
    try {
      await this.#docker.getContainer(info.Id).stop({ t: 2 });
      return true;
    } catch (error) {
      // 304: stopped meanwhile; 404: removed meanwhile. Either way it is not running.
      if (dockerStatus(error) === 304 || dockerStatus(error) === 404) return false;
      throw fromDockerError(error, `stopping the cell of task ${taskId}`, 'CELL_DOCKER_UNAVAILABLE', {}, { task_id: taskId });
    }
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
    this.#dropSupervisors(taskId);
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
    await this.#removeBinding(this.hostPaths(taskId));

    if (options.scrub !== true) return { containers_removed: removed, workspace_scrubbed: false };
    const { taskDir } = this.hostPaths(taskId);
    // The workspace may be a mounted image (disk quota), now or from an earlier configuration.
    await releaseWorkspaceMounts(taskDir);
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
      // Docker lists mounts in no stable order; the attestation is hashed into receipts, so sort it.
      mounts: (info.Mounts ?? [])
        .map((mount) => ({
          type: mount.Type ?? '',
          source: mount.Source,
          destination: mount.Destination,
          rw: mount.RW,
          propagation: mount.Propagation,
        }))
        .sort((a, b) => (a.destination < b.destination ? -1 : a.destination > b.destination ? 1 : 0)),
      env_names: (info.Config.Env ?? []).map((entry) => entry.slice(0, Math.max(0, entry.indexOf('=')))),
    };
  }

  /** `<cellsRoot>/<taskId>/workspace`, owned by the cell user, reached through no symlink. */
  async #prepareWorkspace(paths: CellHostPaths): Promise<void> {
    try {
      await mkdir(this.config.cellsRoot, { recursive: true, mode: 0o711 });
      for (const [dir, mode] of [
        [paths.taskDir, 0o700],
        [paths.workspaceDir, 0o755],
        // Root-owned and not listable by the cell: per-use directories below are made per exec.
        ...(this.config.useRecords ? ([[paths.usesDir, 0o711]] as const) : []),
      ] as const) {
        await mkdir(dir, { mode }).catch((error: unknown) => {
          if (errnoCode(error) !== 'EEXIST') throw error;
        });
        const stat = await lstat(dir);
        if (!stat.isDirectory()) {
          throw new CellError('CELL_START_FAILED', `${dir} exists but is not a directory (symlinks are refused)`, { details: { path: dir } });
        }
      }
      // The quota image is mounted on the empty directory first; the layout goes inside it.
      if (this.config.diskQuotaBytes > 0) await mountWorkspaceImage(paths.workspaceDir, this.config.diskQuotaBytes);
      await ensureCellHomeBase(paths.workspaceDir);
    } catch (error) {
      if (error instanceof CellError) throw error;
      throw new CellError('CELL_START_FAILED', `could not prepare the cell home ${paths.workspaceDir} (root-owned layout, areas owned by ${CELL_UID}:${CELL_GID}; needs root)`, {
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
      // 304: another opener (a second executor on this host) started it first; it is running, which is all this wants.
      await this.#docker
        .getContainer(id)
        .start()
        .catch((error: unknown) => {
          if (dockerStatus(error) !== 304) throw error;
        });
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
   * Kills every process of the task's cell and leaves it running again. A pooled cell
   * cannot be restarted in place (Docker would mount its old, moved, workspace path):
   * it is replaced by a cell of the task's own request on the same workspace.
   */
  async #restartCell(taskId: string): Promise<void> {
    this.#dropSupervisors(taskId);
    const container = this.#docker.getContainer(this.containerName(taskId));
    const info = await container.inspect();
    if (info.Config.Labels?.[CELL_POOL_LABELS.pool] !== '1') {
      await container.restart({ t: 0 });
      return;
    }
    await this.#remove(info.Id);
    await this.openCell(taskId);
  }

  /**
   * The host-side deadline passed: something in the cell outlived the in-cell kill
   * and holds the exec open. Restarting the container kills every process in it
   * (PID 1 included); the workspace is a bind mount and stays as it is.
   */
  async #abandonExec(taskId: string, detach: () => void, options: CellExecOptions, seen: { readonly stdout_bytes: number; readonly stderr_bytes: number }): Promise<CellError> {
    detach();
    let restarted = true;
    let restartError: unknown;
    try {
      await this.#restartCell(taskId);
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
          ...seen,
        },
      },
    );
  }
}
