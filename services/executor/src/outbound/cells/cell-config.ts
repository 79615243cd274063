import { CellError } from './cell-errors.js';

/**
 * The cell's own user and group (`cell`, created by scripts/build-cell-image.sh). The user is
 * the harness's: the container's idle main process, checkpoint captures and restores of the
 * shared areas, and any exec that names no seat. The group is every working seat's: it owns
 * the project and `shared/` (setgid, group-writable), so seats share them and nobody else writes them.
 */
export const CELL_UID = 10001;
export const CELL_GID = 10001;

/** A numeric identity an exec runs as inside the cell (`docker exec` `User: uid:gid`). */
export interface CellUser {
  readonly uid: number;
  readonly gid: number;
}

/** The harness's identity in the cell (see CELL_UID). */
export const CELL_HARNESS_USER: CellUser = Object.freeze({ uid: CELL_UID, gid: CELL_GID });

/**
 * Seats of a cell run as `CELL_SEAT_UID_BASE + <the seat's ordinal in the cell's participant
 * list>` (application/cell-seats.ts): far from the harness's 10001, so no seat ever owns what
 * the harness made, and below 65 536 for the first 45 535 seats (user-namespace remaps).
 */
export const CELL_SEAT_UID_BASE = 20_000;
/** The highest uid an exec may take (2^31 - 2: the kernel's largest valid id, -1 excluded). */
export const CELL_UID_MAX = 2_147_483_646;

/**
 * `uid:gid` for Docker, checked: a uid at or above the harness's (never root or a system
 * user, which could own the root-owned `.lazarus/`), and either the cell group (a seat that
 * writes the project and `shared/`) or a private group equal to the uid (a read-only seat).
 */
export function cellUserSpec(user: CellUser = CELL_HARNESS_USER): string {
  const { uid, gid } = user;
  if (!Number.isSafeInteger(uid) || uid < CELL_UID || uid > CELL_UID_MAX || !Number.isSafeInteger(gid) || (gid !== CELL_GID && gid !== uid)) {
    throw new CellError('CELL_ARGUMENT_INVALID', `an exec runs as a uid in ${CELL_UID}..${CELL_UID_MAX} with gid ${CELL_GID} or its own uid, got ${String(uid)}:${String(gid)}`, {
      details: { option: 'user' },
    });
  }
  return `${uid}:${gid}`;
}

/** Where the task's workspace appears inside the cell: the only writable bind mount. */
export const CELL_WORKSPACE = '/workspace';

/**
 * Documented defaults. Limits are per cell (one container per task), enforced by
 * the kernel through the container's cgroup.
 */
export const CELL_DEFAULTS = {
  /** Built offline by scripts/build-cell-image.sh (no registry is reachable). */
  image: 'writ/cell:latest',
  /** Host directory holding `<taskId>/workspace` for every cell. */
  cellsRoot: '/var/lib/writ/cells',
  socketPath: '/var/run/docker.sock',
  /** Container names are `<namePrefix><taskId>`: one container per task per Docker host. */
  namePrefix: 'writ-cell-',
  /** 256 MiB of memory, no swap on top. */
  memoryBytes: 256 * 1024 * 1024,
  /** At most 128 processes and threads in the cell (fork bombs stop here). */
  pidsLimit: 128,
  /** One CPU's worth of time. */
  nanoCpus: 1_000_000_000,
  /** /tmp is a 16 MiB tmpfs (noexec, nosuid, nodev). */
  tmpfsBytes: 16 * 1024 * 1024,
  /** /dev/shm of the private IPC namespace: 1 MiB (Docker's own default is 64 MiB). */
  shmBytes: 1024 * 1024,
  /**
   * How long past `timeoutMs` the host waits for an exec to end after the in-cell
   * kill before it restarts the container (CELL_EXEC_TIMEOUT).
   */
  hostGraceMs: 5_000,
} as const;

export interface CellRuntimeOptions {
  /** Image reference of the cell base image. Default `writ/cell:latest`. */
  readonly image?: string;
  /** Host directory of the workspaces. Default `/var/lib/writ/cells`. */
  readonly cellsRoot?: string;
  /** Docker Engine socket. Default `/var/run/docker.sock`. */
  readonly socketPath?: string;
  /** Container name prefix. Default `writ-cell-`. */
  readonly namePrefix?: string;
  readonly memoryBytes?: number;
  readonly pidsLimit?: number;
  readonly nanoCpus?: number;
  readonly tmpfsBytes?: number;
  readonly shmBytes?: number;
  readonly hostGraceMs?: number;
  /**
   * Extra container labels (e.g. `writ.test=<run id>` so tests can remove what they
   * made). The runtime's own `writ.*` cell labels cannot be overridden.
   */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Mount `<cellsRoot>/<taskId>/uses` at /run/writ so actions run through `exec` with a
   * `record` keep a durable per-use record (crash safety). Default false.
   */
  readonly useRecords?: boolean;
  /**
   * Run recorded actions without stdin or per-exec environment through the cell's in-cell
   * supervisor (cell-supervisor.ts: one long-lived exec per cell and user) instead of a new
   * Docker exec each. Default true; false: every action is its own Docker exec.
   */
  readonly supervisor?: boolean;
  /**
   * Disk quota of each workspace in bytes: the workspace is a loop-mounted ext4 image of
   * this size (workspace-quota.ts; needs root). 0 or unset: a plain directory, no quota.
   */
  readonly diskQuotaBytes?: number;
}

