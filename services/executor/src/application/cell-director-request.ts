import { PrincipalType } from '@writ/contracts';
import { verifySignedRequest, type SignedRequestFailure, type SignedRequestKind, type SignedRequestPrincipals } from '@writ/runtime';
import type { z } from 'zod';
import type { EventActor } from './cell-lifecycle.js';
import { ExecutorError } from './executor-errors.js';

export interface CellDirectorRequestDeps {
  /** Principals as the log describes them (the executor's PrincipalRegistry behind it). */
  readonly principals: SignedRequestPrincipals;
  readonly clock: () => Date;
  /** ±window around the executor's clock a signed request is accepted in (seconds). */
  readonly freshnessSeconds: number;
}

/** A refused signature as the director reads it: not allowed, stale, or not a valid signature. */
export const cellRequestFailure: SignedRequestFailure = (reason, message, details, cause) =>
  new ExecutorError(reason === 'signer_not_allowed' ? 'EXECUTOR_CELL_NOT_ALLOWED' : reason === 'stale' ? 'EXECUTOR_CELL_STALE' : 'EXECUTOR_CELL_SIGNATURE_INVALID', message, { cause, details });

/**
 * A director-signed request about one cell (`writ cell resurrect`, `writ cell renew`), verified
 * like every director-signed request (an active key of the principal it names, the kind's `typ`,
 * role `director`, never an agent, signed within ±`freshnessSeconds`) and bound to the cell it
 * was sent for (else EXECUTOR_CELL_MISMATCH): its payload and the director as the event's actor.
 */
export async function verifyCellDirectorRequest<S extends z.ZodType<{ readonly cell_id: string }>>(
  kind: SignedRequestKind<S>,
  jws: string,
  cellId: string,
  deps: CellDirectorRequestDeps,
  what: { readonly noun: string; readonly verb: string },
): Promise<{ readonly payload: z.output<S>; readonly actor: EventActor }> {
  const { payload, signer, principal } = await verifySignedRequest(
    jws,
    { ...kind, signers: 'director', freshnessSeconds: deps.freshnessSeconds },
    { principals: deps.principals, clock: deps.clock, failure: cellRequestFailure },
  );
  if (payload.cell_id !== cellId) {
    throw new ExecutorError('EXECUTOR_CELL_MISMATCH', `the signed ${what.noun} is for cell ${payload.cell_id}: sign one for the cell you ${what.verb}`, {
      details: { cell_id: cellId, signed_cell_id: payload.cell_id },
    });
  }
  const type = PrincipalType.safeParse(principal.principal_type);
  return { payload, actor: { id: signer, type: type.success ? type.data : 'user' } };
}
