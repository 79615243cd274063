import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';

/**
 * What every spec that runs real Docker cells sets up and tears down: the cell image, a
 * temporary cells root, and the containers and egress networks it labelled `writ.test=<run>`.
 * Kept apart from the executor rig so that cell-level specs need not load the NestJS app.
 */

const BUILD_SCRIPT = fileURLToPath(new URL('../../../scripts/build-cell-image.sh', import.meta.url));
const CELL_IMAGE = 'writ/cell:latest';

/** Builds the cell image when this Docker host lacks it: the script is idempotent, offline, and serialised with flock against parallel test files. */
export async function ensureCellImage(docker: Docker = new Docker()): Promise<void> {
  try {
    await docker.getImage(CELL_IMAGE).inspect();
  } catch {
    execFileSync(BUILD_SCRIPT, { stdio: 'inherit' });
  }
}

/** A fresh directory under the OS temp dir (`prefix` names whose it is, for whoever finds one left over). */
export function tempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), prefix));
}

/** Force-removes the containers (with their volumes) and egress networks labelled `writ.test=<run>`, then the given directories. */
export async function removeTestCells(run: string, dirs: readonly (string | undefined)[] = [], docker: Docker = new Docker()): Promise<void> {
  const label = [`writ.test=${run}`];
  const leftovers = await docker.listContainers({ all: true, filters: { label } });
  await Promise.all(leftovers.map((container) => docker.getContainer(container.Id).remove({ force: true, v: true })));
  const networks = await docker.listNetworks({ filters: { label } });
  await Promise.all(networks.map((network) => docker.getNetwork(network.Id).remove()));
  for (const dir of dirs) if (dir) await rm(dir, { recursive: true, force: true });
}