export interface CellConfig {
  readonly image: string;
  readonly cellsRoot: string;
  readonly socketPath: string;
  readonly namePrefix: string;
  readonly memoryBytes: number;
  readonly pidsLimit: number;
  readonly nanoCpus: number;
  readonly tmpfsBytes: number;
  readonly shmBytes: number;
  readonly hostGraceMs: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly useRecords: boolean;
  readonly supervisor: boolean;
  /** 0: no quota. */
  readonly diskQuotaBytes: number;
}

function positiveInteger(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new CellError('CELL_ARGUMENT_INVALID', `${name} must be an integer >= ${min}, got ${String(value)}`, { details: { option: name } });
  }
  return value;
}

function nonEmpty(name: string, value: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.includes('\0')) {
    throw new CellError('CELL_ARGUMENT_INVALID', `${name} must be a non-empty string`, { details: { option: name } });
  }
  return value;
}

/** Smallest disk quota: below it ext4's own metadata leaves almost nothing. */
export const MIN_DISK_QUOTA_BYTES = 16 * 1024 * 1024;

function diskQuota(value: number): number {
  if (value === 0) return 0;
  if (!Number.isSafeInteger(value) || value < MIN_DISK_QUOTA_BYTES) {
    throw new CellError('CELL_ARGUMENT_INVALID', `diskQuotaBytes must be 0 (no quota) or an integer >= ${MIN_DISK_QUOTA_BYTES}, got ${String(value)}`, {
      details: { option: 'diskQuotaBytes' },
    });
  }
  return value;
}

/** Options → config with every default applied; refuses values outside their domain. */
export function resolveCellConfig(options: CellRuntimeOptions = {}): CellConfig {
  const cellsRoot = nonEmpty('cellsRoot', options.cellsRoot ?? CELL_DEFAULTS.cellsRoot);
  if (!cellsRoot.startsWith('/')) {
    throw new CellError('CELL_ARGUMENT_INVALID', `cellsRoot must be an absolute host path, got ${cellsRoot}`, { details: { option: 'cellsRoot' } });
  }
  const namePrefix = nonEmpty('namePrefix', options.namePrefix ?? CELL_DEFAULTS.namePrefix);
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(namePrefix)) {
    throw new CellError('CELL_ARGUMENT_INVALID', `namePrefix must start a valid container name, got ${namePrefix}`, { details: { option: 'namePrefix' } });
  }
  const labels = options.labels ?? {};
  for (const key of Object.keys(labels)) {
    if (key === 'writ.cell' || key.startsWith('writ.cell.') || key === 'writ.task_id') {
      throw new CellError('CELL_ARGUMENT_INVALID', `label ${key} is reserved for the cell runtime`, { details: { option: 'labels', label: key } });
    }
  }
  return {
    image: nonEmpty('image', options.image ?? CELL_DEFAULTS.image),
    cellsRoot: cellsRoot.replace(/\/+$/, '') || '/',
    socketPath: nonEmpty('socketPath', options.socketPath ?? CELL_DEFAULTS.socketPath),
    namePrefix,
    // Docker refuses less than 6 MiB of memory for a container.
    memoryBytes: positiveInteger('memoryBytes', options.memoryBytes ?? CELL_DEFAULTS.memoryBytes, 6 * 1024 * 1024),
    // A few processes are the cell's own: the idle main process and the exec wrapper.
    pidsLimit: positiveInteger('pidsLimit', options.pidsLimit ?? CELL_DEFAULTS.pidsLimit, 8),
    nanoCpus: positiveInteger('nanoCpus', options.nanoCpus ?? CELL_DEFAULTS.nanoCpus, 10_000_000),
    tmpfsBytes: positiveInteger('tmpfsBytes', options.tmpfsBytes ?? CELL_DEFAULTS.tmpfsBytes, 4096),
    shmBytes: positiveInteger('shmBytes', options.shmBytes ?? CELL_DEFAULTS.shmBytes, 4096),
    hostGraceMs: positiveInteger('hostGraceMs', options.hostGraceMs ?? CELL_DEFAULTS.hostGraceMs, 1),
    labels: { ...labels },
    useRecords: options.useRecords === true,
    supervisor: options.supervisor !== false,
    diskQuotaBytes: diskQuota(options.diskQuotaBytes ?? 0),
  };
}
