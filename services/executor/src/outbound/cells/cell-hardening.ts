import type Docker from 'dockerode';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { CELL_GID, CELL_UID, CELL_WORKSPACE, type CellConfig } from './cell-config.js';
import { CELL_USES_DIR } from './exec-wrapper.js';

/**
 * The whole hardening of a cell, as data: the container create request the runtime
 * sends to Docker. Nothing here reads the host's environment or file system, so a
 * test can assert every flag, and the hash of this request (label `writ.cell.spec`)
 * tells a running container made from it apart from one made any other way.
 */

/** `HostConfig` as the Engine API 1.41 accepts it (the typings lack `CgroupnsMode`). */
export type CellHostConfig = Docker.HostConfig & { CgroupnsMode?: 'private' | 'host' };
export type CellContainerSpec = Omit<Docker.ContainerCreateOptions, 'HostConfig'> & {
  name: string;
  Image: string;
  Labels: Record<string, string>;
  Env: string[];
  HostConfig: CellHostConfig;
};

/**
 * The cell's entire environment. It is built from this allowlist and nothing else,
 * never from `process.env`: no secret of the executor's process can reach a cell.
 * HOME is the workspace, the only writable place that persists between actions.
 */
export const CELL_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: '/bin:/usr/bin',
  HOME: CELL_WORKSPACE,
  LANG: 'C.UTF-8',
});

/**
 * The container's main process: an idle busybox shell that also reaps. Orphans of
 * actions are re-parented to PID 1; a plain `sleep` would leave them as zombies that
 * keep counting against the pids limit. `wait` reaps any child (waitpid(-1)), and
 * SIGTERM ends the cell at once (PID 1 ignores signals it has no handler for).
 */
export const CELL_MAIN_COMMAND: readonly string[] = Object.freeze([
  '/bin/sh',
  '-c',
  'trap "exit 0" TERM INT; while :; do sleep 2147483647 & wait; done',
]);

/** Label keys the runtime owns. */
export const CELL_LABELS = {
  cell: 'writ.cell',
  taskId: 'writ.task_id',
  image: 'writ.cell.image',
  imageId: 'writ.cell.image_id',
  spec: 'writ.cell.spec',
} as const;

/** Labels of a warm-pool cell (cell-pool.ts): started ahead of time, bound to no task yet. */
export const CELL_POOL_LABELS = {
  pool: 'writ.cell.pool',
  owner: 'writ.cell.pool.owner',
  /** The cells root the pooled cell's workspace lives under: processes on other roots are other pools. */
  root: 'writ.cell.pool.root',
} as const;

/** `16777216` → `16m`: the size syntax of mount options. */
export function mountSize(bytes: number): string {
  const MiB = 1024 * 1024;
  if (bytes % MiB === 0) return `${bytes / MiB}m`;
  if (bytes % 1024 === 0) return `${bytes / 1024}k`;
  return String(bytes);
}

export interface CellSpecInput {
  readonly taskId: string;
  readonly containerName: string;
  /** Image reference as configured (`writ/cell:latest`). */
  readonly image: string;
  /** The id that reference resolved to when the cell was opened. */
  readonly imageId: string;
  /** Host directory bind-mounted at /workspace. */
  readonly workspaceDir: string;
  /** Host directory of the per-use records, mounted at /run/writ when `config.useRecords`. */
  readonly usesDir?: string;
  /**
   * Egress (outbound/egress): the per-action `internal` Docker network the cell joins, for an
   * action whose grant names hosts. Absent (every other cell): `NetworkMode: none`.
   */
  readonly network?: string;
  readonly config: CellConfig;
}

/** HostConfig of a cell: the isolation that invariant 7 rests on. */
export function cellHostConfig(input: Pick<CellSpecInput, 'workspaceDir' | 'usesDir' | 'network' | 'config'>): CellHostConfig {
  const { config } = input;
  return {
    // No network at all (only `lo` inside), unless the action's grant names egress hosts:
    // then the per-action internal network whose only reachable address is the egress proxy.
    NetworkMode: input.network ?? 'none',
    // The image is read-only; the workspace bind mount and the /tmp tmpfs are the only writable places.
    ReadonlyRootfs: true,
    CapDrop: ['ALL'],
    CapAdd: [],
    // Docker's default seccomp profile stays on (no `seccomp=unconfined` here).
    SecurityOpt: ['no-new-privileges'],
    Privileged: false,
    Memory: config.memoryBytes,
    // Equal to Memory: no swap beyond the memory limit.
    MemorySwap: config.memoryBytes,
    PidsLimit: config.pidsLimit,
    NanoCpus: config.nanoCpus,
    Ulimits: [
      { Name: 'core', Soft: 0, Hard: 0 },
      { Name: 'nofile', Soft: 4096, Hard: 4096 },
    ],
    Tmpfs: { '/tmp': `rw,noexec,nosuid,nodev,size=${mountSize(config.tmpfsBytes)}` },
    IpcMode: 'private',
    ShmSize: config.shmBytes,
    CgroupnsMode: 'private',
    // The task's workspace is the only host path in the cell: no Docker socket, no other binds.
    Mounts: [
      {
        Type: 'bind',
        Source: input.workspaceDir,
        Target: CELL_WORKSPACE,
        ReadOnly: false,
        BindOptions: { Propagation: 'rprivate' },
      },
      // Crash safety: the exec wrapper's per-use records (exit status, capped output) outside the workspace.
      ...(config.useRecords && input.usesDir !== undefined
        ? [{ Type: 'bind' as const, Source: input.usesDir, Target: CELL_USES_DIR, ReadOnly: false, BindOptions: { Propagation: 'rprivate' as const } }]
        : []),
    ],
    Binds: [],
    Devices: [],
    PublishAllPorts: false,
    // `Init: true` would bind-mount docker-init from the host; PID 1 reaps by itself.
    Init: false,
    AutoRemove: false,
    RestartPolicy: { Name: 'no', MaximumRetryCount: 0 },
    // Actions' output travels over exec streams; the idle main process writes nothing.
    LogConfig: { Type: 'none', Config: {} },
  };
}

/** The full create request of a task's cell and the SHA-256 of its canonical JSON. */
export function cellContainerSpec(input: CellSpecInput): { spec: CellContainerSpec; specSha256: string } {
  const withoutHash: CellContainerSpec = {
    name: input.containerName,
    Image: input.image,
    Cmd: [...CELL_MAIN_COMMAND],
    Entrypoint: [],
    User: `${CELL_UID}:${CELL_GID}`,
    WorkingDir: CELL_WORKSPACE,
    Env: Object.entries(CELL_ENV).map(([key, value]) => `${key}=${value}`),
    Hostname: 'cell',
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    Tty: false,
    OpenStdin: false,
    NetworkDisabled: input.network === undefined,
    StopTimeout: 2,
    Labels: {
      ...input.config.labels,
      [CELL_LABELS.cell]: '1',
      [CELL_LABELS.taskId]: input.taskId,
      [CELL_LABELS.image]: input.image,
      [CELL_LABELS.imageId]: input.imageId,
    },
    HostConfig: cellHostConfig(input),
  };
  const specSha256 = sha256Hex(canonicalJson(withoutHash));
  return { spec: { ...withoutHash, Labels: { ...withoutHash.Labels, [CELL_LABELS.spec]: specSha256 } }, specSha256 };
}
