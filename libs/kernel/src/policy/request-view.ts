import { IMPORTANT_ACTION_CLASSES, safeParseRollbackParams, type ActionRequest } from '@writ/contracts';
import { compileGlob, matchAnyGlob, type CompiledGlob } from '../shared/glob.js';
import { normalizePath, type NormalizedPath } from '../shared/paths.js';
import { analyzeCommand, type CommandAnalysis } from './destructive-commands.js';
import { isEgressHostPattern } from './egress.js';
import { globCovers, globsIntersect, hasGlobChars } from './glob-targets.js';
import { distinct } from './distinct.js';
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
  /**
   * The task's Sacred Scope exceptions (TaskSpec.sacred_exceptions): a sacred
   * path is writable only when these AND the profile's sacred_exceptions name
   * it, and it lies inside files_owned.
   */
  readonly sacred_exceptions?: readonly string[];
  /** Narrows the profile's egress ceiling (intersection); absent means no narrowing. Never widens. */
  readonly egress_hosts?: readonly string[];
  /** Narrows the profile's secret handles (intersection); absent means no narrowing. Never widens. */
  readonly secret_handles?: readonly string[];
  /** Narrows the profile's wall-clock ceiling (the smaller wins). */
  readonly max_wall_clock_ms?: number;
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
  readonly source: 'params.path' | 'params.cwd' | 'target_resources' | 'command' | 'params.steps';
  /**
   * False when a command's target cannot be placed: after a `cd`, behind a
   * `-C dir`, or spelled with an expansion (`$X`, backticks, `{a,b}`, `[ab]`).
   */
  readonly placeable: boolean;
  /** A command target with `*` or `?`: it names every path it may expand to. */
  readonly pattern: boolean;
}

/** Secret handles a request names (`params.secret_handle`, `params.secret_handles`). */
export interface NamedSecretHandles {
  readonly names: readonly string[];
  /** A handle field that is not a string (or a list of strings). */
  readonly malformed: readonly string[];
}

/** What policy reads of a `rollback` request's params (RollbackParams). */
export interface RollbackView {
  /** Why the params are not RollbackParams; undefined when they are. */
  readonly problem: string | undefined;
  /** Step paths no target resource names or contains: the grant's scope and the state witness cover target_resources only. */
  readonly untargeted: readonly string[];
}

/** A request as policy sees it: every path it touches, normalized once. */
export interface RequestView {
  readonly request: ActionRequest;
  readonly paths: readonly TouchedPath[];
  readonly urls: readonly string[];
  /** Non-path resources named by a local file action (a URL or `repo:` where a path belongs). */
  readonly misplaced: readonly string[];
  /** The argv of an execute_command, or of a vcs_mutation that carries one. */
  readonly command: CommandAnalysis | null;
  readonly filesOwned: readonly CompiledGlob[];
  readonly taskSacredExceptions: readonly CompiledGlob[];
  readonly secretHandles: NamedSecretHandles;
  readonly timeoutMs: number | undefined;
  /** A `rollback` request's steps (their paths are in `paths`, as writes); null for any other class. */
  readonly rollback: RollbackView | null;
}

/** Classes whose resources are local paths only: a URL or reference among them is misplaced. A rollback undoes workspace changes only. */
const LOCAL_FILE_CLASSES = new Set(['read_local', 'write_local', 'delete_local', 'rollback']);

function compileFactGlobs(field: string, patterns: readonly string[]): CompiledGlob[] {
  return patterns.map((pattern) => {
    const glob = typeof pattern === 'string' ? compileGlob(pattern) : undefined;
    if (glob === undefined) {
      throw new PolicyError('POLICY_FACTS_INVALID', `${field} pattern ${JSON.stringify(pattern)} reaches outside the workspace`, { details: { field, pattern } });
    }
    return glob;
  });
}

export function compileFilesOwned(patterns: readonly string[]): CompiledGlob[] {
  return compileFactGlobs('files_owned', patterns);
}

/** Refuses malformed facts (they come from the task, not from the agent's request): POLICY_FACTS_INVALID. */
function checkFacts(facts: PolicyFacts): void {
  if (facts.workspace_root !== undefined && !facts.workspace_root.startsWith('/')) {
    throw new PolicyError('POLICY_FACTS_INVALID', 'workspace_root must be an absolute path', { details: { workspace_root: facts.workspace_root } });
  }
  for (const host of facts.egress_hosts ?? []) {
    if (typeof host !== 'string' || !isEgressHostPattern(host)) throw new PolicyError('POLICY_FACTS_INVALID', `egress host pattern ${JSON.stringify(host)} is not "*", "host" or "*.host"`, { details: { egress_host: host } });
  }
  for (const handle of facts.secret_handles ?? []) {
    if (typeof handle !== 'string') throw new PolicyError('POLICY_FACTS_INVALID', 'secret handles must be strings', { details: { secret_handle: handle } });
  }
  const wall = facts.max_wall_clock_ms;
  if (wall !== undefined && !(Number.isInteger(wall) && wall >= 1)) {
    throw new PolicyError('POLICY_FACTS_INVALID', 'max_wall_clock_ms must be a positive integer', { details: { max_wall_clock_ms: wall } });
  }
}

function namedSecretHandles(params: ActionRequest['params']): NamedSecretHandles {
  const names: string[] = [];
  const malformed: string[] = [];
  const single: unknown = params.secret_handle;
  const many: unknown = params.secret_handles;
  if (single !== undefined) {
    if (typeof single === 'string') names.push(single);
    else malformed.push('params.secret_handle');
  }
  if (many !== undefined) {
    if (Array.isArray(many) && many.every((name) => typeof name === 'string')) names.push(...(many as string[]));
    else malformed.push('params.secret_handles');
  }
  return { names: distinct(names), malformed };
}

