import type { ActionRequest, ParticipantActionDenialCode, ParticipantStatus, ParticipantUsage, SpawnManifest } from '@writ/contracts';
import type { CommandAnalysis } from '../policy/destructive-commands.js';
import { egressAllowed, urlHost } from '../policy/egress.js';
import { coveredBy, viewRequest } from '../policy/request-view.js';
import type { CompiledGlob } from '../shared/glob.js';
import { tryInstantMs } from '../shared/instant.js';
import { parseFsCapability, type FsGrant } from './participant-ceilings.js';

/**
 * A participant's policy scope: what its manifest's capabilities and
 * resource limits let it do. Deny by default: anything not listed is refused.
 * Prepared once per manifest, checked on every action.
 */
export interface ParticipantScope {
  readonly seed_id: string;
  /** Globs that may be read (every fs capability: write implies read). */
  readonly readable: readonly CompiledGlob[];
  /** Globs that may be written (`write:` capabilities). */
  readonly writable: readonly CompiledGlob[];
  readonly net: readonly string[];
  readonly shell: readonly string[];
  readonly providers: readonly string[];
  readonly limits: SpawnManifest['resource_limits'];
  /** When the wall clock of `max_wallclock_seconds` starts (the manifest's `ttl.created_at`). */
  readonly started_at: string;
  readonly expires_at: string;
}

/** The scope a manifest grants. A malformed fs entry grants nothing (verification refuses such manifests anyway). */
export function participantScope(manifest: SpawnManifest): ParticipantScope {
  const grants = manifest.capabilities.fs.map(parseFsCapability).filter((grant): grant is FsGrant => grant !== undefined);
  return Object.freeze({
    seed_id: manifest.seed_id,
    readable: Object.freeze(grants.map((grant) => grant.glob)),
    writable: Object.freeze(grants.filter((grant) => grant.mode === 'write').map((grant) => grant.glob)),
    net: manifest.capabilities.net,
    shell: manifest.capabilities.shell,
    providers: manifest.capabilities.providers,
    limits: manifest.resource_limits,
    started_at: manifest.ttl.created_at,
    expires_at: manifest.ttl.expires_at,
  });
}

export interface ParticipantActionContext {
  /** The participant's status now: only `active` may act (paused by drift, or ended: nothing). */
  readonly status: ParticipantStatus;
  /** RFC 3339: the checker's clock reading. */
  readonly now: string;
  /** Calls and tokens used so far. */
  readonly usage?: ParticipantUsage;
}

export type ParticipantActionCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: ParticipantActionDenialCode; readonly message: string; readonly details: Readonly<Record<string, unknown>> };

/** Action classes no capability of a manifest can grant. */
const NEVER = new Set(['payment', 'publication', 'memory_write', 'rollback']);

const deny = (code: ParticipantActionDenialCode, message: string, details: Record<string, unknown> = {}): ParticipantActionCheck => ({ ok: false, code, message, details });

const listed = (names: readonly string[], name: string): boolean => names.includes('*') || names.includes(name);

/** Findings that mean the analyzer could not see which program runs. */
const UNSEEABLE = new Set(['shell.dynamic_command', 'command.nesting_too_deep']);

/**
 * `argv[0]` must be listed exactly as spelled (a path such as `/tmp/ls` is
 * never `ls`), and so must every program the command runs through wrappers
 * and shell strings (`sh -c 'ls'` needs `sh` too); a program computed at run
 * time is refused.
 */
function commandRefusal(scope: ParticipantScope, request: ActionRequest, command: CommandAnalysis | null): ParticipantActionCheck | undefined {
  const argv0 = request.params.argv?.[0];
  if (command === null || argv0 === undefined) return deny('PARTICIPANT_COMMAND_DENIED', `${request.action_class} without params.argv cannot be checked against the shell capabilities`, {});
  if (argv0 === '*' || !listed(scope.shell, argv0)) return deny('PARTICIPANT_COMMAND_DENIED', `program ${JSON.stringify(argv0)} is outside the manifest's shell capabilities`, { program: argv0 });
  const hidden = command.findings.find((finding) => UNSEEABLE.has(finding.pattern_id));
  if (hidden !== undefined) return deny('PARTICIPANT_COMMAND_DENIED', `the program cannot be determined (${hidden.summary})`, { pattern_id: hidden.pattern_id });
  const program = command.programs.find((name) => !listed(scope.shell, name));
  if (program !== undefined) return deny('PARTICIPANT_COMMAND_DENIED', `program ${JSON.stringify(program)} is outside the manifest's shell capabilities`, { program });
  return undefined;
}

