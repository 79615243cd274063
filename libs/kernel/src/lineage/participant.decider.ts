import {
  CrashReport,
  Heartbeat,
  LastWill,
  LIMITS,
  ParticipantEvent,
  PARTICIPANT_TERMINAL_STATES,
  toContractIssues,
  type ConstraintDrift,
  type CrashRefusalCode,
  type ForensicTarget,
  type HeartbeatAnomalyCode,
  type HeartbeatRefusalCode,
  type ParticipantKind,
  type ParticipantStatus,
  type ReconstitutionSource,
  type RetireRefusalCode,
  type SpawnManifest,
  type SpawnRefusalCode,
  type VerifiedArtifact,
} from '@writ/contracts';
import type { z } from 'zod';
import type { Anomaly, Command, Decider } from '../shared/decider.js';
import { totalEvolve } from '../shared/decider.js';
import { emit } from '../shared/events.js';
import { commandNowMs, tryInstantMs, unknownCommand } from '../shared/instant.js';
import { LineageError } from './lineage.errors.js';
import { tryFingerprint, tryPayloadHash, type LineageCrypto } from './lineage-crypto.js';
import { verifySpawnDocument, type LocalInstall, type ParentKeys } from './spawn-verification.js';

/** What every spawn command carries: the manifest as received, the child's key beside it, and the trust material. */
export interface SpawnCommandData {
  readonly seed_id: string;
  readonly manifest: unknown;
  /** `x` of the child's Ed25519 public key. */
  readonly child_public_key: string;
  /** The parent `parent_seed_id` names, as the log says now; null when it names nobody. */
  readonly parent: ParentKeys | null;
  readonly install: LocalInstall;
  /**
   * The log holds a registered principal named `seed_id`. A participant acts
   * under its seed_id as principal id, so a new seed may not take a
   * principal's name (SPAWN_SEED_ID_REUSED). Absent: none.
   */
  readonly seed_id_is_principal?: boolean;
}

/** One action of the participant the policy service admitted (`record-call`). */
export interface CallCommandData {
  readonly seed_id: string;
  readonly task_id: string;
  readonly attempt_id: string;
  /** The attempt's policy entry (re-entries count): one call per entry. */
  readonly policy_entry: number;
  readonly action_request_id: string;
}

/** What the adapter found for one artifact a Last Will declares. */
export interface ArtifactObservation {
  readonly path: string;
  /** SHA-256 (hex) of the bytes presented for `path`, or the declared hash when the artifact store holds it; null: neither. */
  readonly sha256: string | null;
  readonly source: VerifiedArtifact['verified_by'];
}

/**
 * Commands of the Participant aggregate (seed 002: a spawned seed on
 * `writ.evt.participant.<seed_id>`). Documents arrive untrusted; the command
 * carries the trust material the adapter resolved from the log (the parent's
 * keys, the related seed's state) and `metadata.now`. `spawn-forensic` and
 * `reconstitute` are spawns whose manifest's `constraints.extra` names a
 * crashed seed or a retired one; the adapter loads that seed's state.
 */
export type ParticipantCommand =
  | Command<'verify-spawn', SpawnCommandData>
  | Command<'spawn-forensic', SpawnCommandData & { readonly target: ParticipantState }>
  | Command<'reconstitute', SpawnCommandData & { readonly prior: ParticipantState }>
  | Command<'record-heartbeat', { readonly seed_id: string; readonly heartbeat: unknown }>
  | Command<
      'ingest-retire',
      {
        readonly seed_id: string;
        readonly last_will: unknown;
        /** One observation per artifact path the adapter could read from the presented bytes or the artifact store. */
        readonly artifacts: readonly ArtifactObservation[];
        /** How far `retired_at` may lie ahead of `now` (LocalInstall.clock_skew_seconds). */
        readonly clock_skew_seconds: number;
      }
    >
  | Command<'report-crash', { readonly seed_id: string; readonly crash_report: unknown; readonly parent: ParentKeys | null }>
  | Command<'expire', { readonly seed_id: string }>
  | Command<'record-call', CallCommandData>;

export type ParticipantCommandType = ParticipantCommand['type'];

export interface NoParticipant {
  readonly status: 'none';
  /** Set once anything (a refusal) was recorded for the seed. */
  readonly seed_id: string | null;
  readonly refusals: number;
  readonly anomalies: readonly Anomaly[];
}

