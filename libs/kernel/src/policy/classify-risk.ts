import { RiskBand, type ActionClass, type ActionRequest } from '@writ/contracts';
import { compileGlob, type CompiledGlob } from '../shared/glob.js';
import { isBroadTarget } from './destructive-commands.js';
import { distinct } from './distinct.js';
import { urlHost } from './egress.js';
import { DEFAULT_SACRED_PATHS } from './sacred-scopes.js';
import { insideFilesOwned, touches, viewRequest, type PolicyFacts, type RequestView } from './request-view.js';

/**
 * The factors of Hermit 16.2, each a stable code (the README has the table).
 * The band of a request is the highest band of its factors.
 */
export type RiskFactorCode =
  /** The action class's base band (BASE_RISK). */
  | 'action_class'
  /** Resource sensitivity: a sacred, secret or facts-sensitive path (read: high, write: critical). */
  | 'sensitive_path'
  /** Credential use: a credentialed_api_call, or any request naming a secret handle. */
  | 'credential_use'
  /** Reversibility: the proposer says the action cannot be undone (one band above the base). */
  | 'irreversible'
  /** Reversibility: the proposer does not know whether it can be undone. */
  | 'reversibility_unknown'
  /** A destructive command pattern (its own severity). */
  | 'destructive_command'
  /** Blast radius: a delete of a whole tree, the workspace or beyond. */
  | 'broad_target'
  /** Blast radius: several targets (2-9 moderate, 10 or more high). */
  | 'many_targets'
  /** Blast radius: a recursive copy or permission change over whole trees (cp -r, chmod -R, rsync -a). */
  | 'recursive_operation'
  /** Blast radius: a command target that is a filename pattern (`*`, `?`). */
  | 'pattern_target'
  /** Target uncertainty: a command target that cannot be placed (after cd, behind an expansion). */
  | 'unplaceable_target'
  /** Target uncertainty: a URL whose host cannot be determined. */
  | 'unknown_host'
  /** Target uncertainty: a path whose spelling leaves the workspace. */
  | 'path_escape'
  /** Target uncertainty: a URL or reference where a local file action needs a path. */
  | 'resource_not_a_path'
  /** Scope: a write outside files_owned. */
  | 'outside_files_owned';

/** One reason the risk band is what it is. */
export interface RiskFactor {
  readonly code: RiskFactorCode;
  readonly band: RiskBand;
  readonly message: string;
}

export interface RiskAssessment {
  readonly band: RiskBand;
  readonly factors: readonly RiskFactor[];
}

/** The band of each action class before anything else is known (Hermit 16.2, 16.4). */
export const BASE_RISK: Readonly<Record<ActionClass, RiskBand>> = Object.freeze({
  read_local: 'low',
  network_read: 'low',
  write_local: 'moderate',
  delete_local: 'moderate',
  execute_command: 'moderate',
  memory_write: 'moderate',
  vcs_mutation: 'moderate',
  network_write: 'high',
  credentialed_api_call: 'high',
  publication: 'high',
  rollback: 'high',
  payment: 'critical',
});

const ORDER = RiskBand.options;

export function riskRank(band: RiskBand): number {
  return ORDER.indexOf(band);
}

export function maxBand(...bands: RiskBand[]): RiskBand {
  return bands.reduce((a, b) => (riskRank(b) > riskRank(a) ? b : a), 'low');
}

function bump(band: RiskBand): RiskBand {
  return ORDER[Math.min(riskRank(band) + 1, ORDER.length - 1)] as RiskBand;
}

/** Programs whose recursive flag widens a write to a whole tree (rm is a destructive pattern of its own). */
const RECURSIVE_WRITERS: Readonly<Record<string, RegExp>> = {
  cp: /^-[A-Za-z]*[rRa]|^--recursive$|^--archive$/,
  chmod: /^-[A-Za-z]*R|^--recursive$/,
  chown: /^-[A-Za-z]*R|^--recursive$/,
  chgrp: /^-[A-Za-z]*R|^--recursive$/,
  rsync: /^-[A-Za-z]*[ra]|^--recursive$|^--archive$|^--delete/,
};

