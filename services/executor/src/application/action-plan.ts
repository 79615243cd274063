import { MemoryWriteParams, safeParseRollbackParams, type ActionRequest, type CapabilityGrantClaims, type RollbackParams } from '@writ/contracts';
import type { GrantResources, RepoRefUse } from '@writ/kernel';
import { httpExchangeArgv, planHttpExchange, type HttpExchange, type HttpRefusalCode } from './http-exchange.js';
import { ROLLBACK_ARGV } from './rollback-run.js';

/** Host (and explicit port) of a URL as grant scopes name it: `api.example.com`, `api.example.com:8443`. */
export function urlHost(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname.toLowerCase();
    return parsed.port === '' ? host : `${host}:${parsed.port}`;
  } catch {
    // Not a URL: kept as given, so that it matches no host pattern and the use is refused.
    return url;
  }
}

const URL_RESOURCE = /^https?:\/\//i;
const REPO_RESOURCE = /^repo:(.+)@([^@]+)$/;
/** `memory:<scope>` and other `<scheme>:` names: not filesystem paths, and no grant scope can name them. */
const OTHER_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * Everything a use touches, as the grant's resource scope must cover it —
 * classified as the approval service classifies a request when it mints the
 * scope: each target resource (`http(s)://…` → its host, `repo:<name>@<ref>` →
 * a repo ref, another `<scheme>:` name → nothing a scope can express, anything
 * else → a path relative to the workspace), plus `params.path` and the host
 * of `params.url`, and the path of every step of a rollback (its params name
 * them; the grant must cover each). A malformed `repo:` or URL is kept as
 * given, so that no scope covers it and the use is refused. A command's `cwd` is not a resource
 * it touches (the scope would widen to a whole directory for `cwd: '.'`); the
 * cell confines it to the workspace and refuses escapes (CELL_PATH_ESCAPE).
 */
export function useResources(request: ActionRequest): GrantResources {
  const paths = new Set<string>();
  const hosts = new Set<string>();
  const repos = new Map<string, RepoRefUse>();
  for (const resource of request.target_resources) {
    const repo = REPO_RESOURCE.exec(resource);
    if (URL_RESOURCE.test(resource)) hosts.add(urlHost(resource));
    else if (repo !== null) repos.set(resource, { repo: repo[1] as string, ref: repo[2] as string });
    else if (resource.startsWith('repo:')) repos.set(resource, { repo: resource.slice('repo:'.length), ref: '' });
    else if (!OTHER_SCHEME.test(resource)) paths.add(resource);
  }
  const { path, url } = request.params;
  if (typeof path === 'string') paths.add(path);
  if (typeof url === 'string') hosts.add(urlHost(url));
  if (request.action_class === 'rollback') for (const stepPath of rollbackStepPaths(request.params)) paths.add(stepPath);
  return { paths: [...paths], hosts: [...hosts], repos: [...repos.values()] };
}

/** The `path` of every step a rollback's params list, whatever else is wrong with them (so the grant is checked against each). */
function rollbackStepPaths(params: ActionRequest['params']): string[] {
  const steps: unknown = params['steps'];
  if (!Array.isArray(steps)) return [];
  const out: string[] = [];
  for (const step of steps) {
    const path = typeof step === 'object' && step !== null ? (step as { path?: unknown }).path : undefined;
    if (typeof path === 'string') out.push(path);
  }
  return out;
}

/** A rollback's params as RollbackParams, or why they are not (extra keys such as `timeout_ms` are not its business). */
export function rollbackParamsOf(params: ActionRequest['params']): { readonly ok: true; readonly value: RollbackParams } | { readonly ok: false; readonly message: string } {
  const parsed = safeParseRollbackParams({ receipt_id: params['receipt_id'], receipt_hash: params['receipt_hash'], steps: params['steps'] });
  return parsed.ok ? parsed : { ok: false, message: parsed.error.message };
}

/** The secret handles a request names (`params.secret_handle`, `params.secret_handles`), strings only, deduplicated. */
export function requestedSecretHandles(params: ActionRequest['params']): string[] {
  const names: string[] = [];
  if (typeof params['secret_handle'] === 'string') names.push(params['secret_handle']);
  const many: unknown = params['secret_handles'];
  if (Array.isArray(many)) for (const name of many) if (typeof name === 'string') names.push(name);
  return [...new Set(names)];
}

