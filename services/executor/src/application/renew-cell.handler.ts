import { hasErrorCode, type RenewCell, type RenewCellReply } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { SIGNED_REQUESTS, derivedId } from '@writ/runtime';
import type { RenewalRequest, RenewalResult } from './cell-lifecycle.js';
import { ExecutorError } from './executor-errors.js';
import { verifyCellDirectorRequest, type CellDirectorRequestDeps } from './cell-director-request.js';

/** Renewing a cell's active TTL (application/cell-lifecycle.ts). */
export interface CellRenewing {
  renew(cellId: string, request: RenewalRequest, causationId: string): Promise<RenewalResult>;
}

export interface RenewCellDeps extends CellDirectorRequestDeps {
  readonly lifecycle: CellRenewing;
}

/** Codes a director may see; anything else (the log unreachable) is EXECUTOR_NOT_READY. */
const REPLY_CODES = new Set([
  'EXECUTOR_CELL_SIGNATURE_INVALID',
  'EXECUTOR_CELL_NOT_ALLOWED',
  'EXECUTOR_CELL_STALE',
  'EXECUTOR_CELL_MISMATCH',
  'EXECUTOR_CELL_NOT_FOUND',
  'CELL_TRANSITION_INVALID',
  'CELL_TTL_CAP_EXCEEDED',
  'CELL_ACTIVE_TTL_EXPIRED',
  'CELL_NOT_DIRECTOR',
  'KERNEL_COMMAND_INVALID',
  'CONTRACT_INVALID',
]);

/**
 * `<root>.qry.executor.renew-cell` (request/reply; Lazarus 4.2): a director pushes a cell's
 * active expiry later, up to the cell policy's ceiling (24 h from activation by default). The
 * signed CellRenewal is verified like every director-signed request (an active key of the
 * principal it names, `typ` writ-cell-renew+jws, role `director`, never an agent, signed within
 * ±`freshnessSeconds`) and must name the requested cell; the kernel then decides
 * (`renew-active-ttl`). The request's id is derived from its JWS: sent again, it is answered
 * `already_renewed` with the first renewal, and nothing is appended.
 */
export class RenewCellHandler {
  constructor(private readonly deps: RenewCellDeps) {}

  async renew(request: RenewCell): Promise<RenewCellReply> {
    try {
      const { payload, actor } = await verifyCellDirectorRequest(SIGNED_REQUESTS.cellRenewal, request.renewal_jws, request.cell_id, this.deps, { noun: 'renewal', verb: 'renew' });
      const result = await this.deps.lifecycle.renew(
        request.cell_id,
        { renewed_by: actor, ...(payload.extend_ms === undefined ? {} : { extend_ms: payload.extend_ms }) },
        derivedId('crn', sha256Hex(request.renewal_jws)),
      );
      return {
        cell_id: request.cell_id,
        status: result.status,
        renewed_by: actor.id,
        previous_expires_at: result.previous_expires_at,
        active_expires_at: result.active_expires_at,
        max_expires_at: result.max_expires_at,
        event_id: result.event_id,
      };
    } catch (error) {
      if (hasErrorCode(error) && REPLY_CODES.has(error.code)) throw error;
      throw new ExecutorError('EXECUTOR_NOT_READY', 'the cell could not be renewed now; retry', { cause: error });
    }
  }
}