export interface ParticipantRecord {
  readonly status: ParticipantStatus;
  readonly seed_id: string;
  readonly kind: ParticipantKind;
  /** The manifest in force (the last one verified or renewed). */
  readonly manifest: SpawnManifest;
  readonly manifest_hash: string;
  readonly parent: { readonly id: string; readonly kind: 'principal' | 'participant'; readonly key_fingerprint: string };
  readonly child_key: { readonly fingerprint: string; readonly x: string };
  readonly forensic_of: ForensicTarget | null;
  readonly reconstituted_from: ReconstitutionSource | null;
  readonly spawned_at: string;
  readonly expires_at: string;
  readonly heartbeat: {
    readonly last_seq: number;
    readonly last_event_seq: number;
    readonly last_hash: string | null;
    readonly last_at: string | null;
    /** Heartbeat anomalies logged so far. */
    readonly anomalies: number;
  };
  readonly paused: { readonly drift: readonly ConstraintDrift[]; readonly at: string } | null;
  /** How it ended (retired, expired, failed), with the code of a failure. */
  readonly ended: { readonly status: 'retired' | 'expired' | 'failed'; readonly code: string | null; readonly at: string } | null;
  readonly last_will: {
    readonly last_will_hash: string;
    readonly will_status: LastWill['status'];
    readonly deltas_applied: number;
    readonly retired_at: string;
    readonly artifacts: readonly VerifiedArtifact[];
  } | null;
  /** Documents refused for this seed since it was spawned (spawn, heartbeat, retire, crash). */
  readonly refusals: number;
  /** Actions the policy service admitted so far (`participant.call_recorded`), across renewals. */
  readonly calls: number;
  readonly anomalies: readonly Anomaly[];
}

export type ParticipantState = NoParticipant | ParticipantRecord;

export function initialParticipantState(): ParticipantState {
  return { status: 'none', seed_id: null, refusals: 0, anomalies: [] };
}

export function isParticipantLive(state: ParticipantState): state is ParticipantRecord & { status: 'active' | 'paused' } {
  return state.status === 'active' || state.status === 'paused';
}

export function isParticipantTerminal(state: ParticipantState): state is ParticipantRecord {
  return (PARTICIPANT_TERMINAL_STATES as readonly string[]).includes(state.status);
}

/** A message as the events' `Text` holds it (1..4096 characters). */
function bounded(message: string): string {
  const text = message === '' ? 'refused' : message;
  return text.length > LIMITS.text ? `${text.slice(0, LIMITS.text - 1)}…` : text;
}

function issuesOf(error: z.ZodError): string {
  return toContractIssues(error)
    .map((issue) => `${issue.path || '(root)'}: ${issue.message}`)
    .join('; ');
}

/** Order-insensitive equality of two JSON values (zod outputs; key order is not meaning). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((item, i) => sameJson(item, (b as unknown[])[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((key) => Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/** What a renewal may change: the TTL, capabilities, resource limits and the anchor and policy hashes. Everything else is the seed's identity. */
function identityOf(manifest: SpawnManifest): unknown {
  const { ttl: _ttl, capabilities: _capabilities, resource_limits: _limits, signature: _signature, info_budget: _budget, constraints, ...identity } = manifest;
  return { ...identity, constraints: { parent_hash: constraints.parent_hash, extra: constraints.extra } };
}

const sameInstant = (a: string, b: string): boolean => tryInstantMs(a) === tryInstantMs(b);

function checkSeed(state: ParticipantState, seedId: string): void {
  if (state.seed_id !== null && state.seed_id !== seedId) {
    throw new LineageError('PARTICIPANT_COMMAND_MISMATCH', `the command is for seed ${seedId}, this stream is seed ${state.seed_id}`, { details: { seed_id: seedId } });
  }
}

function documentSeed(document: unknown): unknown {
  return typeof document === 'object' && document !== null ? (document as { seed_id?: unknown }).seed_id : undefined;
}

/** A document naming another seed than the command's: the adapter routed it to the wrong stream. */
function checkDocumentSeed(document: unknown, seedId: string): void {
  const named = documentSeed(document);
  if (named !== undefined && named !== seedId) {
    throw new LineageError('PARTICIPANT_COMMAND_MISMATCH', `the document names seed ${String(named)}, the command seed ${seedId}`, { details: { seed_id: seedId } });
  }
}

/**
 * The participant decider, given the cryptography to verify signed documents
 * with (the kernel imports no `node:crypto`). Every verification outcome is
 * an event, refusals included; `decide` throws only for a malformed command
 * (LineageError, KERNEL_COMMAND_INVALID). An empty result means the log
 * already holds this very document's outcome (a duplicate).
 *
 * The TTL is enforced on every command: a live participant whose `expires_at`
 * has passed is `participant.expired` first, whatever the command, so expiry
 * happens once even if the watchdog fires late.
 */
