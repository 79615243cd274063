import { IMPORTANT_ACTION_CLASSES, type ActionRequest } from '@writ/contracts';
import { compileGlob, matchAnyGlob, type CompiledGlob } from '../shared/glob.js';
import { normalizePath, type NormalizedPath } from '../shared/paths.js';
import { analyzeCommand, type CommandAnalysis } from './destructive-commands.js';
import { PolicyError } from './policy.errors.js';

/** What policy knows besides the request and the profile. */
export interface PolicyFacts {
  /** The task's write scope: anchored globs relative to the workspace root (OmegaOS `files_owned`). */
  readonly files_owned: readonly string[];
  /** Absolute path of the workspace (cell home); absolute request paths under it are read as relative. */
  readonly workspace_root?: string;
  /** Extra globs of sensitive paths that raise risk (the profile's sacred and secret paths always count). */
  readonly sensitive_paths?: readonly string[];
  /** Id for the rewritten request of a downgrade; derived from the original id when absent. */
  readonly rewritten_action_request_id?: string;
}

export type ResourceKind = 'path' | 'url' | 'repo' | 'memory';

/** How a resource name is read: `scheme://...` is a URL, `repo:` and `memory:` are references, anything else a path. */
export function resourceKind(resource: string): ResourceKind {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(resource)) return 'url';
  if (resource.startsWith('repo:')) return 'repo';
  if (resource.startsWith('memory:')) return 'memory';
  return 'path';
}

export interface TouchedPath {
  /** As spelled in the request or the command. */
  readonly raw: string;
  readonly normalized: NormalizedPath;
  readonly write: boolean;
  readonly source: 'params.path' | 'params.cwd' | 'target_resources' | 'command';
  /** False when a command's target cannot be placed (after `cd`, or spelled with an expansion). */
  readonly placeable: boolean;
}

/** A request as policy sees it: every path it touches, normalized once. */
export interface RequestView {
  readonly request: ActionRequest;
  readonly paths: readonly TouchedPath[];
  readonly urls: readonly string[];
  /** Non-path resources named by a local file action (a URL or `repo:` where a path belongs). */
  readonly misplaced: readonly string[];
  readonly command: CommandAnalysis | null;
  readonly filesOwned: readonly CompiledGlob[];
}

const LOCAL_FILE_CLASSES = new Set(['read_local', 'write_local', 'delete_local']);

export function compileFilesOwned(patterns: readonly string[]): CompiledGlob[] {
  return patterns.map((pattern) => {
    const glob = compileGlob(pattern);
    if (glob === undefined) {
      throw new PolicyError('POLICY_FACTS_INVALID', `files_owned pattern ${JSON.stringify(pattern)} reaches outside the workspace`, { details: { pattern } });
    }
    return glob;
  });
}

export function viewRequest(request: ActionRequest, facts: PolicyFacts): RequestView {
  if (facts.workspace_root !== undefined && !facts.workspace_root.startsWith('/')) {
    throw new PolicyError('POLICY_FACTS_INVALID', 'workspace_root must be an absolute path', { details: { workspace_root: facts.workspace_root } });
  }
  const root = facts.workspace_root;
  const cls = request.action_class;
  const writes = cls === 'write_local' || cls === 'delete_local' || (cls !== 'execute_command' && IMPORTANT_ACTION_CLASSES.includes(cls));
  const paths: TouchedPath[] = [];
  const urls: string[] = [];
  const misplaced: string[] = [];
  const params = request.params;
  if (typeof params.path === 'string') paths.push({ raw: params.path, normalized: normalizePath(params.path, { root }), write: writes, source: 'params.path', placeable: true });
  for (const resource of request.target_resources) {
    const kind = resourceKind(resource);
    if (kind === 'path') {
      if (resource === params.path) continue;
      paths.push({ raw: resource, normalized: normalizePath(resource, { root }), write: writes, source: 'target_resources', placeable: true });
    } else if (kind === 'url') {
      urls.push(resource);
      if (LOCAL_FILE_CLASSES.has(cls)) misplaced.push(resource);
    } else if (LOCAL_FILE_CLASSES.has(cls)) misplaced.push(resource);
  }
  if (typeof params.url === 'string' && !urls.includes(params.url)) urls.push(params.url);
  let command: CommandAnalysis | null = null;
  if (cls === 'execute_command' && Array.isArray(params.argv)) {
    const cwd = typeof params.cwd === 'string' ? normalizePath(params.cwd, { root }) : normalizePath('.');
    if (typeof params.cwd === 'string') paths.push({ raw: params.cwd, normalized: cwd, write: false, source: 'params.cwd', placeable: true });
    command = analyzeCommand(params.argv);
    for (const target of command.write_targets) {
      const placeable = target.cwd_known && !target.path.includes('$') && !target.path.includes('`');
      const normalized = cwd.ok ? normalizePath(target.path, { root, cwd: cwd.segments }) : cwd;
      paths.push({ raw: target.path, normalized, write: true, source: 'command', placeable });
    }
  }
  return { request, paths, urls, misplaced, command, filesOwned: compileFilesOwned(facts.files_owned) };
}

/** True when `path` may be written under `files_owned`. */
export function insideFilesOwned(view: RequestView, path: TouchedPath): boolean {
  return path.placeable && path.normalized.ok && matchAnyGlob(view.filesOwned, path.normalized.segments);
}