/**
 * The capabilities a use asks for beyond its resources, as the kernel checks them
 * against the grant: the secret handles it names and the wall clock it asks for.
 */
export function useCapabilities(request: ActionRequest): { secret_handles: string[]; wall_clock_ms?: number } {
  const asked = request.params.timeout_ms;
  return { secret_handles: requestedSecretHandles(request.params), ...(typeof asked === 'number' ? { wall_clock_ms: asked } : {}) };
}

export interface ExecLimits {
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  /** The grant's `resource_scope.hosts`: the action's cell gets egress to these only (absent or empty: no network). */
  readonly egressHosts?: readonly string[];
  /** `WRIT_EXECUTOR_EXTRA_CA_FILE`'s certificates (PEM): trusted by an https network action besides the image's public bundle. */
  readonly extraCaPem?: string;
}

/**
 * Wall clock and output cap of one use: the grant's own limits when it sets
 * them (`constraints.timeout_ms`, `max_output_bytes`), else the service
 * defaults; a request may ask for a shorter timeout (`params.timeout_ms`), never a longer one.
 */
export function execLimits(request: ActionRequest, claims: CapabilityGrantClaims, defaults: { readonly actionTimeoutMs: number; readonly outputCapBytes: number; readonly extraCaPem?: string }): ExecLimits {
  const granted = claims.constraints?.timeout_ms ?? defaults.actionTimeoutMs;
  const asked = request.params.timeout_ms;
  return {
    timeoutMs: Math.min(granted, typeof asked === 'number' ? asked : granted),
    maxOutputBytes: Math.min(defaults.outputCapBytes, claims.constraints?.max_output_bytes ?? defaults.outputCapBytes),
    ...((claims.resource_scope.hosts ?? []).length > 0 ? { egressHosts: [...(claims.resource_scope.hosts ?? [])] } : {}),
    ...(defaults.extraCaPem === undefined ? {} : { extraCaPem: defaults.extraCaPem }),
  };
}

export type WorkspacePath = { readonly ok: true; readonly relative: string } | { readonly ok: false; readonly message: string };

/**
 * A file action's path, lexically: relative to the workspace, without `..`, `~`,
 * backslashes or control characters, and naming something below the workspace
 * root. `./a//b` becomes `a/b`. Symlinks are checked on the host when the action runs.
 */
export function workspacePath(path: string): WorkspacePath {
  if (path.length === 0 || /[\x00-\x1f\x7f]/.test(path)) return { ok: false, message: 'the path is empty or holds control characters' };
  if (path.startsWith('/')) return { ok: false, message: `${path} is absolute: give a path relative to the workspace` };
  if (path.includes('\\')) return { ok: false, message: `${path} holds a backslash` };
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) return { ok: false, message: `${path} climbs with ".."` };
  if (segments[0] === '~') return { ok: false, message: `${path} starts at a home directory` };
  if (segments.length === 0) return { ok: false, message: `${path} names the workspace itself` };
  return { ok: true, relative: segments.join('/') };
}

/** Writes stdin to "$1", creating its parent directories (run by the cell's busybox sh, as the cell user). */
export const WRITE_LOCAL_SCRIPT = 'set -e; mkdir -p "$(dirname "$1")"; cat > "$1"';
/** Removes "$1": a directory recursively (never following links), anything else as itself. */
export const DELETE_LOCAL_SCRIPT = 'if [ -d "$1" ] && [ ! -h "$1" ]; then rm -r "$1"; else rm "$1"; fi';

/**
 * Runs a vcs_mutation's git in the cell: "$1" is the proposer (author and committer when the
 * repository names none), the rest git's arguments. No system config, no prompts, no credential
 * helpers or ssh: a cell has no credentials, and its network (if any) is the egress proxy.
 */
export const VCS_SCRIPT = [
  'export GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false SSH_ASKPASS=/bin/false GIT_SSH_COMMAND=/bin/false GIT_CONFIG_GLOBAL=/dev/null',
  // The workspace root belongs to the cell's harness, not the cell user: git's ownership check guards against other users' repositories, and a cell has none.
  "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'",
  'who=$1; shift',
  'git config user.name >/dev/null 2>&1 || export GIT_AUTHOR_NAME="$who" GIT_COMMITTER_NAME="$who"',
  'git config user.email >/dev/null 2>&1 || export GIT_AUTHOR_EMAIL="$who@writ.invalid" GIT_COMMITTER_EMAIL="$who@writ.invalid"',
  'exec git "$@"',
].join('\n');