/**
 * Checks one action of a participant against its scope, deny by default:
 * the participant must be active and inside its TTL and resource limits
 * (calls, tokens, wall clock and the request's `timeout_ms`); every path the
 * request touches must be covered by its fs globs (writes by `write:` ones;
 * a command's write targets included, anything it cannot place refused),
 * every URL's host by `net`, every program an `execute_command` /
 * `vcs_mutation` runs (wrappers included, as spelled) by `shell`, and a
 * `credentialed_api_call`'s `params.provider` by `providers`. Payments,
 * publication, memory writes and rollbacks are never within a manifest.
 * Pure; never throws for an untrusted request.
 */
export function checkParticipantAction(scope: ParticipantScope, request: ActionRequest, context: ParticipantActionContext): ParticipantActionCheck {
  const now = tryInstantMs(context.now);
  if (context.status !== 'active') return deny('PARTICIPANT_NOT_ACTIVE', `seed ${scope.seed_id} is ${context.status}; only an active participant acts`, { status: context.status });
  if (now === undefined || now >= (tryInstantMs(scope.expires_at) as number)) {
    return deny('PARTICIPANT_NOT_ACTIVE', `seed ${scope.seed_id} expired at ${scope.expires_at}`, { expires_at: scope.expires_at });
  }
  const usage = context.usage ?? { calls: 0, tokens: 0 };
  if (usage.calls + 1 > scope.limits.max_calls) return deny('PARTICIPANT_LIMIT_EXCEEDED', `max_calls ${scope.limits.max_calls} reached`, { limit: 'max_calls' });
  if (usage.tokens > scope.limits.max_tokens) return deny('PARTICIPANT_LIMIT_EXCEEDED', `max_tokens ${scope.limits.max_tokens} used up`, { limit: 'max_tokens' });
  const remainingMs = (tryInstantMs(scope.started_at) as number) + scope.limits.max_wallclock_seconds * 1_000 - now;
  if (remainingMs <= 0) return deny('PARTICIPANT_LIMIT_EXCEEDED', `max_wallclock_seconds ${scope.limits.max_wallclock_seconds} elapsed`, { limit: 'max_wallclock_seconds' });
  const timeout = request.params.timeout_ms;
  if (typeof timeout === 'number' && timeout > remainingMs) {
    return deny('PARTICIPANT_LIMIT_EXCEEDED', `timeout_ms ${timeout} is beyond the ${Math.floor(remainingMs)} ms of wall clock left`, { limit: 'max_wallclock_seconds' });
  }

  const cls = request.action_class;
  if (NEVER.has(cls)) return deny('PARTICIPANT_ACTION_CLASS_DENIED', `${cls} is never within a participant's manifest`, { action_class: cls });

  const view = viewRequest(request, { files_owned: [] });
  if (cls === 'execute_command' || cls === 'vcs_mutation') {
    const refusal = commandRefusal(scope, request, view.command);
    if (refusal !== undefined) return refusal;
  }
  if (view.misplaced.length > 0) return deny('PARTICIPANT_PATH_DENIED', `${view.misplaced[0]} is not a path in the cell home`, { resource: view.misplaced[0] });
  for (const path of view.paths) {
    const globs = path.write ? scope.writable : scope.readable;
    if (!coveredBy(globs, path)) {
      return deny('PARTICIPANT_PATH_DENIED', `${path.write ? 'writing' : 'reading'} ${path.raw} is outside the manifest's fs capabilities`, { path: path.raw, write: path.write });
    }
  }
  for (const url of view.urls) {
    const host = urlHost(url);
    if (host === undefined || !egressAllowed(scope.net, host)) return deny('PARTICIPANT_HOST_DENIED', `${url} is outside the manifest's net capabilities`, { url });
  }
  if (cls === 'credentialed_api_call') {
    const provider = request.params.provider;
    if (typeof provider !== 'string' || !listed(scope.providers, provider)) {
      return deny('PARTICIPANT_PROVIDER_DENIED', `provider ${JSON.stringify(provider ?? null)} is outside the manifest's providers`, { provider: typeof provider === 'string' ? provider : null });
    }
  }
  return { ok: true };
}
