import { RiskBand, type ActionClass, type ActionRequest } from '@writ/contracts';
import { compileGlob, matchAnyGlob, type CompiledGlob } from '../shared/glob.js';
import { isBroadTarget } from './destructive-commands.js';
import { DEFAULT_SACRED_PATHS } from './policy-profile.js';
import { insideFilesOwned, viewRequest, type PolicyFacts, type RequestView } from './request-view.js';

/** One reason the risk band is what it is. */
export interface RiskFactor {
  readonly code: string;
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

/** Risk of a request already viewed (used by evaluation, which views once). */
export function assessRisk(view: RequestView, sensitive: readonly CompiledGlob[]): RiskAssessment {
  const request = view.request;
  const base = BASE_RISK[request.action_class];
  const factors: RiskFactor[] = [{ code: 'action_class', band: base, message: `${request.action_class} starts at ${base}` }];
  if (request.reversibility_hint === 'irreversible') {
    factors.push({ code: 'irreversible', band: bump(base), message: 'the proposer says the action cannot be undone' });
  }
  for (const finding of view.command?.findings ?? []) {
    factors.push({ code: 'destructive_command', band: finding.severity, message: `${finding.pattern_id}: ${finding.summary}` });
  }
  for (const path of view.paths) {
    if (!path.normalized.ok) {
      factors.push({ code: 'path_escape', band: 'critical', message: `${path.raw}: ${path.normalized.reason}` });
      continue;
    }
    if (matchAnyGlob(sensitive, path.normalized.segments)) {
      factors.push({ code: 'sensitive_path', band: path.write ? 'critical' : 'high', message: `${path.raw} is a sensitive path` });
    }
    if (path.write && !insideFilesOwned(view, path)) {
      factors.push({ code: 'outside_files_owned', band: 'high', message: `${path.raw} is outside files_owned` });
    }
    if (path.write && request.action_class === 'delete_local' && isBroadTarget(path.raw)) {
      factors.push({ code: 'broad_target', band: 'critical', message: `${path.raw} deletes a whole tree` });
    }
  }
  for (const resource of view.misplaced) factors.push({ code: 'resource_not_a_path', band: 'high', message: `${resource} is not a local path` });
  return { band: maxBand(...factors.map((factor) => factor.band)), factors };
}

/** Globs that make a path sensitive: the defaults plus `extra`. */
export function sensitiveGlobs(extra: readonly string[] = []): CompiledGlob[] {
  return [...DEFAULT_SACRED_PATHS, ...extra].map((pattern) => compileGlob(pattern)).filter((glob): glob is CompiledGlob => glob !== undefined);
}

/**
 * Classifies a request into a risk band (Hermit 16.2) from its action class,
 * reversibility, destructive command patterns, sensitive paths, writes
 * outside files_owned and path escapes. Returns every factor considered; the
 * band is the highest of them.
 */
export function classifyRisk(request: ActionRequest, facts: PolicyFacts): RiskAssessment {
  return assessRisk(viewRequest(request, facts), sensitiveGlobs(facts.sensitive_paths));
}
