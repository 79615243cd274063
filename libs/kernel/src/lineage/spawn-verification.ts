import { KeyFingerprint, SpawnManifest, toContractIssues, type SpawnRefusalCode } from '@writ/contracts';
import { tryInstantMs } from '../shared/instant.js';
import { tryFingerprint, tryPayloadHash, type LineageCrypto } from './lineage-crypto.js';
import { manifestLineage, type ManifestLineage } from './lineage-extra.js';
import { checkWithinCeilings, inheritedCeilings, type ParticipantCeilings } from './participant-ceilings.js';

/** The parent named by `parent_seed_id`, as the log describes it now (resolved by the adapter). */
export interface ParentKeys {
  readonly id: string;
  /** A registered principal, or a live participant spawning a sub-seed. */
  readonly kind: 'principal' | 'participant';
  /** The public keys (`x`) the parent signs with now: a principal's active keys; a participant's child key. */
  readonly keys: readonly string[];
  /** For a participant parent: its manifest. Its capabilities cap the child's, and the child cannot outlive it. */
  readonly manifest?: SpawnManifest;
}

/** This installation, as configuration describes it. */
export interface LocalInstall {
  readonly install_id: string;
  readonly genesis_fingerprint: string;
  readonly ceilings: ParticipantCeilings;
  /** How far a document's own times (`created_at`, `retired_at`) may lie ahead of `now`: clock skew between hosts. */
  readonly clock_skew_seconds: number;
}

export interface SpawnDocumentInput {
  /** The manifest as received (untrusted). */
  readonly manifest: unknown;
  /** `x` of the child's Ed25519 public key, presented beside the manifest. */
  readonly child_public_key: string;
  /** Null when `parent_seed_id` names nobody. */
  readonly parent: ParentKeys | null;
  readonly install: LocalInstall;
  /** RFC 3339: the verifier's clock reading. */
  readonly now: string;
}

export type SpawnDocumentCheck =
  | {
      readonly ok: true;
      readonly manifest: SpawnManifest;
      readonly manifest_hash: string;
      readonly parent_key_fingerprint: string;
      readonly child: { readonly fingerprint: string; readonly x: string };
      readonly lineage: ManifestLineage;
    }
  | {
      readonly ok: false;
      readonly code: SpawnRefusalCode;
      readonly message: string;
      /** The parsed manifest, when it parsed (the decider compares its TTL with a known one). */
      readonly manifest: SpawnManifest | null;
      readonly manifest_hash: string | null;
      readonly signer: string | null;
    };

const readSigner = (manifest: unknown): string | null => {
  const signer = (manifest as { signature?: { signer?: unknown } } | null)?.signature?.signer;
  return KeyFingerprint.safeParse(signer).success ? (signer as string) : null;
};

/**
 * Verifies one spawn manifest on its own (seed 002 "Supervisor"), in this
 * order: contract, lineage entries, payload hash, signer = declared parent
 * key, that key is the parent's, signature, child key binding, install and
 * genesis, TTL, local ceilings (and a participant parent's own capabilities
 * and TTL). Pure: trust material and `now` are inputs; never throws for
 * untrusted input. Rules that need the participant's history (a TTL edited in
 * place, a renewal, forensic targets, reconstitution) are the decider's.
 */