export function participantDecider(crypto: LineageCrypto): Decider<ParticipantCommand, ParticipantEvent, ParticipantState> {
  function decide(command: ParticipantCommand, state: ParticipantState): ParticipantEvent[] {
    const nowMs = commandNowMs(command);
    const at = command.metadata.now;
    const data = command.data as { seed_id?: unknown };
    if (typeof data?.seed_id !== 'string') throw new LineageError('PARTICIPANT_COMMAND_MISMATCH', 'the command names no seed_id');
    const seedId = data.seed_id;
    checkSeed(state, seedId);

    const expiry: ParticipantEvent[] = [];
    let current = state;
    if (isParticipantLive(state) && nowMs >= (tryInstantMs(state.expires_at) as number)) {
      expiry.push({ type: 'participant.expired', data: { seed_id: seedId, expires_at: state.expires_at, at } });
      current = { ...state, status: 'expired', ended: { status: 'expired', code: null, at } };
    }
    const out = (events: readonly ParticipantEvent[]): ParticipantEvent[] => emit(ParticipantEvent, [...expiry, ...events]);

    switch (command.type) {
      case 'verify-spawn':
      case 'spawn-forensic':
      case 'reconstitute':
        checkDocumentSeed(command.data.manifest, seedId);
        return out(decideSpawn(command, current, at));
      case 'record-heartbeat':
        checkDocumentSeed(command.data.heartbeat, seedId);
        return out(decideHeartbeat(command.data.heartbeat, current, seedId, at));
      case 'ingest-retire':
        checkDocumentSeed(command.data.last_will, seedId);
        return out(decideRetire(command.data, current, seedId, nowMs, at));
      case 'report-crash':
        checkDocumentSeed(command.data.crash_report, seedId);
        return out(decideCrash(command.data, current, seedId, at));
      case 'record-call':
        return out(decideCall(command.data, current, seedId, at));
      case 'expire':
        if (state.status === 'none') throw new LineageError('PARTICIPANT_UNKNOWN', `seed ${seedId} was never spawned; there is nothing to expire`, { details: { seed_id: seedId } });
        if (isParticipantLive(current)) {
          throw new LineageError('PARTICIPANT_TTL_NOT_ELAPSED', `seed ${seedId} expires at ${current.expires_at}`, { details: { seed_id: seedId, expires_at: current.expires_at } });
        }
        // Ended (now, or before): nothing more to append.
        return out([]);
      default:
        return unknownCommand((command as { type?: unknown }).type, 'the participant decider');
    }
  }

  function spawnRefused(seedId: string, code: SpawnRefusalCode, message: string, manifestHash: string | null, signer: string | null, at: string): ParticipantEvent[] {
    return [{ type: 'participant.spawn_refused', data: { seed_id: seedId, code, message: bounded(message), manifest_hash: manifestHash, signer, at } }];
  }

  function decideSpawn(
    command: Extract<ParticipantCommand, { type: 'verify-spawn' | 'spawn-forensic' | 'reconstitute' }>,
    state: ParticipantState,
    at: string,
  ): ParticipantEvent[] {
    const { seed_id: seedId, manifest: raw, child_public_key: childKey, parent, install } = command.data;
    const check = verifySpawnDocument({ manifest: raw, child_public_key: childKey, parent, install, now: at }, crypto);
    const hash = check.ok ? check.manifest_hash : check.manifest_hash;
    const signer = check.ok ? check.manifest.signature.signer : check.signer;

    if (state.status !== 'none') {
      // The very manifest in force (or that ended): the log already holds its outcome.
      if (hash !== null && hash === state.manifest_hash) return [];
      if (!check.ok) {
        const ttlChanged = check.manifest !== null && !sameJson(check.manifest.ttl, state.manifest.ttl);
        if (ttlChanged && (check.code === 'SPAWN_PAYLOAD_HASH_MISMATCH' || check.code === 'SPAWN_SIGNATURE_INVALID' || check.code === 'SPAWN_SIGNER_NOT_PARENT')) {
          return spawnRefused(seedId, 'SPAWN_TTL_EDITED', `seed ${seedId} runs until ${state.manifest.ttl.expires_at}; a different TTL needs a new manifest signed by the parent (${check.message})`, hash, signer, at);
        }
        return spawnRefused(seedId, check.code, check.message, hash, signer, at);
      }
      if (!isParticipantLive(state)) {
        return spawnRefused(seedId, 'SPAWN_SEED_ID_REUSED', `seed ${seedId} already ${state.status}; a new seed needs a new seed_id (reconstitution links it to this one)`, hash, signer, at);
      }
      if (!sameJson(identityOf(check.manifest), identityOf(state.manifest))) {
        return spawnRefused(
          seedId,
          'SPAWN_SEED_ID_REUSED',
          `seed ${seedId} is live under another manifest; a renewal may change only ttl, capabilities, resource_limits, info_budget and the anchor and policy hashes`,
          hash,
          signer,
          at,
        );
      }
      // A forensic seed stays read-only whatever its parent signs later.
      const readOnly = state.kind === 'forensic' ? readOnlyRefusal(check.manifest) : undefined;
      if (readOnly !== undefined) return spawnRefused(seedId, readOnly.code, readOnly.message, hash, signer, at);
      return [
        {
          type: 'participant.manifest_renewed',
          data: { seed_id: seedId, manifest: check.manifest, manifest_hash: check.manifest_hash, previous_manifest_hash: state.manifest_hash, expires_at: check.manifest.ttl.expires_at, at },
        },
      ];
    }

    if (!check.ok) return spawnRefused(seedId, check.code, check.message, hash, signer, at);
    if (command.data.seed_id_is_principal === true) {
      return spawnRefused(seedId, 'SPAWN_SEED_ID_REUSED', `${seedId} is a registered principal; a participant acts under its seed_id, so it needs a name no principal has`, hash, signer, at);
    }
    const { manifest, lineage } = check;
    const expected: ParticipantKind = command.type === 'spawn-forensic' ? 'forensic' : command.type === 'reconstitute' ? 'reconstituted' : 'worker';
    if (lineage.kind !== expected) {
      return spawnRefused(seedId, 'SPAWN_LINEAGE_INVALID', `the manifest describes a ${lineage.kind} seed, the command spawns a ${expected} one`, hash, signer, at);
    }
    let forensicOf: ForensicTarget | null = null;
    let reconstitutedFrom: ReconstitutionSource | null = null;
    if (command.type === 'spawn-forensic' && lineage.kind === 'forensic') {
      const refusal = forensicRefusal(manifest, lineage.target, command.data.target);
      if (refusal !== undefined) return spawnRefused(seedId, refusal.code, refusal.message, hash, signer, at);
      forensicOf = lineage.target;
    }
    if (command.type === 'reconstitute' && lineage.kind === 'reconstituted') {
      const refusal = reconstitutionRefusal(manifest, lineage.source, command.data.prior);
      if (refusal !== undefined) return spawnRefused(seedId, refusal.code, refusal.message, hash, signer, at);
      reconstitutedFrom = lineage.source;
    }
    return [
      {
        type: 'participant.spawn_verified',
        data: {
          seed_id: seedId,
          kind: lineage.kind,
          manifest,
          manifest_hash: check.manifest_hash,
          parent: { id: (parent as ParentKeys).id, kind: (parent as ParentKeys).kind, key_fingerprint: check.parent_key_fingerprint },
          child_key: check.child,
          forensic_of: forensicOf,
          reconstituted_from: reconstitutedFrom,
          expires_at: manifest.ttl.expires_at,
          at,
        },
      },
    ];
  }

  function decideHeartbeat(raw: unknown, state: ParticipantState, seedId: string, at: string): ParticipantEvent[] {
    const refuse = (code: HeartbeatRefusalCode, message: string, seq: number | null): ParticipantEvent[] => [
      { type: 'participant.heartbeat_refused', data: { seed_id: seedId, code, message: bounded(message), heartbeat_seq: seq, at } },
    ];
    const parsed = Heartbeat.safeParse(raw);
    const seq = parsed.success ? parsed.data.heartbeat_seq : null;
    if (state.status === 'none') return refuse('HEARTBEAT_PARTICIPANT_UNKNOWN', `seed ${seedId} was never spawned`, seq);
    if (!parsed.success) return refuse('HEARTBEAT_INVALID', `not a seed.heartbeat.v1: ${issuesOf(parsed.error)}`, null);
    if (!isParticipantLive(state)) return refuse('HEARTBEAT_PARTICIPANT_TERMINAL', `seed ${seedId} already ${state.status}`, seq);
    const heartbeat = parsed.data;
    const hash = crypto.payloadHash(heartbeat);
    if (heartbeat.parent_seed_id !== state.manifest.parent_seed_id) {
      return refuse('HEARTBEAT_MANIFEST_MISMATCH', `parent_seed_id ${heartbeat.parent_seed_id} is not the manifest's ${state.manifest.parent_seed_id}`, seq);
    }
    if (heartbeat.signature.payload_hash !== hash) return refuse('HEARTBEAT_PAYLOAD_HASH_MISMATCH', `the heartbeat hashes to ${hash}, not to its signed payload_hash`, seq);
    if (heartbeat.signature.signer !== state.child_key.fingerprint) {
      return refuse('HEARTBEAT_SIGNER_NOT_CHILD', `signed by ${heartbeat.signature.signer}, not by the participant's key ${state.child_key.fingerprint}`, seq);
    }
    if (!crypto.verify(state.child_key.x, hash, heartbeat.signature.sig)) return refuse('HEARTBEAT_SIGNATURE_INVALID', `the signature does not verify under ${state.child_key.fingerprint}`, seq);
    if (hash === state.heartbeat.last_hash) return [];

    const events: ParticipantEvent[] = [];
    const expectedSeq = state.heartbeat.last_seq + 1;
    const anomaly = (code: HeartbeatAnomalyCode, message: string): void => {
      events.push({ type: 'participant.heartbeat_anomaly', data: { seed_id: seedId, code, heartbeat_seq: heartbeat.heartbeat_seq, expected_seq: expectedSeq, message: bounded(message), at } });
    };
    if (heartbeat.heartbeat_seq < expectedSeq) {
      anomaly('HEARTBEAT_OUT_OF_ORDER', `heartbeat ${heartbeat.heartbeat_seq} arrived after heartbeat ${state.heartbeat.last_seq}; it is logged and not applied`);
      return events;
    }
    if (heartbeat.heartbeat_seq > expectedSeq) anomaly('HEARTBEAT_GAP', `heartbeats ${expectedSeq}..${heartbeat.heartbeat_seq - 1} never arrived`);
    if (!sameInstant(heartbeat.ttl.expires_at, state.expires_at)) {
      anomaly('HEARTBEAT_TTL_MISMATCH', `the heartbeat claims ttl.expires_at ${heartbeat.ttl.expires_at}; the manifest's ${state.expires_at} stays in force`);
    }
    if (heartbeat.last_event_seq < state.heartbeat.last_event_seq) {
      anomaly('HEARTBEAT_EVENT_SEQ_REGRESSED', `last_event_seq went from ${state.heartbeat.last_event_seq} back to ${heartbeat.last_event_seq}`);
    }
    events.push({
      type: 'participant.heartbeat_recorded',
      data: { seed_id: seedId, heartbeat_seq: heartbeat.heartbeat_seq, last_event_seq: heartbeat.last_event_seq, sent_at: heartbeat.sent_at, heartbeat_hash: hash, at },
    });
    const expectedConstraints = state.manifest.constraints;
    if (heartbeat.constraints.parent_hash !== expectedConstraints.parent_hash) {
      events.push({
        type: 'participant.failed',
        data: {
          seed_id: seedId,
          code: 'HEARTBEAT_PARENT_HASH_CHANGED',
          message: bounded(`heartbeat ${heartbeat.heartbeat_seq} carries parent_hash ${heartbeat.constraints.parent_hash}, the manifest ${expectedConstraints.parent_hash}: the participant fails at once`),
          heartbeat_seq: heartbeat.heartbeat_seq,
          reported_by: null,
          at,
        },
      });
      return events;
    }
    const drift: ConstraintDrift[] = [];
    for (const constraint of ['anchor_hash', 'policy_hash'] as const) {
      if (heartbeat.constraints[constraint] !== expectedConstraints[constraint]) {
        drift.push({ constraint, expected: expectedConstraints[constraint], observed: heartbeat.constraints[constraint] });
      }
    }
    if (drift.length > 0 && state.status === 'active') {
      events.push({ type: 'participant.paused', data: { seed_id: seedId, code: 'HEARTBEAT_HASH_DRIFT', drift, heartbeat_seq: heartbeat.heartbeat_seq, at } });
    }
    if (drift.length === 0 && state.status === 'paused') events.push({ type: 'participant.resumed', data: { seed_id: seedId, heartbeat_seq: heartbeat.heartbeat_seq, at } });
    return events;
  }

  function decideRetire(
    data: Extract<ParticipantCommand, { type: 'ingest-retire' }>['data'],
    state: ParticipantState,
    seedId: string,
    nowMs: number,
    at: string,
  ): ParticipantEvent[] {
    const rawHash = tryPayloadHash(crypto, data.last_will);
    const refuse = (code: RetireRefusalCode, message: string): ParticipantEvent[] => [
      { type: 'participant.retire_refused', data: { seed_id: seedId, code, message: bounded(message), last_will_hash: rawHash, at } },
    ];
    const parsed = LastWill.safeParse(data.last_will);
    if (state.status === 'none') return refuse('RETIRE_PARTICIPANT_UNKNOWN', `seed ${seedId} was never spawned`);
    if (!parsed.success) return refuse('RETIRE_LAST_WILL_INVALID', `not a seed.retire.v1 Last Will: ${issuesOf(parsed.error)}`);
    const will = parsed.data;
    const hash = crypto.payloadHash(will);
    if (state.last_will?.last_will_hash === hash) return [];
    if (state.status === 'expired') return refuse('RETIRE_AFTER_EXPIRY', `seed ${seedId} expired at ${state.expires_at}; a Last Will after expiry is not applied`);
    if (!isParticipantLive(state)) return refuse('RETIRE_PARTICIPANT_TERMINAL', `seed ${seedId} already ${state.status}; nothing of it is applied any more`);
    const manifest = state.manifest;
    for (const field of ['seed_id', 'parent_seed_id', 'anchor_id', 'mode'] as const) {
      if (will[field] !== manifest[field]) return refuse('RETIRE_MANIFEST_MISMATCH', `${field} ${will[field]} is not the manifest's ${manifest[field]}`);
    }
    if (will.signature.payload_hash !== hash) return refuse('RETIRE_PAYLOAD_HASH_MISMATCH', `the Last Will hashes to ${hash}, not to its signed payload_hash: it was changed after signing`);
    if (will.signature.signer !== state.child_key.fingerprint) {
      return refuse('RETIRE_SIGNER_NOT_CHILD', `signed by ${will.signature.signer}, not by the participant's key ${state.child_key.fingerprint}`);
    }
    if (!crypto.verify(state.child_key.x, hash, will.signature.sig)) return refuse('RETIRE_SIGNATURE_INVALID', `the signature does not verify under ${state.child_key.fingerprint}`);
    if (will.manifest_hash !== state.manifest_hash) {
      return refuse('RETIRE_MANIFEST_HASH_MISMATCH', `manifest_hash ${will.manifest_hash} is not the manifest the participant runs under (${state.manifest_hash})`);
    }
    const lineage = will.lineage;
    if (
      lineage.install_id !== manifest.lineage.install_id ||
      lineage.genesis_fingerprint !== manifest.lineage.genesis_fingerprint ||
      lineage.child_key_fingerprint !== manifest.key_binding.child_key_fingerprint
    ) {
      return refuse('RETIRE_LINEAGE_MISMATCH', 'lineage (install_id, genesis_fingerprint, child_key_fingerprint) is not the manifest\'s');
    }
    const from = state.reconstituted_from?.seed_id ?? null;
    if (will.reconstitution.reconstituted_from_seed_id !== from) {
      return refuse('RETIRE_LINEAGE_MISMATCH', `reconstitution.reconstituted_from_seed_id is ${JSON.stringify(will.reconstitution.reconstituted_from_seed_id)}; the verified lineage says ${JSON.stringify(from)}`);
    }
    const created = tryInstantMs(manifest.ttl.created_at) as number;
    const expires = tryInstantMs(state.expires_at) as number;
    const retired = tryInstantMs(will.retired_at) as number;
    const lastBeat = tryInstantMs(will.heartbeat_last) as number;
    if (retired < created || retired >= expires) return refuse('RETIRE_TTL_INVALID', `retired_at ${will.retired_at} lies outside the TTL ${manifest.ttl.created_at} .. ${state.expires_at}`);
    if (retired > nowMs + data.clock_skew_seconds * 1_000) return refuse('RETIRE_TTL_INVALID', `retired_at ${will.retired_at} lies in the future`);
    if (lastBeat > retired) return refuse('RETIRE_TTL_INVALID', `heartbeat_last ${will.heartbeat_last} is after retired_at ${will.retired_at}`);
    const forensic = state.kind === 'forensic';
    const wrongDelta = will.deltas.findIndex((delta) => (delta.epistemic_type === 'forensic_insight') !== forensic);
    if (wrongDelta >= 0) {
      return refuse(
        'RETIRE_DELTA_TYPE_INVALID',
        forensic ? `deltas[${wrongDelta}]: a forensic participant writes only forensic_insight deltas` : `deltas[${wrongDelta}]: forensic_insight is for forensic participants only`,
      );
    }
    if (forensic && will.artifacts.length > 0) return refuse('RETIRE_FORENSIC_ARTIFACTS_FORBIDDEN', 'a forensic participant writes only its own Last Will: it hands back no artifacts');
    const verified: VerifiedArtifact[] = [];
    for (const [index, artifact] of will.artifacts.entries()) {
      const seen = data.artifacts.find((observation) => observation.path === artifact.path);
      if (seen === undefined || seen.sha256 === null) return refuse('RETIRE_ARTIFACT_MISSING', `artifacts[${index}] ${artifact.path} was neither presented nor found in the artifact store`);
      if (seen.sha256 !== artifact.sha256) return refuse('RETIRE_ARTIFACT_HASH_MISMATCH', `artifacts[${index}] ${artifact.path} hashes to ${seen.sha256}, the Last Will declares ${artifact.sha256}`);
      verified.push({ path: artifact.path, sha256: artifact.sha256, verified_by: seen.source });
    }
    return [
      {
        type: 'participant.retired',
        data: { seed_id: seedId, last_will: will, last_will_hash: hash, manifest_hash: state.manifest_hash, will_status: will.status, deltas_applied: will.deltas.length, artifacts: verified, at },
      },
    ];
  }

  function decideCrash(data: Extract<ParticipantCommand, { type: 'report-crash' }>['data'], state: ParticipantState, seedId: string, at: string): ParticipantEvent[] {
    const refuse = (code: CrashRefusalCode, message: string): ParticipantEvent[] => [{ type: 'participant.crash_refused', data: { seed_id: seedId, code, message: bounded(message), at } }];
    const parsed = CrashReport.safeParse(data.crash_report);
    if (state.status === 'none') return refuse('CRASH_PARTICIPANT_UNKNOWN', `seed ${seedId} was never spawned`);
    if (!parsed.success) return refuse('CRASH_REPORT_INVALID', `not a seed.crash.v1 report: ${issuesOf(parsed.error)}`);
    if (!isParticipantLive(state)) return refuse('CRASH_PARTICIPANT_TERMINAL', `seed ${seedId} already ${state.status}`);
    const report = parsed.data;
    const hash = crypto.payloadHash(report);
    const parentKey = state.manifest.lineage.parent_key_fingerprint;
    if (report.parent_seed_id !== state.manifest.parent_seed_id) return refuse('CRASH_SIGNER_NOT_PARENT', `${report.parent_seed_id} is not the parent of seed ${seedId}`);
    if (report.signature.payload_hash !== hash) return refuse('CRASH_PAYLOAD_HASH_MISMATCH', `the report hashes to ${hash}, not to its signed payload_hash`);
    if (report.signature.signer !== parentKey) return refuse('CRASH_SIGNER_NOT_PARENT', `signed by ${report.signature.signer}, not by the parent key ${parentKey} of the manifest`);
    const key = data.parent?.id === state.manifest.parent_seed_id ? data.parent.keys.find((x) => tryFingerprint(crypto, x) === parentKey) : undefined;
    if (key === undefined) return refuse('CRASH_SIGNER_NOT_PARENT', `${parentKey} is no longer an active key of ${state.manifest.parent_seed_id}`);
    if (!crypto.verify(key, hash, report.signature.sig)) return refuse('CRASH_SIGNATURE_INVALID', `the signature does not verify under ${parentKey}`);
    return [
      {
        type: 'participant.failed',
        data: { seed_id: seedId, code: 'PARTICIPANT_CRASHED', message: bounded(`crashed without a Last Will: ${report.reason}`), heartbeat_seq: null, reported_by: parentKey, at },
      },
    ];
  }

  /**
   * Counts one admitted action. The caller (policy) decides on the state it
   * checked the manifest scope against and appends guarded by that state's
   * sequence, so an action is never counted for a participant that is not
   * active or beyond `max_calls`: either is a caller bug and throws.
   */
  function decideCall(data: CallCommandData, state: ParticipantState, seedId: string, at: string): ParticipantEvent[] {
    if (state.status === 'none') throw new LineageError('PARTICIPANT_UNKNOWN', `seed ${seedId} was never spawned; it has no calls to count`, { details: { seed_id: seedId } });
    if (state.status !== 'active') {
      throw new LineageError('PARTICIPANT_NOT_ACTIVE', `seed ${seedId} is ${state.status}; its manifest admits no action`, { details: { seed_id: seedId, status: state.status } });
    }
    const limit = state.manifest.resource_limits.max_calls;
    if (state.calls + 1 > limit) {
      throw new LineageError('PARTICIPANT_CALLS_EXHAUSTED', `seed ${seedId} used its ${limit} calls`, { details: { seed_id: seedId, max_calls: limit } });
    }
    return [
      {
        type: 'participant.call_recorded',
        data: {
          seed_id: seedId,
          call: state.calls + 1,
          manifest_hash: state.manifest_hash,
          task_id: data.task_id,
          attempt_id: data.attempt_id,
          policy_entry: data.policy_entry,
          action_request_id: data.action_request_id,
          at,
        },
      },
    ];
  }

  return Object.freeze({ initialState: initialParticipantState, decide, evolve: evolveParticipant });
}

