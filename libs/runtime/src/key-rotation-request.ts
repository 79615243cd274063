import type { RotateKey, RotateKeyReply } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { SIGNED_REQUESTS, verifySignedRequest, type SignedRequestFailure, type SignedRequestPrincipals } from './signed-request.js';

/** A service's rotating signing key as a rotation request needs it (`RotatingServiceKey` with the replaced key's validity bound in). */
export interface ServiceKeyRotator {
  readonly principalId: string;
  /**
   * Generates the key `kid`, appends `principal.key_added` for it (replacing the
   * active key, which stays valid until `retire_after`), then signs with it. A kid
   * already known answers `already_rotated`.
   */
  rotate(input: { readonly kid: string; readonly requestedBy: string }): Promise<{
    readonly status: 'rotated' | 'already_rotated';
    readonly kid: string;
    readonly previous_kid: string;
    readonly retire_after: string;
  }>;
}

export interface KeyRotationRequestDeps {
  /** The service a rotation must be signed for (`approval`, `receipt`): the KeyRotation's `service`. */
  readonly service: string;
  readonly keys: ServiceKeyRotator;
  readonly principals: SignedRequestPrincipals;
  readonly clock: () => Date;
  /** ±seconds around the clock the rotation's `requested_at` must lie in. */
  readonly freshnessSeconds: number;
  /** The service's error for each refusal of the signed request (CONTRACT_INVALID stays itself). */
  readonly failure: SignedRequestFailure;
  /** The service's error for a rotation signed for another service. */
  readonly mismatch: (message: string, details: Record<string, unknown>) => Error;
  /** The service's error for anything else (the log or the disk failed): the caller may retry. */
  readonly unavailable: (cause: unknown) => Error;
}

/**
 * `<root>.qry.<service>.rotate-key` (request/reply), the same for every
 * signing service: a director's signed KeyRotation (`verifySignedRequest`:
 * the director role, never an agent, an active key, fresh) for THIS service
 * rotates its key. The new kid is derived from the signed request, so a
 * repeated request (within its freshness window, to any replica sharing the
 * key directory) rotates once and answers `already_rotated`.
 *
 * Refusals are the service's own errors (`failure`, `mismatch`), raised as
 * they are; any other failure becomes `unavailable`.
 */
export async function rotateKeyOnRequest(request: RotateKey, deps: KeyRotationRequestDeps): Promise<RotateKeyReply> {
  const refusals = new WeakSet<object>();
  const refuse = (error: Error): Error => {
    refusals.add(error);
    return error;
  };
  try {
    const { payload: rotation, signer } = await verifySignedRequest(
      request.rotation_jws,
      { ...SIGNED_REQUESTS.keyRotation, signers: 'director', freshnessSeconds: deps.freshnessSeconds },
      { principals: deps.principals, clock: deps.clock, failure: (...args) => refuse(deps.failure(...args)) },
    );
    if (rotation.service !== deps.service) {
      throw refuse(deps.mismatch(`the signed rotation is for the ${rotation.service} service, not ${deps.service}`, { service: deps.service, signed_service: rotation.service }));
    }
    const kid = `${deps.keys.principalId.slice(0, 100)}-${sha256Hex(request.rotation_jws).slice(0, 16)}`;
    const result = await deps.keys.rotate({ kid, requestedBy: signer });
    return { principal_id: deps.keys.principalId, ...result };
  } catch (error) {
    if (typeof error === 'object' && error !== null && refusals.has(error)) throw error;
    throw deps.unavailable(error);
  }
}
