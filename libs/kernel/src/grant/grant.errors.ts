import { KernelError } from '../shared/kernel-error.js';

/**
 * Why a use of a grant is refused. `checkGrantUse` returns these; the grant
 * decider records them as `grant.refused`; `assertGrantUse` throws them.
 */
export type GrantRefusalCode =
  /** `now` is before the grant's `nbf`. */
  | 'GRANT_NOT_YET_VALID'
  /** `now` is at or after the grant's `exp` (an expired grant is invalid even if approved, Hermit 8.12). */
  | 'GRANT_EXPIRED'
  /** The use is for another task. */
  | 'GRANT_WRONG_TASK'
  /** The use is for another attempt. */
  | 'GRANT_WRONG_ATTEMPT'
  /** The use is of another action class. */
  | 'GRANT_WRONG_ACTION_CLASS'
  /** A path, host or repo ref of the use lies outside the grant's resource scope (or escapes it). */
  | 'GRANT_OUT_OF_SCOPE'
  /** The use names a secret handle the grant's `constraints.secret_handles` does not list (none listed: no secret at all). */
  | 'GRANT_SECRET_OUT_OF_SCOPE'
  /** The use asks for a longer wall clock than the grant's `constraints.timeout_ms`. */
  | 'GRANT_WALL_CLOCK_EXCEEDED'
  /** `max_uses` uses were already claimed. */
  | 'GRANT_EXHAUSTED'
  /** The grant was revoked. */
  | 'GRANT_REVOKED';

/** Closed set of reasons a Grant command is refused, refusal codes included. */
export type GrantErrorCode =
  | GrantRefusalCode
  /** The command needs an issued grant, and none was issued in this stream. */
  | 'GRANT_NOT_FOUND'
  /** `issue-grant` on a stream that already holds a grant. */
  | 'GRANT_ALREADY_ISSUED'
  /** The claims are not valid `CapabilityGrantClaims`. */
  | 'GRANT_CLAIMS_INVALID'
  /** A grant is minted only after a direct allow or a granted approval: neither reference is present (Hermit 16.6). */
  | 'GRANT_AUTHORITY_MISSING'
  /** `release-grant-use` of a use the grant never claimed, or already released. */
  | 'GRANT_USE_NOT_RELEASABLE';

export class GrantError extends KernelError<GrantErrorCode> {}