/** Risk of a request already viewed (used by evaluation, which views once). */
export function assessRisk(view: RequestView, sensitive: readonly CompiledGlob[]): RiskAssessment {
  const request = view.request;
  const base = BASE_RISK[request.action_class];
  const factors: RiskFactor[] = [{ code: 'action_class', band: base, message: `${request.action_class} starts at ${base}` }];

  // reversibility
  if (request.reversibility_hint === 'irreversible') factors.push({ code: 'irreversible', band: bump(base), message: 'the proposer says the action cannot be undone' });
  if (request.reversibility_hint === 'unknown') factors.push({ code: 'reversibility_unknown', band: 'moderate', message: 'the proposer does not know whether the action can be undone' });

  // credential use
  if (request.action_class === 'credentialed_api_call') factors.push({ code: 'credential_use', band: 'high', message: 'the call uses credentials' });
  if (view.secretHandles.names.length > 0 || view.secretHandles.malformed.length > 0) {
    factors.push({ code: 'credential_use', band: 'high', message: `the request names secret handles (${view.secretHandles.names.join(', ') || 'malformed'})` });
  }

  // destructive patterns
  for (const finding of view.command?.findings ?? []) factors.push({ code: 'destructive_command', band: finding.severity, message: `${finding.pattern_id}: ${finding.summary}` });

  // resource sensitivity, blast radius, target uncertainty, scope
  const writes = view.paths.filter((path) => path.write);
  for (const path of view.paths) {
    if (!path.normalized.ok) {
      factors.push({ code: 'path_escape', band: 'critical', message: `${path.raw}: ${path.normalized.reason}` });
      continue;
    }
    if (touches(sensitive, path)) factors.push({ code: 'sensitive_path', band: path.write ? 'critical' : 'high', message: `${path.raw} is a sensitive path` });
    if (!path.write) continue;
    if (!path.placeable) factors.push({ code: 'unplaceable_target', band: 'high', message: `${path.raw} cannot be placed (after cd, -C or an expansion)` });
    if (path.pattern) factors.push({ code: 'pattern_target', band: 'high', message: `${path.raw} is a filename pattern: it may stand for many paths` });
    if (!insideFilesOwned(view, path)) factors.push({ code: 'outside_files_owned', band: 'high', message: `${path.raw} is outside files_owned` });
    if (request.action_class === 'delete_local' && isBroadTarget(path.raw)) factors.push({ code: 'broad_target', band: 'critical', message: `${path.raw} deletes a whole tree` });
  }
  const named: string[] = [];
  for (const path of writes) named.push(path.raw);
  for (const url of view.urls) named.push(url);
  const targets = distinct(named).length;
  if (targets >= 10) factors.push({ code: 'many_targets', band: 'high', message: `${targets} targets` });
  else if (targets >= 2) factors.push({ code: 'many_targets', band: 'moderate', message: `${targets} targets` });
  const argv = Array.isArray(request.params.argv) ? request.params.argv : [];
  const program = argv[0]?.split('/').pop();
  const recursive = program === undefined ? undefined : RECURSIVE_WRITERS[program];
  if (recursive !== undefined && argv.slice(1).some((arg) => recursive.test(arg))) {
    factors.push({ code: 'recursive_operation', band: 'moderate', message: `${program} works recursively over whole trees` });
  }
  for (const url of view.urls) if (urlHost(url) === undefined) factors.push({ code: 'unknown_host', band: 'high', message: `the host of ${url} cannot be determined` });
  for (const resource of view.misplaced) factors.push({ code: 'resource_not_a_path', band: 'high', message: `${resource} is not a local path` });
  return { band: maxBand(...factors.map((factor) => factor.band)), factors };
}

const compile = (patterns: readonly string[]) => patterns.map((pattern) => compileGlob(pattern)).filter((glob): glob is CompiledGlob => glob !== undefined);

/** Compiled once: the defaults are constants. */
const DEFAULT_SENSITIVE: readonly CompiledGlob[] = Object.freeze(compile(DEFAULT_SACRED_PATHS));

/** Globs that make a path sensitive: the defaults plus `extra`. */
export function sensitiveGlobs(extra: readonly string[] = []): CompiledGlob[] {
  return [...DEFAULT_SENSITIVE, ...compile(extra)];
}

/**
 * Classifies a request into a risk band (Hermit 16.2) from its action class,
 * resource sensitivity, credential use, reversibility, blast radius and
 * target uncertainty. Returns every factor considered; the band is the
 * highest of them. Provenance quality of evidence is not assessed: policy
 * sees the request, not the evidence behind it.
 */
export function classifyRisk(request: ActionRequest, facts: PolicyFacts): RiskAssessment {
  return assessRisk(viewRequest(request, facts), sensitiveGlobs(facts.sensitive_paths));
}
