import { CapabilityName, FsCapability, LIMITS, SeedMode, type SpawnManifest, type SpawnRefusalCode } from '@writ/contracts';
import { z } from 'zod';
import { EgressHostPattern, intersectEgress, isEgressHostPattern } from '../policy/egress.js';
import { globCovers } from '../policy/glob-targets.js';
import { compileGlob, type CompiledGlob } from '../shared/glob.js';

/** A parsed `fs` capability: `write` implies `read`. */
export interface FsGrant {
  readonly mode: 'read' | 'write';
  readonly glob: CompiledGlob;
  readonly source: string;
}

/** `read:<glob>` / `write:<glob>` as a grant, or undefined when the glob could reach outside the cell home. */
export function parseFsCapability(entry: string): FsGrant | undefined {
  const colon = entry.indexOf(':');
  const mode = entry.slice(0, colon);
  if (colon < 0 || (mode !== 'read' && mode !== 'write')) return undefined;
  const glob = compileGlob(entry.slice(colon + 1));
  return glob === undefined ? undefined : { mode, glob, source: entry };
}

const FsCeiling = FsCapability.refine((entry) => parseFsCapability(entry) !== undefined, {
  message: 'must be "read:<glob>" or "write:<glob>" with a glob relative to the cell home (no leading "/", "~" or "..")',
});

/**
 * The local policy ceilings every spawn manifest must stay within (seed 002:
 * "reject if manifest asks beyond local policy"). Deny by default: without
 * configuration a participant may read and write inside its own cell home,
 * and has no network, no shell program and no provider.
 */
export const ParticipantCeilings = z.strictObject({
  fs: z.array(FsCeiling).max(LIMITS.listItems).default(['read:**', 'write:**']).describe('fs capabilities a manifest may ask for (each of its globs covered by one of these, write only under write).'),
  net: z.array(EgressHostPattern).max(LIMITS.targetResources).default([]).describe('Host patterns ("host", "*.host", with ":port", or "*"). Empty: no network.'),
  shell: z.array(CapabilityName).max(LIMITS.listItems).default([]).describe('Programs a manifest may list; "*" any. Empty: none.'),
  providers: z.array(CapabilityName).max(LIMITS.shortListItems).default([]).describe('Providers a manifest may list; "*" any. Empty: none.'),
  modes: z.array(SeedMode).min(1).max(2).default(['ephemeral', 'durable']),
  max_ttl_seconds: z.int().min(1).max(31_536_000).default(86_400).describe('Longest expires_at - created_at.'),
  resource_limits: z
    .strictObject({
      max_tokens: z.int().min(0).max(Number.MAX_SAFE_INTEGER).default(1_000_000),
      max_calls: z.int().min(0).max(Number.MAX_SAFE_INTEGER).default(10_000),
      max_wallclock_seconds: z.int().min(1).max(31_536_000).default(86_400),
    })
    .prefault({}),
});
export type ParticipantCeilings = z.infer<typeof ParticipantCeilings>;
export type ParticipantCeilingsInput = z.input<typeof ParticipantCeilings>;

export type CeilingCheck = { readonly ok: true } | { readonly ok: false; readonly code: SpawnRefusalCode; readonly message: string };

const within = (names: readonly string[], name: string): boolean => names.includes('*') || names.includes(name);

/** True when every path `inner` may grant is granted by one of `ceiling` with at least its mode. */
function fsCovered(ceiling: readonly FsGrant[], inner: FsGrant): boolean {
  return ceiling.some((outer) => (outer.mode === 'write' || inner.mode === 'read') && globCovers(outer.glob, inner.glob.segments));
}

/**
 * Checks a manifest's capabilities, mode and resource limits against
 * `ceilings` (`what` names them in messages: "the local ceilings", "the parent
 * participant's capabilities"). Every fs glob must be covered (conservatively:
 * `src/**` covers `src/a/*`, never the other way round), every host pattern
 * allowed by a host pattern, every program and provider listed (or `*`).
 */
export function checkWithinCeilings(manifest: SpawnManifest, ceilings: ParticipantCeilings, what: string): CeilingCheck {
  const refuse = (code: SpawnRefusalCode, message: string): CeilingCheck => ({ ok: false, code, message });
  if (!ceilings.modes.includes(manifest.mode)) return refuse('SPAWN_MODE_NOT_ALLOWED', `mode ${manifest.mode} is not allowed by ${what} (${ceilings.modes.join(', ')})`);
  const outerFs = ceilings.fs.map(parseFsCapability).filter((grant): grant is FsGrant => grant !== undefined);
  for (const entry of manifest.capabilities.fs) {
    const grant = parseFsCapability(entry);
    if (grant === undefined) return refuse('SPAWN_CAPABILITY_INVALID', `fs capability ${JSON.stringify(entry)} is not "read:<glob>" or "write:<glob>" inside the cell home`);
    if (!fsCovered(outerFs, grant)) return refuse('SPAWN_CAPABILITY_EXCEEDS_CEILING', `fs capability ${JSON.stringify(entry)} is not within ${what}`);
  }
  for (const host of manifest.capabilities.net) {
    if (!isEgressHostPattern(host)) return refuse('SPAWN_CAPABILITY_INVALID', `net capability ${JSON.stringify(host)} is not "host", "*.host" (with an optional ":port") or "*"`);
    // intersectEgress keeps a narrowing pattern exactly when one ceiling pattern covers it.
    if (!intersectEgress(ceilings.net, [host]).includes(host.toLowerCase())) return refuse('SPAWN_CAPABILITY_EXCEEDS_CEILING', `net capability ${JSON.stringify(host)} is not within ${what}`);
  }
  for (const program of manifest.capabilities.shell) {
    if (!within(ceilings.shell, program)) return refuse('SPAWN_CAPABILITY_EXCEEDS_CEILING', `shell capability ${JSON.stringify(program)} is not within ${what}`);
  }
  for (const provider of manifest.capabilities.providers) {
    if (!within(ceilings.providers, provider)) return refuse('SPAWN_CAPABILITY_EXCEEDS_CEILING', `provider ${JSON.stringify(provider)} is not within ${what}`);
  }
  for (const limit of ['max_tokens', 'max_calls', 'max_wallclock_seconds'] as const) {
    if (manifest.resource_limits[limit] > ceilings.resource_limits[limit]) {
      return refuse('SPAWN_RESOURCE_LIMITS_EXCEED_CEILING', `resource_limits.${limit} ${manifest.resource_limits[limit]} is above ${what} (${ceilings.resource_limits[limit]})`);
    }
  }
  return { ok: true };
}

/**
 * A participant's own capabilities as the ceiling of the sub-seeds it spawns
 * (constraint inheritance: a child never gets more than its parent has).
 */
export function inheritedCeilings(parent: SpawnManifest): ParticipantCeilings {
  return {
    fs: parent.capabilities.fs,
    net: parent.capabilities.net.filter(isEgressHostPattern),
    shell: parent.capabilities.shell,
    providers: parent.capabilities.providers,
    modes: ['ephemeral', 'durable'],
    max_ttl_seconds: 31_536_000,
    resource_limits: parent.resource_limits,
  };
}
