import type Docker from 'dockerode';
import { CellError, dockerStatus, fromDockerError } from './cell-errors.js';

/** The cell base image as the local engine holds it. */
export interface CellImage {
  /** The configured reference, e.g. `writ/cell:latest`. */
  readonly image: string;
  /** Content-addressed image id (`sha256:...`): what a cell actually runs. */
  readonly image_id: string;
  /** Registry digests; empty for an image built offline with `docker import`. */
  readonly repo_digests: readonly string[];
  /** The build inputs hash the image was tagged with (label `writ.cell.inputs`), if any. */
  readonly inputs_hash: string | undefined;
}

/**
 * Looks the image up in the local engine. Never pulls: no registry is reachable,
 * and a cell must run exactly the image that was built and verified here.
 */
export async function inspectCellImage(docker: Docker, image: string): Promise<CellImage> {
  try {
    const info = await docker.getImage(image).inspect();
    return {
      image,
      image_id: info.Id,
      repo_digests: info.RepoDigests ?? [],
      inputs_hash: info.Config?.Labels?.['writ.cell.inputs'],
    };
  } catch (error) {
    if (dockerStatus(error) === 404) {
      throw new CellError('CELL_IMAGE_MISSING', `the cell image ${image} is not in the local Docker Engine: build it with scripts/build-cell-image.sh (it never pulls)`, {
        cause: error,
        details: { image },
      });
    }
    throw fromDockerError(error, `inspecting the cell image ${image}`, 'CELL_DOCKER_UNAVAILABLE', {}, { image });
  }
}