export type PlanRefusalCode = 'EXECUTOR_ACTION_UNSUPPORTED' | 'EXECUTOR_PARAMS_INVALID' | 'EXECUTOR_PATH_ESCAPE' | HttpRefusalCode;

/** How the executor will run one use in the task's cell, or why it cannot. */
export type ActionPlan =
  | {
      readonly kind: 'run';
      readonly argv: readonly string[];
      /** Relative to /workspace; the workspace root when absent. */
      readonly cwd?: string;
      readonly stdin?: Uint8Array;
      readonly timeoutMs: number;
      readonly maxOutputBytes: number;
      /** Workspace-relative path a file action touches: refused at run time if reached through a symlink. */
      readonly filePath?: string;
      /** What the file action does to `filePath`: checked against its seat's role in the cell (cell-areas.ts). */
      readonly fileAccess?: 'read' | 'write';
      /**
       * Workspace-relative paths the action is about to change: before it runs, each regular file
       * there (or below, for a directory) is kept as a `file.preimage` artifact (rollback-run.ts).
       */
      readonly preimagePaths?: readonly string[];
      /**
       * A rollback: its steps (paths as the receipt spells them, checked lexically). `argv` is the
       * script's prefix; the exec is built once the log backs the receipt, no path drifted and the
       * pre-images are fetched (rollback-run.ts).
       */
      readonly rollback?: RollbackParams;
      /** Egress hosts of the grant (see ExecLimits). */
      readonly egressHosts?: readonly string[];
      /** A vcs_mutation: the repository (workspace-relative, its cwd) whose HEAD is recorded before and after. */
      readonly vcsRepo?: string;
      /** A network action: its stdout is the raw response, kept as an `http.response` artifact (http-exchange.ts). */
      readonly http?: Pick<HttpExchange, 'method' | 'url' | 'tls'>;
    }
  /** A memory_write: no cell, no process; the effect is the memory event appended to the record's stream (run-memory-write.ts). */
  | { readonly kind: 'memory'; readonly memory: MemoryWriteParams }
  | { readonly kind: 'cannot-run'; readonly code: PlanRefusalCode; readonly message: string };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function cannot(code: PlanRefusalCode, message: string): ActionPlan {
  return { kind: 'cannot-run', code, message };
}

/**
 * The plan for one use (pure). Supported: `execute_command` (argv, cwd),
 * `write_local` / `read_local` / `delete_local` on `params.path`, and
 * `rollback` of a receipt's steps, `network_read` / `network_write` (an
 * HTTP exchange sent from the cell through its egress proxy), each run as a
 * fixed busybox command inside the cell, so even a file action reaches
 * nothing but the cell's own filesystem and a network action nothing but the
 * grant's hosts. Every other class cannot run (yet) and says so.
 */
