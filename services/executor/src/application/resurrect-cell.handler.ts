import { hasErrorCode, type ResurrectCell, type ResurrectCellReply } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { SIGNED_REQUESTS, derivedId } from '@writ/runtime';
import { verifyCellDirectorRequest, type CellDirectorRequestDeps } from './cell-director-request.js';
import type { EventActor, ResurrectionResult } from './cell-lifecycle.js';
import { ExecutorError } from './executor-errors.js';

/** Resurrecting a closed cell (application/cell-lifecycle.ts). */
export interface CellResurrecting {
  resurrect(cellId: string, signer: EventActor, causationId: string): Promise<ResurrectionResult>;
}

export interface ResurrectCellDeps extends CellDirectorRequestDeps {
  readonly lifecycle: CellResurrecting;
}

/** Codes a director may see; anything else (the log or Docker down) is EXECUTOR_NOT_READY. */
const REPLY_CODES = new Set([
  'EXECUTOR_CELL_SIGNATURE_INVALID',
  'EXECUTOR_CELL_NOT_ALLOWED',
  'EXECUTOR_CELL_STALE',
  'EXECUTOR_CELL_MISMATCH',
  'EXECUTOR_CELL_NOT_FOUND',
  'EXECUTOR_CELL_NOT_RESTORABLE',
  'EXECUTOR_CHECKPOINT_FAILED',
  'CELL_TRANSITION_INVALID',
  'CELL_GRACE_EXPIRED',
  'CONTRACT_INVALID',
]);

/**
 * `<root>.qry.executor.resurrect-cell` (request/reply; Lazarus 7.1): a director brings a
 * closed cell back within its grace. The signed CellResurrection is verified like every
 * director-signed request (an active key of the principal it names, role `director`, never
 * an agent, signed within ±`freshnessSeconds`) and must name the requested cell; the
 * kernel then decides (`resurrect-cell`: CLOSED, ran before, grace not over), and the cell
 * comes back from its graveyard on this host, or from its last checkpoint.
 */
export class ResurrectCellHandler {
  constructor(private readonly deps: ResurrectCellDeps) {}

  async resurrect(request: ResurrectCell): Promise<ResurrectCellReply> {
    try {
      const { actor } = await verifyCellDirectorRequest(SIGNED_REQUESTS.cellResurrection, request.resurrection_jws, request.cell_id, this.deps, { noun: 'resurrection', verb: 'resurrect' });
      const result = await this.deps.lifecycle.resurrect(request.cell_id, actor, derivedId('crs', sha256Hex(request.resurrection_jws)));
      return {
        cell_id: request.cell_id,
        status: 'resurrected',
        restored_from: result.restored_from,
        checkpoint_id: result.checkpoint_id,
        resurrected_by: actor.id,
        active_expires_at: result.active_expires_at,
        event_id: result.event_id,
      };
    } catch (error) {
      if (hasErrorCode(error) && REPLY_CODES.has(error.code)) throw error;
      throw new ExecutorError('EXECUTOR_NOT_READY', 'the cell could not be resurrected now; retry', { cause: error });
    }
  }
}