function forensicRefusal(manifest: SpawnManifest, target: ForensicTarget, state: ParticipantState): { code: SpawnRefusalCode; message: string } | undefined {
  if (state.status !== 'failed' || state.last_will !== null) {
    return { code: 'SPAWN_FORENSIC_TARGET_INVALID', message: `seed ${target.seed_id} did not crash (it is ${state.status}); a forensic seed looks only at a participant that failed without a Last Will` };
  }
  if (state.manifest_hash !== target.manifest_hash) {
    return { code: 'SPAWN_FORENSIC_TARGET_INVALID', message: `seed ${target.seed_id} ran under manifest ${state.manifest_hash}, not ${target.manifest_hash}` };
  }
  return readOnlyRefusal(manifest);
}

/** A forensic seed is read-only: `read:` fs globs only, no network, no programs. */
function readOnlyRefusal(manifest: SpawnManifest): { code: SpawnRefusalCode; message: string } | undefined {
  const { fs, net, shell } = manifest.capabilities;
  if (fs.some((entry) => !entry.startsWith('read:')) || net.length > 0 || shell.length > 0) {
    return { code: 'SPAWN_FORENSIC_NOT_READ_ONLY', message: 'a forensic seed is read-only: only read: fs globs, no net, no shell' };
  }
  return undefined;
}