export function planAction(request: ActionRequest, limits: ExecLimits): ActionPlan {
  const params = request.params;
  const base = { timeoutMs: limits.timeoutMs, maxOutputBytes: limits.maxOutputBytes, ...(limits.egressHosts === undefined ? {} : { egressHosts: limits.egressHosts }) };
  const fileTarget = (): { readonly ok: true; readonly relative: string } | { readonly ok: false; readonly plan: ActionPlan } => {
    if (typeof params.path !== 'string') return { ok: false, plan: cannot('EXECUTOR_PARAMS_INVALID', `${request.action_class} needs params.path`) };
    const target = workspacePath(params.path);
    return target.ok ? target : { ok: false, plan: cannot('EXECUTOR_PATH_ESCAPE', target.message) };
  };
  switch (request.action_class) {
    case 'execute_command': {
      if (!Array.isArray(params.argv) || params.argv.length === 0) return cannot('EXECUTOR_PARAMS_INVALID', 'execute_command needs params.argv');
      return { kind: 'run', argv: [...params.argv], ...(typeof params.cwd === 'string' ? { cwd: params.cwd } : {}), ...base };
    }
    case 'write_local': {
      const target = fileTarget();
      if (!target.ok) return target.plan;
      if (typeof params.content !== 'string') return cannot('EXECUTOR_PARAMS_INVALID', 'write_local needs params.content (use "" for an empty file)');
      let stdin: Uint8Array;
      if (params.encoding === 'base64') {
        if (!BASE64.test(params.content)) return cannot('EXECUTOR_PARAMS_INVALID', 'params.content is not base64');
        stdin = Buffer.from(params.content, 'base64');
      } else {
        stdin = Buffer.from(params.content, 'utf8');
      }
      return {
        kind: 'run',
        argv: ['sh', '-c', WRITE_LOCAL_SCRIPT, 'writ-write-local', `./${target.relative}`],
        stdin,
        filePath: target.relative,
        fileAccess: 'write',
        preimagePaths: [target.relative],
        ...base,
      };
    }
    case 'read_local': {
      const target = fileTarget();
      if (!target.ok) return target.plan;
      return { kind: 'run', argv: ['cat', `./${target.relative}`], filePath: target.relative, fileAccess: 'read', ...base };
    }
    case 'delete_local': {
      const target = fileTarget();
      if (!target.ok) return target.plan;
      return {
        kind: 'run',
        argv: ['sh', '-c', DELETE_LOCAL_SCRIPT, 'writ-delete-local', `./${target.relative}`],
        filePath: target.relative,
        fileAccess: 'write',
        preimagePaths: [target.relative],
        ...base,
      };
    }
    case 'rollback': {
      const parsed = rollbackParamsOf(params);
      if (!parsed.ok) return cannot('EXECUTOR_PARAMS_INVALID', `a rollback names a receipt and its steps: ${parsed.message}`);
      for (const step of parsed.value.steps) {
        const target = workspacePath(step.path);
        if (!target.ok) return cannot('EXECUTOR_PATH_ESCAPE', target.message);
        // A receipt spells each path as the workspace walk recorded it; another spelling is not the receipt's step.
        if (target.relative !== step.path) return cannot('EXECUTOR_PARAMS_INVALID', `${step.path} is not spelled as a workspace walk records it (${target.relative})`);
      }
      return { kind: 'run', argv: ROLLBACK_ARGV, rollback: parsed.value, preimagePaths: parsed.value.steps.map((step) => step.path), ...base };
    }
    case 'vcs_mutation': {
      const argv = params.argv;
      if (!Array.isArray(argv) || argv[0] !== 'git' || argv.length < 2) return cannot('EXECUTOR_PARAMS_INVALID', 'vcs_mutation runs git: params.argv is ["git", <subcommand>, ...]; anything else is an execute_command');
      // Global options (-c, -C, --git-dir, --exec-path, ...) would change which repository or program runs: the subcommand comes first.
      if (argv[1]?.startsWith('-') === true) return cannot('EXECUTOR_PARAMS_INVALID', `vcs_mutation takes no git global options before the subcommand (got ${argv[1]}); use params.cwd for the repository`);
      let repo = '.';
      if (typeof params.cwd === 'string') {
        const cwd = params.cwd === '.' ? { ok: true as const, relative: '.' } : workspacePath(params.cwd);
        if (!cwd.ok) return cannot('EXECUTOR_PATH_ESCAPE', cwd.message);
        repo = cwd.relative;
      }
      return { kind: 'run', argv: ['sh', '-c', VCS_SCRIPT, 'writ-vcs', request.proposed_by, ...argv.slice(1)], cwd: repo, vcsRepo: repo, ...base };
    }
    case 'network_read':
    case 'network_write': {
      const planned = planHttpExchange(request, limits.egressHosts, requestedSecretHandles(params));
      if (!planned.ok) return cannot(planned.code, planned.message);
      const { exchange } = planned;
      return {
        kind: 'run',
        argv: httpExchangeArgv(request.action_class, exchange, limits.extraCaPem),
        stdin: exchange.body,
        http: { method: exchange.method, url: exchange.url, tls: exchange.tls },
        ...base,
      };
    }
    case 'memory_write': {
      // Ingress already refused a malformed one; checked again here, as the grant's request is all the executor trusts.
      const parsed = MemoryWriteParams.safeParse(params.memory);
      if (!parsed.success) return cannot('EXECUTOR_PARAMS_INVALID', 'memory_write needs params.memory: { op: "promote", memory_id, ... } or { op: "invalidate", memory_id, reason }');
      return { kind: 'memory', memory: parsed.data };
    }
    default:
      return cannot('EXECUTOR_ACTION_UNSUPPORTED', `the executor cannot run ${request.action_class} actions yet`);
  }
}