export function verifySpawnDocument(input: SpawnDocumentInput, crypto: LineageCrypto): SpawnDocumentCheck {
  const rawHash = tryPayloadHash(crypto, input.manifest);
  const parsed = SpawnManifest.safeParse(input.manifest);
  if (!parsed.success) {
    const paths = toContractIssues(parsed.error)
      .map((issue) => `${issue.path || '(root)'}: ${issue.message}`)
      .join('; ');
    return { ok: false, code: 'SPAWN_MANIFEST_INVALID', message: `not a seed.spawn.v1 manifest: ${paths}`, manifest: null, manifest_hash: rawHash, signer: readSigner(input.manifest) };
  }
  const manifest = parsed.data;
  const manifest_hash = crypto.payloadHash(manifest);
  const signer = manifest.signature.signer;
  const refuse = (code: SpawnRefusalCode, message: string): SpawnDocumentCheck => ({ ok: false, code, message, manifest, manifest_hash, signer });

  const lineage = manifestLineage(manifest.constraints.extra);
  if (!lineage.ok) return refuse('SPAWN_LINEAGE_INVALID', lineage.message);
  if (manifest.parent_seed_id === manifest.seed_id) return refuse('SPAWN_LINEAGE_INVALID', `seed ${manifest.seed_id} cannot be its own parent`);

  // Authenticity first: nothing else of an unauthenticated manifest is worth judging.
  if (manifest.signature.payload_hash !== manifest_hash) {
    return refuse('SPAWN_PAYLOAD_HASH_MISMATCH', `the manifest body hashes to ${manifest_hash}, not to the signed payload_hash ${manifest.signature.payload_hash}: it was changed after signing`);
  }
  const parentKey = manifest.lineage.parent_key_fingerprint;
  if (signer !== parentKey) return refuse('SPAWN_SIGNER_NOT_PARENT', `signed by ${signer}, not by the declared parent key ${parentKey}`);
  if (input.parent === null) {
    return refuse('SPAWN_PARENT_UNKNOWN', `parent ${manifest.parent_seed_id} is neither a registered principal nor an active participant`);
  }
  const key = input.parent.keys.find((x) => tryFingerprint(crypto, x) === parentKey);
  if (key === undefined) {
    return refuse('SPAWN_SIGNER_NOT_PARENT', `${parentKey} is not an active key of ${input.parent.kind} ${input.parent.id}`);
  }
  if (!crypto.verify(key, manifest.signature.payload_hash, manifest.signature.sig)) {
    return refuse('SPAWN_SIGNATURE_INVALID', `the signature does not verify under ${parentKey} of ${input.parent.id}`);
  }

  const childFingerprint = tryFingerprint(crypto, input.child_public_key);
  if (childFingerprint !== manifest.key_binding.child_key_fingerprint) {
    return refuse('SPAWN_CHILD_KEY_INVALID', `the presented child key${childFingerprint === null ? ' is not an Ed25519 public key' : ` is ${childFingerprint}`}, not key_binding.child_key_fingerprint ${manifest.key_binding.child_key_fingerprint}`);
  }
  if (childFingerprint === parentKey) return refuse('SPAWN_CHILD_KEY_INVALID', 'the child key is the parent key: a child signs its heartbeats and Last Will with its own key');

  if (manifest.lineage.install_id !== input.install.install_id) {
    return refuse('SPAWN_INSTALL_MISMATCH', `lineage.install_id ${manifest.lineage.install_id} is not this installation (${input.install.install_id})`);
  }
  if (manifest.lineage.genesis_fingerprint !== input.install.genesis_fingerprint) {
    return refuse('SPAWN_GENESIS_MISMATCH', `lineage.genesis_fingerprint ${manifest.lineage.genesis_fingerprint} is not this installation's`);
  }

  const ttl = ttlRefusal(manifest, input);
  if (ttl !== undefined) return refuse('SPAWN_TTL_INVALID', ttl);

  const local = checkWithinCeilings(manifest, input.install.ceilings, 'the local ceilings');
  if (!local.ok) return refuse(local.code, local.message);
  if (input.parent.kind === 'participant' && input.parent.manifest !== undefined) {
    const inherited = checkWithinCeilings(manifest, inheritedCeilings(input.parent.manifest), `the capabilities of parent participant ${input.parent.id}`);
    if (!inherited.ok) return refuse(inherited.code, inherited.message);
  }
  return { ok: true, manifest, manifest_hash, parent_key_fingerprint: parentKey, child: { fingerprint: childFingerprint, x: input.child_public_key }, lineage: lineage.lineage };
}

/** Why the manifest's TTL is not acceptable now, if it is not. */
function ttlRefusal(manifest: SpawnManifest, input: SpawnDocumentInput): string | undefined {
  const created = tryInstantMs(manifest.ttl.created_at) as number;
  const expires = tryInstantMs(manifest.ttl.expires_at) as number;
  const now = tryInstantMs(input.now) as number;
  if (!(expires > created)) return `ttl.expires_at ${manifest.ttl.expires_at} is not after ttl.created_at ${manifest.ttl.created_at}`;
  if (expires <= now) return `the manifest expired at ${manifest.ttl.expires_at}`;
  if (created > now + input.install.clock_skew_seconds * 1_000) return `ttl.created_at ${manifest.ttl.created_at} lies in the future`;
  const seconds = (expires - created) / 1_000;
  if (seconds > input.install.ceilings.max_ttl_seconds) return `the TTL is ${Math.ceil(seconds)} s; the local ceiling is ${input.install.ceilings.max_ttl_seconds} s`;
  const parentManifest = input.parent?.kind === 'participant' ? input.parent.manifest : undefined;
  if (parentManifest !== undefined && expires > (tryInstantMs(parentManifest.ttl.expires_at) as number)) {
    return `ttl.expires_at ${manifest.ttl.expires_at} is after the parent participant's own expiry ${parentManifest.ttl.expires_at}`;
  }
  return undefined;
}
