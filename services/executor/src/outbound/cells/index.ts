// The executor's outbound Docker layer: hardened per-task cells, driven through docker exec.
export { CELL_DEFAULTS, CELL_GID, CELL_UID, CELL_WORKSPACE, resolveCellConfig, type CellConfig, type CellRuntimeOptions } from './cell-config.js';
export { CellError, type CellErrorCode } from './cell-errors.js';
export {
  CELL_ENV,
  CELL_LABELS,
  CELL_MAIN_COMMAND,
  cellContainerSpec,
  cellHostConfig,
  type CellContainerSpec,
  type CellHostConfig,
  type CellSpecInput,
} from './cell-hardening.js';
export { inspectCellImage, type CellImage } from './cell-image.js';
export { assertTaskId, cellHostPaths, resolveCellCwd, type CellCwd, type CellHostPaths } from './cell-paths.js';
export {
  CellRuntime,
  type CellActionResult,
  type CellEnvironment,
  type CellExecOptions,
  type CellExecResult,
  type CellHandle,
  type CellMount,
  type CloseCellOptions,
  type CloseCellResult,
} from './cell-runtime.js';
export { EXEC_SUPERVISOR_SCRIPT, KILLED_EXIT_CODE } from './exec-wrapper.js';
export {
  diffSnapshots,
  snapshotDirectory,
  type FileChange,
  type SnapshotEntry,
  type WorkspaceDiff,
  type WorkspaceSnapshot,
} from './workspace-snapshot.js';
