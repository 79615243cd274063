// The executor's outbound Docker layer: hardened per-task cells, driven through docker exec.
export {
  CELL_DEFAULTS,
  CELL_GID,
  CELL_HARNESS_USER,
  CELL_SEAT_UID_BASE,
  CELL_UID,
  CELL_WORKSPACE,
  cellUserSpec,
  resolveCellConfig,
  type CellConfig,
  type CellRuntimeOptions,
  type CellUser,
} from './cell-config.js';
export { CellError, type CellErrorCode } from './cell-errors.js';
export {
  CELL_ENV,
  CELL_LABELS,
  CELL_POOL_LABELS,
  CELL_MAIN_COMMAND,
  cellContainerSpec,
  cellHostConfig,
  type CellContainerSpec,
  type CellHostConfig,
  type CellSpecInput,
} from './cell-hardening.js';
export { inspectCellImage, type CellImage } from './cell-image.js';
export { CELL_POOL_MAX_SIZE, CellPool, type CellPoolLogger, type CellPoolOptions, type CellPoolStats } from './cell-pool.js';
export { assertTaskId, cellHostPaths, resolveCellCwd, type CellCwd, type CellHostPaths } from './cell-paths.js';
export {
  CELL_POOL_DIR,
  CellRuntime,
  type CellActionResult,
  type CellEnvironment,
  type CellExecOptions,
  type CellExecResult,
  type CellHandle,
  type CellMount,
  type CloseCellOptions,
  type OpenCellOptions,
  type CloseCellResult,
  type PooledCell,
  type PooledCellSource,
} from './cell-runtime.js';
export {
  CELL_RESERVED_NAMES,
  appendHarnessLine,
  clearRestorableAreas,
  ensureCellHomeBase,
  ensureParticipantHome,
  participantHomes,
  projectEntries,
  removeParticipantHome,
  writeHarnessFile,
} from './cell-home.js';
export { CELL_USES_DIR, EXEC_SUPERVISOR_SCRIPT, FENCED_EXIT_CODE, KILLED_EXIT_CODE, RECORDED_SUPERVISOR_SCRIPT } from './exec-wrapper.js';
export { fenceUseRecord, prepareUseRecord, readUseRecord, removeUseRecord, useRecordDir, type UseRecord } from './use-record.js';
export {
  diffSnapshots,
  snapshotDirectory,
  type SnapshotOptions,
  type FileChange,
  type SnapshotEntry,
  type WorkspaceDiff,
  type WorkspaceSnapshot,
} from './workspace-snapshot.js';
