import { ContextPack, type HttpReadScope } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { ProjectionError } from './projection-errors.js';
import type { ReadService } from './read-service.js';

/** The artifact store as the context pack read uses it: bytes by SHA-256, or null when it holds none. */
export interface ArtifactReader {
  get(sha256: string): Promise<Uint8Array | null>;
}

/** `GET /v1/attempts/<id>/context`: the pack, the hash it was verified against, and its bytes as stored. */
export interface ServedContextPack {
  readonly pack: ContextPack;
  readonly sha256: string;
  readonly bytes: Uint8Array;
}

/**
 * Serves an attempt's context pack (issue 17): the attempts view holds only which pack
 * (`context_pack_sha256`, from `context.pack_compiled`), so a rebuild from the log yields
 * the same rows without the store; the bytes come from the content-addressed artifact
 * store and are served only if they hash to the recorded sha256 and are that attempt's
 * pack. The caller's scope is the attempt read's: another principal's attempt, a forged
 * or unknown id, is PROJECTION_NOT_FOUND, the same answer as a missing one.
 */
export class ContextPackReads {
  constructor(
    private readonly reads: ReadService,
    private readonly artifacts: ArtifactReader,
  ) {}

  async attemptContext(id: string, scope: HttpReadScope): Promise<ServedContextPack> {
    const attempt = await this.reads.attempt(id, scope);
    const sha256 = attempt.context_pack_sha256;
    if (sha256 === null) {
      throw new ProjectionError('PROJECTION_NOT_FOUND', `attempt ${attempt.attempt_id} has no context pack in the projection yet; a pack is compiled once its request is in the log: retry shortly`, {
        details: { attempt_id: attempt.attempt_id },
      });
    }
    let bytes: Uint8Array | null;
    try {
      bytes = await this.artifacts.get(sha256);
    } catch (cause) {
      throw new ProjectionError('PROJECTION_CONTEXT_PACK_UNAVAILABLE', `the artifact store cannot give the context pack sha256:${sha256} of attempt ${attempt.attempt_id} now; retry later`, {
        cause,
        details: { attempt_id: attempt.attempt_id, sha256 },
      });
    }
    if (bytes === null) {
      throw new ProjectionError('PROJECTION_CONTEXT_PACK_UNAVAILABLE', `the artifact store holds no context pack sha256:${sha256} (attempt ${attempt.attempt_id}); the operator restores it from a backup, or it is recompiled from the log (writ context --verify)`, {
        details: { attempt_id: attempt.attempt_id, sha256 },
      });
    }
    // The store checks its own digest; this checks the bytes against what the log recorded, and that they are this attempt's.
    const corrupt = (why: string) =>
      new ProjectionError('PROJECTION_CONTEXT_PACK_CORRUPT', `the stored context pack of attempt ${attempt.attempt_id} ${why}: it is not served`, { details: { attempt_id: attempt.attempt_id, sha256 } });
    if (sha256Hex(bytes) !== sha256) throw corrupt(`does not hash to the recorded sha256:${sha256}`);
    let parsed;
    try {
      parsed = ContextPack.safeParse(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)));
    } catch {
      throw corrupt('is not JSON');
    }
    if (!parsed.success) throw corrupt('is not a ContextPack');
    if (parsed.data.attempt_id !== attempt.attempt_id || parsed.data.task_id !== attempt.task_id) throw corrupt(`is the pack of attempt ${parsed.data.attempt_id} of task ${parsed.data.task_id}`);
    return { pack: parsed.data, sha256, bytes };
  }
}
