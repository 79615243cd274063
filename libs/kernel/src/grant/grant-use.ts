import type { ActionClass, CapabilityGrantClaims } from '@writ/contracts';
import { compileGlob, matchGlob } from '../shared/glob.js';
import { instantMs } from '../shared/instant.js';
import { normalizePath } from '../shared/paths.js';
import { GrantError, type GrantRefusalCode } from './grant.errors.js';

/** A repository ref the use touches. */
export interface RepoRefUse {
  readonly repo: string;
  readonly ref: string;
}

/** Everything a use touches, as the executor will touch it. */
export interface GrantResources {
  /** Paths relative to the cell home. */
  readonly paths?: readonly string[];
  /** `host` or `host:port` of every network destination. */
  readonly hosts?: readonly string[];
  readonly repos?: readonly RepoRefUse[];
}

/** One intended use of a grant, checked before any side effect. */
export interface GrantUse {
  readonly task_id: string;
  readonly attempt_id: string;
  readonly action_class: ActionClass;
  readonly resources: GrantResources;
  /** Secret handles the use will resolve (the request's `params.secret_handle(s)`); each must be in the grant's `constraints.secret_handles`. */
  readonly secret_handles?: readonly string[];
  /** Wall clock the use asks for (`params.timeout_ms`); at most the grant's `constraints.timeout_ms` when it sets one. */
  readonly wall_clock_ms?: number;
  /** RFC 3339 instant of the check (the executor's clock). */
  readonly now: string;
}

export type GrantUseCheck =
  | { readonly ok: true; readonly use_no: number }
  | { readonly ok: false; readonly code: Exclude<GrantRefusalCode, 'GRANT_REVOKED'>; readonly message: string; readonly details: Readonly<Record<string, unknown>> };

const GLOB_CHARS = ['*', '?'];

/**
 * True when `path` lies inside one of the grant's path scopes. A scope
 * without wildcards covers itself and everything below it (segment-wise
 * prefix, so `src` never covers `src2`); a scope with `*`, `?` or `**` is an
 * anchored glob. Both sides are normalized first: `..` above the cell home,
 * absolute paths, `~` and backslashes are never in scope.
 */
export function pathInScope(scopes: readonly string[], path: string): boolean {
  const normalized = normalizePath(path);
  if (!normalized.ok) return false;
  return scopes.some((scope) => {
    if (GLOB_CHARS.some((c) => scope.includes(c))) {
      const glob = compileGlob(scope);
      return glob !== undefined && matchGlob(glob, normalized.segments);
    }
    const base = normalizePath(scope);
    if (!base.ok) return false;
    return base.segments.length <= normalized.segments.length && base.segments.every((segment, i) => normalized.segments[i] === segment);
  });
}

const HOST = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

function splitHostPort(value: string): { host: string; port: string | null } | undefined {
  const lower = value.toLowerCase();
  const colon = lower.lastIndexOf(':');
  const host = colon < 0 ? lower : lower.slice(0, colon);
  const port = colon < 0 ? null : lower.slice(colon + 1);
  if (port !== null && !/^[0-9]{1,5}$/.test(port)) return undefined;
  return { host, port };
}

/**
 * True when `host` (`name` or `name:port`) is allowed by one of `patterns`:
 * exact, case-insensitive equality of the name, or `*.suffix` for names with
 * at least one more label; ports must be equal (a pattern without a port
 * allows only uses without an explicit port). Never a substring match.
 */
export function hostInScope(patterns: readonly string[], host: string): boolean {
  const use = splitHostPort(host);
  if (use === undefined || !HOST.test(use.host)) return false;
  return patterns.some((pattern) => {
    const allowed = splitHostPort(pattern);
    if (allowed === undefined || allowed.port !== use.port) return false;
    if (allowed.host.startsWith('*.')) {
      const suffix = allowed.host.slice(1);
      return use.host.length > suffix.length && use.host.endsWith(suffix);
    }
    return allowed.host === use.host;
  });
}

/** True when the repo is named exactly by a scope whose ref patterns match `ref`. */
export function repoRefInScope(scopes: CapabilityGrantClaims['resource_scope']['repos'], use: RepoRefUse): boolean {
  const ref = normalizePath(use.ref);
  if (!ref.ok) return false;
  return (scopes ?? []).some(
    (scope) =>
      scope.repo === use.repo &&
      scope.refs.some((pattern) => {
        const glob = compileGlob(pattern);
        return glob !== undefined && matchGlob(glob, ref.segments);
      }),
  );
}