function reconstitutionRefusal(manifest: SpawnManifest, source: ReconstitutionSource, prior: ParticipantState): { code: SpawnRefusalCode; message: string } | undefined {
  if (source.seed_id === manifest.seed_id) return { code: 'SPAWN_LINEAGE_INVALID', message: 'a reconstitution is a new seed: it cannot reuse the prior seed_id' };
  if (prior.status === 'none' || prior.last_will === null) {
    return { code: 'SPAWN_RECONSTITUTION_PRIOR_INVALID', message: `seed ${source.seed_id} has no verified Last Will (it is ${prior.status}); reconstitution needs its verified manifest and Last Will` };
  }
  if (prior.manifest_hash !== source.manifest_hash || prior.last_will.last_will_hash !== source.last_will_hash) {
    return {
      code: 'SPAWN_RECONSTITUTION_PRIOR_INVALID',
      message: `seed ${source.seed_id} retired under manifest ${prior.manifest_hash} with Last Will ${prior.last_will.last_will_hash}, not the hashes this manifest names`,
    };
  }
  if (prior.child_key.fingerprint === manifest.key_binding.child_key_fingerprint) {
    return { code: 'SPAWN_RECONSTITUTION_KEY_REUSED', message: `the reconstituted seed must have its own key, not ${prior.child_key.fingerprint} of seed ${source.seed_id}` };
  }
  return undefined;
}

