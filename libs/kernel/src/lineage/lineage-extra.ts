import { Id, LINEAGE_EXTRA, Sha256Hex, type ForensicTarget, type ReconstitutionSource } from '@writ/contracts';

/** What a manifest's `constraints.extra` says about where the seed comes from. */
export type ManifestLineage =
  | { readonly kind: 'worker' }
  | { readonly kind: 'forensic'; readonly target: ForensicTarget }
  | { readonly kind: 'reconstituted'; readonly source: ReconstitutionSource };

export type ManifestLineageResult = { readonly ok: true; readonly lineage: ManifestLineage } | { readonly ok: false; readonly message: string };

const KEYS = Object.values(LINEAGE_EXTRA);

/**
 * Reads the lineage entries of `constraints.extra` (`forensic_of:<seed_id>`
 * with `forensic_manifest_hash:<hex>`; or `reconstituted_from:<seed_id>` with
 * `prior_manifest_hash:<hex>` and `prior_last_will_hash:<hex>`). Each may
 * appear once; a forensic seed is never also a reconstitution; other entries
 * are not Writ's and are ignored. Accepts untrusted input (the adapter peeks
 * at a manifest before it is verified to pick the command).
 */
export function manifestLineage(extra: unknown): ManifestLineageResult {
  if (!Array.isArray(extra)) return { ok: true, lineage: { kind: 'worker' } };
  const values = new Map<string, string>();
  for (const entry of extra) {
    if (typeof entry !== 'string') continue;
    const key = KEYS.find((prefix) => entry.startsWith(prefix));
    if (key === undefined) continue;
    if (values.has(key)) return { ok: false, message: `constraints.extra names ${key} more than once` };
    values.set(key, entry.slice(key.length));
  }
  const forensicOf = values.get(LINEAGE_EXTRA.forensicOf);
  const forensicHash = values.get(LINEAGE_EXTRA.forensicManifestHash);
  const from = values.get(LINEAGE_EXTRA.reconstitutedFrom);
  const priorManifest = values.get(LINEAGE_EXTRA.priorManifestHash);
  const priorWill = values.get(LINEAGE_EXTRA.priorLastWillHash);
  const forensic = forensicOf !== undefined || forensicHash !== undefined;
  const reconstituted = from !== undefined || priorManifest !== undefined || priorWill !== undefined;
  if (forensic && reconstituted) return { ok: false, message: 'a seed is either forensic or a reconstitution, not both' };
  if (forensic) {
    if (!Id.safeParse(forensicOf).success || !Sha256Hex.safeParse(forensicHash).success) {
      return { ok: false, message: `a forensic seed names ${LINEAGE_EXTRA.forensicOf}<seed_id> and ${LINEAGE_EXTRA.forensicManifestHash}<sha256 hex>` };
    }
    return { ok: true, lineage: { kind: 'forensic', target: { seed_id: forensicOf as string, manifest_hash: forensicHash as string } } };
  }
  if (reconstituted) {
    if (!Id.safeParse(from).success || !Sha256Hex.safeParse(priorManifest).success || !Sha256Hex.safeParse(priorWill).success) {
      return {
        ok: false,
        message: `a reconstitution names ${LINEAGE_EXTRA.reconstitutedFrom}<seed_id>, ${LINEAGE_EXTRA.priorManifestHash}<sha256 hex> and ${LINEAGE_EXTRA.priorLastWillHash}<sha256 hex>`,
      };
    }
    return {
      ok: true,
      lineage: { kind: 'reconstituted', source: { seed_id: from as string, manifest_hash: priorManifest as string, last_will_hash: priorWill as string } },
    };
  }
  return { ok: true, lineage: { kind: 'worker' } };
}

/**
 * What an unverified manifest's `constraints.extra` says, for the adapter to
 * pick the spawn command and load the related seed (the forensic target or
 * the prior seed); undefined when the entries do not read (the decider then
 * refuses the manifest with SPAWN_LINEAGE_INVALID).
 */
export function peekManifestLineage(manifest: unknown): ManifestLineage | undefined {
  if (typeof manifest !== 'object' || manifest === null) return undefined;
  const constraints = (manifest as { constraints?: unknown }).constraints;
  const extra = typeof constraints === 'object' && constraints !== null ? (constraints as { extra?: unknown }).extra : undefined;
  const read = manifestLineage(extra);
  return read.ok ? read.lineage : undefined;
}