/** Shell expansions whose result the kernel cannot know: variables, substitutions, braces, bracket classes. */
const UNPLACEABLE = /[$`{[]/;

export function viewRequest(request: ActionRequest, facts: PolicyFacts): RequestView {
  checkFacts(facts);
  const root = facts.workspace_root;
  const cls = request.action_class;
  const writes = cls === 'write_local' || cls === 'delete_local' || (cls !== 'execute_command' && IMPORTANT_ACTION_CLASSES.includes(cls));
  const paths: TouchedPath[] = [];
  const urls: string[] = [];
  const misplaced: string[] = [];
  const params = request.params;
  const literal = (raw: string, source: TouchedPath['source'], write: boolean): TouchedPath => ({ raw, normalized: normalizePath(raw, { root }), write, source, placeable: true, pattern: false });
  if (typeof params.path === 'string') paths.push(literal(params.path, 'params.path', writes));
  for (const resource of request.target_resources) {
    const kind = resourceKind(resource);
    if (kind === 'path') {
      if (resource === params.path) continue;
      paths.push(literal(resource, 'target_resources', writes));
    } else if (kind === 'url') {
      urls.push(resource);
      if (LOCAL_FILE_CLASSES.has(cls)) misplaced.push(resource);
    } else if (LOCAL_FILE_CLASSES.has(cls)) misplaced.push(resource);
  }
  if (typeof params.url === 'string' && !urls.includes(params.url)) urls.push(params.url);
  const rollback = cls === 'rollback' ? viewRollback(request, paths, (raw) => literal(raw, 'params.steps', true)) : null;
  let command: CommandAnalysis | null = null;
  if ((cls === 'execute_command' || cls === 'vcs_mutation') && Array.isArray(params.argv)) {
    const cwd = typeof params.cwd === 'string' ? normalizePath(params.cwd, { root }) : normalizePath('.');
    if (typeof params.cwd === 'string') paths.push({ raw: params.cwd, normalized: cwd, write: false, source: 'params.cwd', placeable: true, pattern: false });
    command = analyzeCommand(params.argv);
    for (const target of command.write_targets) {
      const placeable = target.cwd_known && !UNPLACEABLE.test(target.path);
      const normalized = cwd.ok ? normalizePath(target.path, { root, cwd: cwd.segments }) : cwd;
      const pattern = normalized.ok && normalized.segments.some(hasGlobChars);
      paths.push({ raw: target.path, normalized, write: true, source: 'command', placeable, pattern });
    }
  }
  return {
    request,
    paths,
    urls,
    misplaced,
    command,
    filesOwned: compileFilesOwned(facts.files_owned),
    taskSacredExceptions: compileFactGlobs('sacred_exceptions', facts.sacred_exceptions ?? []),
    secretHandles: namedSecretHandles(params),
    timeoutMs: typeof params.timeout_ms === 'number' ? params.timeout_ms : undefined,
    rollback,
  };
}

/** True when `path` is `target` or lies below it (whole segments). */
function within(path: readonly string[], target: readonly string[]): boolean {
  return target.length <= path.length && target.every((segment, i) => segment === path[i]);
}

/**
 * A rollback's steps: each step path is a write (judged like a write_local's
 * or delete_local's path), added to `paths` unless a target resource spells
 * it already; a step no target resource names or contains is reported.
 */
function viewRollback(request: ActionRequest, paths: TouchedPath[], touched: (raw: string) => TouchedPath): RollbackView {
  const params = request.params;
  const parsed = safeParseRollbackParams({ receipt_id: params['receipt_id'], receipt_hash: params['receipt_hash'], steps: params['steps'] });
  if (!parsed.ok) return { problem: parsed.error.issues.map((issue) => `${issue.path || '(params)'}: ${issue.message}`).join('; '), untargeted: [] };
  const targets: (readonly string[])[] = [];
  for (const path of paths) if (path.source === 'target_resources' && path.normalized.ok) targets.push(path.normalized.segments);
  const untargeted: string[] = [];
  for (const step of parsed.value.steps) {
    const path = touched(step.path);
    if (!paths.some((known) => known.raw === step.path)) paths.push(path);
    const normalized = path.normalized;
    if (normalized.ok && !targets.some((target) => within(normalized.segments, target))) untargeted.push(step.path);
  }
  return { problem: undefined, untargeted };
}

/**
 * True when every path `path` may stand for matches one of `globs` (for a
 * command's pattern target, every expansion). Never true for a path that
 * cannot be placed or was refused.
 */
export function coveredBy(globs: readonly CompiledGlob[], path: TouchedPath): boolean {
  if (!path.placeable || !path.normalized.ok) return false;
  const segments = path.normalized.segments;
  return path.pattern ? globs.some((glob) => globCovers(glob, segments)) : matchAnyGlob(globs, segments, path.normalized.path);
}

/** True when some path `path` may stand for matches one of `globs` (a pattern target: any expansion). */
export function touches(globs: readonly CompiledGlob[], path: TouchedPath): boolean {
  if (!path.normalized.ok) return false;
  const segments = path.normalized.segments;
  return path.pattern ? globs.some((glob) => globsIntersect(glob.segments, segments)) : matchAnyGlob(globs, segments, path.normalized.path);
}

/** True when `path` may be written under `files_owned`. */
export function insideFilesOwned(view: RequestView, path: TouchedPath): boolean {
  return coveredBy(view.filesOwned, path);
}
