import type { ObserveWorkspace, WorkspaceObserved } from '@writ/contracts';
import { CELL_WORKSPACE } from '../outbound/cells/cell-config.js';
import { ExecutorError } from './executor-errors.js';
import type { WorkspaceObserverPort } from './ports.js';


/** Fingerprints that are not read from the workspace. */
export const REFUSED = 'refused';
export const UNOBSERVABLE = 'unobservable';

/** What a resource name is, lexically: a workspace path, or something the executor does not (or may not) look at. */
export type ObservedResource =
  | { readonly kind: 'path'; readonly segments: readonly string[] }
  | { readonly kind: 'repo'; readonly segments: readonly string[]; readonly ref: string }
  | { readonly kind: 'refused' }
  | { readonly kind: 'unobservable' };

/** `https://…`, `repo:…`, `memory:…`: any `<scheme>:` name is not a workspace path (as the grant scope classifies it). */
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const FORBIDDEN = /[\x00-\x1f\x7f\\]/;
/** `refs/...` in whole segments, as git writes ref names. */
const REF = /^refs\/(?:[A-Za-z0-9._+@-]+\/)*[A-Za-z0-9._+@-]+$/;

/**
 * `repo:<name>[@<ref>]` (the grant's `resource_scope.repos` names): the repository whose
 * directory is `<name>` relative to the workspace (`workspace` or `.` is the workspace
 * itself), at `<ref>` (`HEAD` when none is named). Anything else is refused.
 */
function classifyRepo(resource: string): ObservedResource {
  const spec = resource.slice('repo:'.length);
  const at = spec.indexOf('@');
  const name = at === -1 ? spec : spec.slice(0, at);
  const ref = at === -1 ? 'HEAD' : spec.slice(at + 1);
  if (ref !== 'HEAD' && (!REF.test(ref) || ref.split('/').some((segment) => segment === '.' || segment === '..'))) return { kind: 'refused' };
  if (name === 'workspace' || name === '.') return { kind: 'repo', segments: [], ref };
  const where = name.length === 0 || name.startsWith('/') ? ({ kind: 'refused' } as const) : classifyResource(name);
  return where.kind === 'path' ? { kind: 'repo', segments: where.segments, ref } : { kind: 'refused' };
}

/**
 * Classifies a resource without touching any file system. A path relative to the
 * workspace (`build`, `./src//a.ts`, `.` for the workspace itself) or absolute under
 * `/workspace` (the cell's view) is observed; `..` anywhere, `~`, a backslash, a control
 * character or any other absolute path is refused (it is not the workspace's); a URL or
 * another `<scheme>:` name is unobservable here.
 */
export function classifyResource(resource: string): ObservedResource {
  if (resource.startsWith('repo:')) return classifyRepo(resource);
  if (SCHEME.test(resource)) return { kind: 'unobservable' };
  if (resource.length === 0 || FORBIDDEN.test(resource) || resource.startsWith('~')) return { kind: 'refused' };
  let rest = resource;
  if (resource.startsWith('/')) {
    if (resource !== CELL_WORKSPACE && !resource.startsWith(`${CELL_WORKSPACE}/`)) return { kind: 'refused' };
    rest = resource.slice(CELL_WORKSPACE.length);
  }
  const segments = rest.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) return { kind: 'refused' };
  return { kind: 'path', segments };
}

export interface ObserveWorkspaceSettings {
  /** Walks until two consecutive ones agree (at least 2). */
  readonly maxPasses: number;
}

export interface ObserveWorkspaceDeps {
  readonly observer: WorkspaceObserverPort;
  readonly clock: () => Date;
}

/**
 * The read-only observation behind approval's state witness (Hermit 16.8): it runs
 * nothing in the cell, needs no grant and appends nothing. It does not wait for the
 * task's execution queue; instead a state is reported only when two consecutive walks
 * agree and neither saw anything change while reading (a file's size, mtime or ctime
 * moved during its hash, a directory's entries changed during its listing, an entry
 * vanished). Otherwise EXECUTOR_OBSERVE_UNSTABLE, and the caller retries later.
 */
export class ObserveWorkspaceHandler {
  readonly #deps: ObserveWorkspaceDeps;
  readonly #settings: ObserveWorkspaceSettings;

  constructor(deps: ObserveWorkspaceDeps, settings: ObserveWorkspaceSettings) {
    this.#deps = deps;
    this.#settings = { maxPasses: Math.max(2, settings.maxPasses) };
  }

  async observe(request: ObserveWorkspace): Promise<WorkspaceObserved> {
    const resources = [...new Set(request.resources)];
    const classified = resources.map((resource) => ({ resource, observed: classifyResource(resource) }));
    const paths = classified.flatMap(({ observed }) => (observed.kind === 'path' ? [observed.segments] : []));
    const repos = classified.flatMap(({ observed }) => (observed.kind === 'repo' ? [{ segments: observed.segments, ref: observed.ref }] : []));

    if (paths.length === 0 && repos.length === 0) return { fingerprints: this.#reply(classified, [], []), observed_at: this.#deps.clock().toISOString() };
    let previous: readonly string[] | undefined;
    for (let pass = 1; pass <= this.#settings.maxPasses; pass += 1) {
      const startedAt = this.#deps.clock().toISOString();
      const walk = await this.#deps.observer.walk(request.task_id, paths);
      const refs = repos.length === 0 ? [] : await this.#deps.observer.refs(request.task_id, repos);
      const seen = [...walk.fingerprints, ...refs];
      if (walk.stable && previous !== undefined && sameList(previous, seen)) {
        return { fingerprints: this.#reply(classified, walk.fingerprints, refs), observed_at: startedAt };
      }
      previous = walk.stable ? seen : undefined;
    }
    throw new ExecutorError('EXECUTOR_OBSERVE_UNSTABLE', `the workspace of task ${request.task_id} kept changing while it was observed; retry later`, {
      details: { task_id: request.task_id, passes: this.#settings.maxPasses },
    });
  }

  #reply(classified: ReadonlyArray<{ resource: string; observed: ObservedResource }>, walked: readonly string[], refs: readonly string[]): Record<string, string> {
    const fingerprints: Record<string, string> = {};
    let next = 0;
    let nextRef = 0;
    for (const { resource, observed } of classified) {
      const fingerprint = observed.kind === 'path' ? walked[next++] : observed.kind === 'repo' ? refs[nextRef++] : observed.kind === 'refused' ? REFUSED : UNOBSERVABLE;
      if (fingerprint === undefined) throw new ExecutorError('EXECUTOR_INTERNAL', `the walk answered ${walked.length} of ${next} paths and ${refs.length} of ${nextRef} refs`);
      Object.defineProperty(fingerprints, resource, { value: fingerprint, enumerable: true, writable: true, configurable: true });
    }
    return fingerprints;
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, index) => value === b[index]);
}
