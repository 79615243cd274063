import type { HttpReadScope, PrincipalRole, PrincipalType } from '@writ/contracts';

/** The roles that read everything through the HTTP API (never held so by an agent). */
export const READ_ALL_ROLES: readonly PrincipalRole[] = ['director', 'operator', 'observer'];

/**
 * What a verified caller may read through the HTTP API:
 * - a principal holding `director`, `operator` or `observer` that is not an
 *   agent reads everything (a dashboard is an observer of its own);
 * - anyone else (every agent, whatever its roles; an executor or guest user)
 *   reads only what is its own: its actions, the tasks it owns and what hangs
 *   off them (steps, attempts, approvals, grants, receipts, artifacts, cells,
 *   decisions), and its own principal.
 * An agent never reads all, as it never signs as a director or operator.
 */
export function httpReadScope(principal: { readonly principal_id: string; readonly principal_type?: PrincipalType | string; readonly roles: readonly string[] }): HttpReadScope {
  const wide = principal.principal_type !== 'agent' && principal.roles.some((role) => (READ_ALL_ROLES as readonly string[]).includes(role));
  return wide ? { kind: 'all' } : { kind: 'own', principalId: principal.principal_id };
}

/**
 * Whether `scope` may read something owned by `owner` (the task's owner, the
 * action's proposer, the principal itself); an unknown owner (null) is
 * readable by `all` only.
 */
export function mayRead(scope: HttpReadScope, owner: string | null | undefined): boolean {
  return scope.kind === 'all' || (owner !== null && owner !== undefined && owner === scope.principalId);
}
