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
  | { readonly kind: 'refused' }
  | { readonly kind: 'unobservable' };

/** `https://…`, `repo:…`, `memory:…`: any `<scheme>:` name is not a workspace path (as the grant scope classifies it). */
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const FORBIDDEN = /[\x00-\x1f\x7f\\]/;

/**
 * Classifies a resource without touching any file system. A path relative to the
 * workspace (`build`, `./src//a.ts`, `.` for the workspace itself) or absolute under
 * `/workspace` (the cell's view) is observed; `..` anywhere, `~`, a backslash, a control
 * character or any other absolute path is refused (it is not the workspace's); a URL or
 * another `<scheme>:` name is unobservable here.
 */
export function classifyResource(resource: string): ObservedResource {
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

    if (paths.length === 0) return { fingerprints: this.#reply(classified, []), observed_at: this.#deps.clock().toISOString() };
    let previous: readonly string[] | undefined;
    for (let pass = 1; pass <= this.#settings.maxPasses; pass += 1) {
      const startedAt = this.#deps.clock().toISOString();
      const walk = await this.#deps.observer.walk(request.task_id, paths);
      if (walk.stable && previous !== undefined && sameList(previous, walk.fingerprints)) {
        return { fingerprints: this.#reply(classified, walk.fingerprints), observed_at: startedAt };
      }
      previous = walk.stable ? walk.fingerprints : undefined;
    }
    throw new ExecutorError('EXECUTOR_OBSERVE_UNSTABLE', `the workspace of task ${request.task_id} kept changing while it was observed; retry later`, {
      details: { task_id: request.task_id, passes: this.#settings.maxPasses },
    });
  }

  #reply(classified: ReadonlyArray<{ resource: string; observed: ObservedResource }>, walked: readonly string[]): Record<string, string> {
    const fingerprints: Record<string, string> = {};
    let next = 0;
    for (const { resource, observed } of classified) {
      const fingerprint = observed.kind === 'path' ? walked[next++] : observed.kind === 'refused' ? REFUSED : UNOBSERVABLE;
      if (fingerprint === undefined) throw new ExecutorError('EXECUTOR_INTERNAL', `the walk answered ${walked.length} of ${next} paths`);
      Object.defineProperty(fingerprints, resource, { value: fingerprint, enumerable: true, writable: true, configurable: true });
    }
    return fingerprints;
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, index) => value === b[index]);
}
