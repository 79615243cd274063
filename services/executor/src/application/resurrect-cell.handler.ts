import { PrincipalType, hasErrorCode, type ResurrectCell, type ResurrectCellReply } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { SIGNED_REQUESTS, derivedId, verifySignedRequest, type SignedRequestFailure, type SignedRequestPrincipals } from '@writ/runtime';
import type { EventActor, ResurrectionResult } from './cell-lifecycle.js';
import { ExecutorError } from './executor-errors.js';

/** Resurrecting a closed cell (application/cell-lifecycle.ts). */
export interface CellResurrecting {
  resurrect(cellId: string, signer: EventActor, causationId: string): Promise<ResurrectionResult>;
}

export interface ResurrectCellDeps {
  readonly lifecycle: CellResurrecting;
  /** Principals as the log describes them (the executor's PrincipalRegistry behind it). */
  readonly principals: SignedRequestPrincipals;
  readonly clock: () => Date;
  /** ±window around the executor's clock a signed resurrection is accepted in (seconds). */
  readonly freshnessSeconds: number;
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
      const { payload, signer, principal } = await verifySignedRequest(
        request.resurrection_jws,
        { ...SIGNED_REQUESTS.cellResurrection, signers: 'director', freshnessSeconds: this.deps.freshnessSeconds },
        { principals: this.deps.principals, clock: this.deps.clock, failure: resurrectionFailure },
      );
      if (payload.cell_id !== request.cell_id) {
        throw new ExecutorError('EXECUTOR_CELL_MISMATCH', `the signed resurrection is for cell ${payload.cell_id}: sign one for the cell you resurrect`, {
          details: { cell_id: request.cell_id, signed_cell_id: payload.cell_id },
        });
      }
      const type = PrincipalType.safeParse(principal.principal_type);
      const result = await this.deps.lifecycle.resurrect(request.cell_id, { id: signer, type: type.success ? type.data : 'user' }, derivedId('crs', sha256Hex(request.resurrection_jws)));
      return {
        cell_id: request.cell_id,
        status: 'resurrected',
        restored_from: result.restored_from,
        checkpoint_id: result.checkpoint_id,
        resurrected_by: signer,
        active_expires_at: result.active_expires_at,
        event_id: result.event_id,
      };
    } catch (error) {
      if (hasErrorCode(error) && REPLY_CODES.has(error.code)) throw error;
      throw new ExecutorError('EXECUTOR_NOT_READY', 'the cell could not be resurrected now; retry', { cause: error });
    }
  }
}

/** A payload that is not a CellResurrection is as unverifiable as a bad signature: EXECUTOR_CELL_SIGNATURE_INVALID. */
const resurrectionFailure: SignedRequestFailure = (reason, message, details, cause) =>
  new ExecutorError(reason === 'signer_not_allowed' ? 'EXECUTOR_CELL_NOT_ALLOWED' : reason === 'stale' ? 'EXECUTOR_CELL_STALE' : 'EXECUTOR_CELL_SIGNATURE_INVALID', message, { cause, details });