function refuse(code: Exclude<GrantRefusalCode, 'GRANT_REVOKED'>, message: string, details: Record<string, unknown> = {}): GrantUseCheck {
  return { ok: false, code, message, details };
}

/**
 * Checks one intended use of a grant against its claims, before any side
 * effect (DESIGN invariant 3). Pure: the executor passes its clock reading in
 * `use.now` and the number of uses already claimed in the log. Returns the
 * use number on success, or the first refusal in this order: validity window,
 * task, attempt, action class, resource scope (paths, egress hosts, repos),
 * secret handles, wall clock, remaining uses.
 */
export function checkGrantUse(claims: CapabilityGrantClaims, use: GrantUse, consumedCount: number): GrantUseCheck {
  const nowSeconds = Math.floor(instantMs(use.now, 'use.now') / 1000);
  if (claims.nbf !== undefined && nowSeconds < claims.nbf) return refuse('GRANT_NOT_YET_VALID', `grant ${claims.jti} is valid from ${claims.nbf}`, { nbf: claims.nbf });
  if (nowSeconds >= claims.exp) return refuse('GRANT_EXPIRED', `grant ${claims.jti} expired at ${claims.exp}`, { exp: claims.exp });
  if (use.task_id !== claims.task_id) return refuse('GRANT_WRONG_TASK', `grant ${claims.jti} is bound to task ${claims.task_id}`, { expected: claims.task_id, actual: use.task_id });
  if (use.attempt_id !== claims.attempt_id) {
    return refuse('GRANT_WRONG_ATTEMPT', `grant ${claims.jti} is bound to attempt ${claims.attempt_id}`, { expected: claims.attempt_id, actual: use.attempt_id });
  }
  if (use.action_class !== claims.action_class) {
    return refuse('GRANT_WRONG_ACTION_CLASS', `grant ${claims.jti} authorizes ${claims.action_class} only`, { expected: claims.action_class, actual: use.action_class });
  }
  const scope = claims.resource_scope;
  const paths = (use.resources.paths ?? []).filter((path) => !pathInScope(scope.paths, path));
  const hosts = (use.resources.hosts ?? []).filter((host) => !hostInScope(scope.hosts, host));
  const repos = (use.resources.repos ?? []).filter((repo) => !repoRefInScope(scope.repos, repo));
  if (paths.length + hosts.length + repos.length > 0) {
    return refuse('GRANT_OUT_OF_SCOPE', `grant ${claims.jti} does not cover ${[...paths, ...hosts, ...repos.map((r) => `${r.repo}@${r.ref}`)].join(', ')}`, {
      paths,
      hosts,
      repos,
    });
  }
  const granted = claims.constraints?.secret_handles ?? [];
  const secrets = (use.secret_handles ?? []).filter((handle) => !granted.includes(handle));
  if (secrets.length > 0) {
    return refuse('GRANT_SECRET_OUT_OF_SCOPE', `grant ${claims.jti} does not allow the secret handle(s) ${secrets.join(', ')}`, { secret_handles: secrets, granted: [...granted] });
  }
  const limit = claims.constraints?.timeout_ms;
  if (use.wall_clock_ms !== undefined && (!Number.isSafeInteger(use.wall_clock_ms) || use.wall_clock_ms < 1 || (limit !== undefined && use.wall_clock_ms > limit))) {
    return refuse('GRANT_WALL_CLOCK_EXCEEDED', `grant ${claims.jti} allows at most ${limit ?? 'a positive whole number of'} ms of wall clock, the use asks for ${use.wall_clock_ms}`, {
      wall_clock_ms: use.wall_clock_ms,
      timeout_ms: limit ?? null,
    });
  }
  if (!Number.isInteger(consumedCount) || consumedCount < 0 || consumedCount >= claims.max_uses) {
    return refuse('GRANT_EXHAUSTED', `grant ${claims.jti} allows ${claims.max_uses} use(s)`, { max_uses: claims.max_uses, consumed: consumedCount });
  }
  return { ok: true, use_no: consumedCount + 1 };
}

/** Like `checkGrantUse`, throwing a `GrantError` carrying the refusal code. */
export function assertGrantUse(claims: CapabilityGrantClaims, use: GrantUse, consumedCount: number): number {
  const check = checkGrantUse(claims, use, consumedCount);
  if (!check.ok) throw new GrantError(check.code, check.message, { details: { ...check.details } });
  return check.use_no;
}
