import { WritError } from '@writ/contracts';

/**
 * Closed set of failures of the cell layer. Callers branch on the code
 * (`hasErrorCode(error, 'CELL_NOT_FOUND')`), never on the message.
 *
 * An action that exits non-zero or runs out of time is not an error: it is an
 * `CellExecResult` (`exit_code`, `timed_out`). These codes are for a cell that
 * could not be provided or controlled, and for callers that asked for the impossible.
 */
export type CellErrorCode =
  /** The configured cell image is not in the local Docker Engine: run scripts/build-cell-image.sh. */
  | 'CELL_IMAGE_MISSING'
  /** The Docker Engine cannot be reached (socket missing, refused, no permission). */
  | 'CELL_DOCKER_UNAVAILABLE'
  /** The task's container or workspace could not be created or started. */
  | 'CELL_START_FAILED'
  /** Docker refused or broke an exec for a reason other than a missing cell. */
  | 'CELL_EXEC_FAILED'
  /**
   * The exec outlived its host-side deadline (timeoutMs + host grace) although the
   * in-cell kill had fired: something escaped the action's process group. The cell's
   * container was restarted to stop every process in it; its workspace is intact.
   */
  | 'CELL_EXEC_TIMEOUT'
  /** There is no cell (or no running cell) for the task: call openCell first. */
  | 'CELL_NOT_FOUND'
  /** A cwd (or other cell path) resolves outside /workspace, or through a symlink. */
  | 'CELL_PATH_ESCAPE'
  /** The cwd lies inside /workspace but is not an existing directory. */
  | 'CELL_CWD_INVALID'
  /** The task id cannot name a cell (see `Id` in @writ/contracts). */
  | 'CELL_TASK_ID_INVALID'
  /** An option or argument is outside its documented domain (a caller bug). */
  | 'CELL_ARGUMENT_INVALID'
  /** Scrubbing left something of the task behind on the host. */
  | 'CELL_SCRUB_FAILED'
  /** A reconciler fenced the use (its record's `run/` was made on the host first): the action never ran. */
  | 'CELL_USE_FENCED'
  /**
   * A disk quota is configured but the workspace's ext4 image could not be made or
   * mounted (mkfs.ext4 / mount missing, or not root): the message names the tool.
   */
  | 'CELL_QUOTA_UNAVAILABLE';

export class CellError extends WritError<CellErrorCode> {
  constructor(code: CellErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'CellError';
  }
}

/** Network-level failures of the Docker socket: the engine is not there to answer. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOENT', 'EACCES', 'EPERM', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);

/** HTTP status of a Docker Engine API error (dockerode sets `statusCode`), if any. */
export function dockerStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return dockerStatus(error) === undefined && typeof code === 'string' && UNREACHABLE.has(code);
}

/** The engine's own explanation (`{"message": ...}`) or the error's message. */
function dockerReason(error: unknown): string {
  const json = (error as { json?: { message?: unknown } } | null)?.json;
  if (json && typeof json.message === 'string') return json.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The one mapping table from a Docker Engine failure to a cell error:
 * unreachable socket → CELL_DOCKER_UNAVAILABLE; an HTTP status listed in
 * `byStatus` → that code; anything else → `fallback`.
 */
export function fromDockerError(
  error: unknown,
  what: string,
  fallback: CellErrorCode,
  byStatus: Partial<Record<number, CellErrorCode>> = {},
  details: Record<string, unknown> = {},
): CellError {
  if (error instanceof CellError) return error;
  const status = dockerStatus(error);
  if (isUnreachable(error)) {
    return new CellError('CELL_DOCKER_UNAVAILABLE', `${what}: the Docker Engine is unreachable (${dockerReason(error)}); is dockerd running and is its socket accessible?`, {
      cause: error,
      details,
    });
  }
  const code = (status !== undefined ? byStatus[status] : undefined) ?? fallback;
  return new CellError(code, `${what}: ${dockerReason(error)}`, {
    cause: error,
    details: status === undefined ? details : { ...details, docker_status: status },
  });
}