const countRefusal = (state: ParticipantState): ParticipantState => ({ ...state, refusals: state.refusals + 1 });

/** Total: folds any value; an event not valid in the state is recorded as an anomaly and changes nothing. */
export const evolveParticipant = totalEvolve<ParticipantState, ParticipantEvent>(ParticipantEvent, (state, event) => {
  if (state.seed_id !== null && event.data.seed_id !== state.seed_id) return undefined;
  switch (event.type) {
    case 'participant.spawn_refused':
    case 'participant.heartbeat_refused':
    case 'participant.retire_refused':
    case 'participant.crash_refused':
      return countRefusal(state.status === 'none' ? { ...state, seed_id: event.data.seed_id } : state);
    case 'participant.spawn_verified': {
      if (state.status !== 'none') return undefined;
      const d = event.data;
      return {
        status: 'active',
        seed_id: d.seed_id,
        kind: d.kind,
        manifest: d.manifest,
        manifest_hash: d.manifest_hash,
        parent: d.parent,
        child_key: d.child_key,
        forensic_of: d.forensic_of,
        reconstituted_from: d.reconstituted_from,
        spawned_at: d.at,
        expires_at: d.expires_at,
        heartbeat: { last_seq: 0, last_event_seq: 0, last_hash: null, last_at: null, anomalies: 0 },
        paused: null,
        ended: null,
        last_will: null,
        refusals: state.refusals,
        calls: 0,
        anomalies: state.anomalies,
      };
    }
    default:
      break;
  }
  if (!isParticipantLive(state)) return undefined;
  switch (event.type) {
    case 'participant.manifest_renewed':
      return { ...state, manifest: event.data.manifest, manifest_hash: event.data.manifest_hash, expires_at: event.data.expires_at };
    case 'participant.heartbeat_recorded': {
      const d = event.data;
      if (d.heartbeat_seq <= state.heartbeat.last_seq) return undefined;
      return { ...state, heartbeat: { ...state.heartbeat, last_seq: d.heartbeat_seq, last_event_seq: d.last_event_seq, last_hash: d.heartbeat_hash, last_at: d.at } };
    }
    case 'participant.heartbeat_anomaly':
      return { ...state, heartbeat: { ...state.heartbeat, anomalies: state.heartbeat.anomalies + 1 } };
    case 'participant.call_recorded': {
      const d = event.data;
      // Counted in order, against the manifest in force, while active: anything else was never decided so.
      if (state.status !== 'active' || d.call !== state.calls + 1 || d.manifest_hash !== state.manifest_hash) return undefined;
      return { ...state, calls: d.call };
    }
    case 'participant.paused':
      return state.status === 'active' ? { ...state, status: 'paused', paused: { drift: event.data.drift, at: event.data.at } } : undefined;
    case 'participant.resumed':
      return state.status === 'paused' ? { ...state, status: 'active', paused: null } : undefined;
    case 'participant.failed':
      return { ...state, status: 'failed', ended: { status: 'failed', code: event.data.code, at: event.data.at } };
    case 'participant.expired':
      return { ...state, status: 'expired', ended: { status: 'expired', code: null, at: event.data.at } };
    case 'participant.retired': {
      const d = event.data;
      if (d.manifest_hash !== state.manifest_hash) return undefined;
      return {
        ...state,
        status: 'retired',
        ended: { status: 'retired', code: null, at: d.at },
        last_will: { last_will_hash: d.last_will_hash, will_status: d.will_status, deltas_applied: d.deltas_applied, retired_at: d.last_will.retired_at, artifacts: d.artifacts },
      };
    }
    default:
      return undefined;
  }
});
