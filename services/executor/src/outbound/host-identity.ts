import { sha256Hex } from '@writ/crypto';
import Docker from 'dockerode';
import { ExecutorError } from '../application/executor-errors.js';

/**
 * The host id of executors on one Docker engine and one cells root: `host-` + 16 hex of SHA-256 over
 * the engine's own id and the cells root. A cell's files live exactly there (its container on that
 * engine, its CELL_HOME under that root), so processes sharing both are one host and get one id, and
 * a restart (or a new container of the executor) keeps it: the engine id is kept on the engine's disk.
 */
export function hostIdOf(engineId: string, cellsRoot: string): string {
  return `host-${sha256Hex(`${engineId}\n${cellsRoot}`).slice(0, 16)}`;
}

/**
 * `WRIT_EXECUTOR_HOST_ID` unset: asks the Docker engine for its id. Fails the start when Docker does not
 * answer: an id made up from anything else would change on the next start and orphan every cell this
 * host holds (their work would be forwarded to a host that no longer exists).
 */
export async function deriveHostId(socketPath: string, cellsRoot: string): Promise<string> {
  let engineId: unknown;
  try {
    engineId = ((await new Docker({ socketPath }).info()) as { ID?: unknown }).ID;
  } catch (cause) {
    throw new ExecutorError('EXECUTOR_NOT_READY', `the Docker engine at ${socketPath} did not answer, so this executor's host id cannot be derived; start Docker or set WRIT_EXECUTOR_HOST_ID`, { cause });
  }
  if (typeof engineId !== 'string' || engineId === '') {
    throw new ExecutorError('EXECUTOR_NOT_READY', `the Docker engine at ${socketPath} reports no id; set WRIT_EXECUTOR_HOST_ID`);
  }
  return hostIdOf(engineId, cellsRoot);
}
