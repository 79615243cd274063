import {
  CheckParticipantAction,
  ExpireParticipant,
  IngestRetire,
  LastWill,
  ReportCrash,
  VerifyHeartbeat,
  VerifySpawn,
  parseContract,
  type CheckParticipantActionReply,
  type EventDraft,
  type ParticipantEvent,
  type SeedVerdict,
} from '@writ/contracts';
import { canonicalContentVersion, sha256Hex } from '@writ/crypto';
import {
  checkParticipantAction,
  fold,
  isParticipantLive,
  participantDecider,
  participantScope,
  peekManifestLineage,
  seedVerdict,
  type ArtifactObservation,
  type LineageCrypto,
  type LocalInstall,
  type ParticipantCommand,
  type ParticipantState,
} from '@writ/kernel';
import { decision, handleCommand, serviceDraft, type CommandDecision, type CommandStream } from '@writ/runtime';
import { IngressError } from '../ingress-errors.js';
import type { ParentDirectory, ParticipantExpiryScheduler, ParticipantHistory, ParticipantLog, SeedArtifacts } from './participant-ports.js';
import type { Clock } from './ports.js';

/**
 * Largest seed document (manifest, heartbeat, Last Will, crash report) ingress
 * records, in bytes of its JSON: the event that carries it must fit a NATS
 * message with room for the envelope.
 */
export const MAX_SEED_DOCUMENT_BYTES = 256 * 1024;

export interface SeedVerificationDeps {
  readonly log: ParticipantLog;
  readonly parents: ParentDirectory;
  readonly artifacts: SeedArtifacts;
  readonly scheduler: ParticipantExpiryScheduler;
  readonly clock: Clock;
  readonly crypto: LineageCrypto;
  readonly install: LocalInstall;
  /** `actor_id` of the events ingress appends. */
  readonly principalId: string;
  /** Re-read-and-decide rounds after losing an append race (default 5). */
  readonly maxConflicts?: number;
}

/** What one firing of a participant's TTL timer found. */
export type ParticipantExpiryOutcome =
  | { readonly kind: 'expired' }
  /** Ended already (retired, failed, or expired by an earlier firing or command). */
  | { readonly kind: 'settled'; readonly status: string }
  | { readonly kind: 'not_due'; readonly dueInMs: number };

type Build = (state: ParticipantState, now: string) => Promise<ParticipantCommand>;

interface RunOptions {
  readonly ensureTimer?: boolean;
  readonly beforeAppend?: (events: readonly ParticipantEvent[]) => Promise<void>;
}

/**
 * Seed 002's `/seeds/spawn/verify`, `/seeds/heartbeat/verify`,
 * `/seeds/retire/ingest` (and Writ's crash report) on the participant stream
 * `writ.evt.participant.<seed_id>`: load → decide (kernel participant decider,
 * with the trust material resolved from the log) → append. Every outcome,
 * refusals included, is appended before the reply; the same document sent
 * again derives the same event keys (the log dedupes it) or finds its outcome
 * already folded (the kernel decides nothing: `duplicate`).
 */
export class SeedVerificationHandler {
  readonly #decider;

  constructor(private readonly deps: SeedVerificationDeps) {
    this.#decider = participantDecider(deps.crypto);
  }

  async verifySpawn(payload: unknown): Promise<SeedVerdict> {
    const command = parseContract('VerifySpawn', VerifySpawn, payload);
    guardSize(command.manifest);
    const seedId = command.manifest.seed_id;
    const parentId = (command.manifest as { parent_seed_id?: unknown }).parent_seed_id;
    const lineage = peekManifestLineage(command.manifest);
    const key = `participant:${seedId}:spawn:${canonicalContentVersion(command)}`;
    return this.#run(seedId, key, { ensureTimer: true }, async (state, now) => {
      const base = {
        seed_id: seedId,
        manifest: command.manifest,
        child_public_key: command.child_public_key,
        parent: typeof parentId === 'string' ? await this.deps.parents.resolve(parentId) : null,
        install: this.deps.install,
        // A participant acts under its seed_id as principal id (docs/spawn-retire.md, "Acting under the manifest").
        seed_id_is_principal: state.status === 'none' && (await this.deps.parents.isPrincipal(seedId)),
      };
      if (lineage?.kind === 'forensic') return { type: 'spawn-forensic', data: { ...base, target: await this.#state(lineage.target.seed_id) }, metadata: { now } };
      if (lineage?.kind === 'reconstituted') return { type: 'reconstitute', data: { ...base, prior: await this.#state(lineage.source.seed_id) }, metadata: { now } };
      return { type: 'verify-spawn', data: base, metadata: { now } };
    });
  }

  async verifyHeartbeat(payload: unknown): Promise<SeedVerdict> {
    const command = parseContract('VerifyHeartbeat', VerifyHeartbeat, payload);
    guardSize(command.heartbeat);
    const seedId = command.heartbeat.seed_id;
    const key = `participant:${seedId}:heartbeat:${canonicalContentVersion(command.heartbeat)}`;
    return this.#run(seedId, key, {}, async (_state, now) => ({ type: 'record-heartbeat', data: { seed_id: seedId, heartbeat: command.heartbeat }, metadata: { now } }));
  }

  async ingestRetire(payload: unknown): Promise<SeedVerdict> {
    const command = parseContract('IngestRetire', IngestRetire, payload);
    guardSize(command.last_will);
    const seedId = command.last_will.seed_id;
    const presented = new Map<string, Uint8Array>();
    for (const artifact of command.artifacts ?? []) presented.set(artifact.path, new Uint8Array(Buffer.from(artifact.content_base64, 'base64')));
    const observations = await this.#observeArtifacts(command.last_will, presented);
    const key = `participant:${seedId}:retire:${canonicalContentVersion(command)}`;
    // Verified presented artifacts are stored before the event that says so (content-addressed: a retry stores nothing new).
    const storeVerified = async (events: readonly ParticipantEvent[]): Promise<void> => {
      const retired = events.find((event) => event.type === 'participant.retired');
      if (retired?.type !== 'participant.retired') return;
      for (const artifact of retired.data.artifacts) {
        const bytes = presented.get(artifact.path);
        if (artifact.verified_by === 'presented' && bytes !== undefined) await this.deps.artifacts.store(bytes);
      }
    };
    return this.#run(seedId, key, { beforeAppend: storeVerified }, async (_state, now) => ({
      type: 'ingest-retire',
      data: { seed_id: seedId, last_will: command.last_will, artifacts: observations, clock_skew_seconds: this.deps.install.clock_skew_seconds },
      metadata: { now },
    }));
  }

  async reportCrash(payload: unknown): Promise<SeedVerdict> {
    const command = parseContract('ReportCrash', ReportCrash, payload);
    guardSize(command.crash_report);
    const seedId = command.crash_report.seed_id;
    const key = `participant:${seedId}:crash:${canonicalContentVersion(command.crash_report)}`;
    return this.#run(seedId, key, {}, async (state, now) => ({
      type: 'report-crash',
      data: { seed_id: seedId, crash_report: command.crash_report, parent: state.status === 'none' ? null : await this.deps.parents.resolve(state.manifest.parent_seed_id) },
      metadata: { now },
    }));
  }

  /**
   * Would the participant's manifest scope allow this action now? Read-only:
   * nothing is appended. Without `usage`, the calls are the log's
   * (`participant.call_recorded`) and tokens 0 (Writ does not meter them).
   */
  async checkAction(payload: unknown): Promise<CheckParticipantActionReply> {
    const command = parseContract('CheckParticipantAction', CheckParticipantAction, payload);
    const state = await this.#state(command.seed_id);
    if (state.status === 'none') return { seed_id: command.seed_id, allowed: false, code: 'PARTICIPANT_UNKNOWN', message: `seed ${command.seed_id} was never spawned` };
    const check = checkParticipantAction(participantScope(state.manifest), command.action_request, {
      status: state.status,
      now: this.deps.clock.now().toISOString(),
      usage: command.usage ?? { calls: state.calls, tokens: 0 },
    });
    return check.ok ? { seed_id: command.seed_id, allowed: true } : { seed_id: command.seed_id, allowed: false, code: check.code, message: check.message };
  }

  /** The participant folded from its stream (status `none` when nothing was recorded). */
  async state(seedId: string): Promise<ParticipantState> {
    return this.#state(seedId);
  }

  /**
   * One firing of the TTL timer: the log's `expires_at` decides, never the
   * timer's. A participant still live after its expiry gets `participant.expired`
   * (once: a command that got there first leaves it settled).
   */
  async expire(payload: unknown): Promise<ParticipantExpiryOutcome> {
    const command = parseContract('ExpireParticipant', ExpireParticipant, payload);
    return handleCommand({
      stream: this.#stream(command.seed_id),
      maxRounds: this.deps.maxConflicts,
      exhausted: () => new IngressError('INGRESS_PARTICIPANT_BUSY', `seed ${command.seed_id} kept changing while being expired; retry`, { details: { seed_id: command.seed_id } }),
      decide: (history): CommandDecision<ParticipantExpiryOutcome> => {
        const state = fold(this.#decider, history.events);
        if (state.status === 'none') {
          throw new IngressError('INGRESS_PARTICIPANT_UNKNOWN', `seed ${command.seed_id} was never spawned; its timer has nothing to expire`, { details: { seed_id: command.seed_id } });
        }
        if (!isParticipantLive(state)) return decision.done({ kind: 'settled', status: state.status });
        const now = this.deps.clock.now();
        const dueInMs = Date.parse(state.expires_at) - now.getTime();
        if (dueInMs > 0) return decision.done({ kind: 'not_due', dueInMs });
        const events = this.#decider.decide({ type: 'expire', data: { seed_id: command.seed_id }, metadata: { now: now.toISOString() } }, state);
        return decision.append(this.#drafts(command.seed_id, `participant:${command.seed_id}:expire:${state.expires_at}`, events, now.toISOString()), { kind: 'expired' });
      },
    });
  }

  /**
   * A participant stream as `handleCommand` reads and appends it. A draft the log already held
   * (a redelivery of the same document) counts as recorded: the verdict is the one decided.
   */
  #stream(seedId: string): CommandStream<ParticipantHistory> {
    return {
      read: () => this.deps.log.read(seedId),
      append: async (drafts, expectedSeq) => {
        await this.deps.log.append(seedId, drafts, expectedSeq);
        return { duplicate: false };
      },
    };
  }

  async #state(seedId: string): Promise<ParticipantState> {
    return fold(this.#decider, (await this.deps.log.read(seedId)).events);
  }

  /**
   * load → decide → append, re-deciding after a lost race (bounded). `beforeAppend`
   * runs once the outcome is known and before it is stored. With `ensureTimer`
   * (spawns), a participant left live gets its TTL timer: after a verification
   * or renewal, and also when the same manifest comes again (a retry after a
   * failed schedule); the scheduler's message id dedupes repeats.
   */
  async #run(seedId: string, key: string, options: RunOptions, build: Build): Promise<SeedVerdict> {
    const { events, after } = await handleCommand({
      stream: this.#stream(seedId),
      maxRounds: this.deps.maxConflicts,
      exhausted: () => new IngressError('INGRESS_PARTICIPANT_BUSY', `seed ${seedId} kept changing while the document was being recorded; retry`, { details: { seed_id: seedId } }),
      decide: async (history) => {
        const state = fold(this.#decider, history.events);
        const now = this.deps.clock.now().toISOString();
        const decided = this.#decider.decide(await build(state, now), state);
        const outcome = { events: decided, after: fold(this.#decider, decided, state) };
        if (decided.length === 0) return decision.done(outcome);
        await options.beforeAppend?.(decided);
        return decision.append(this.#drafts(seedId, key, decided, now), outcome);
      },
    });
    const verified = events.length === 0 || events.some((event) => event.type === 'participant.spawn_verified' || event.type === 'participant.manifest_renewed');
    if (options.ensureTimer === true && verified && isParticipantLive(after)) await this.deps.scheduler.schedule({ seed_id: seedId, expires_at: after.expires_at });
    return seedVerdict(seedId, events, after);
  }

  #drafts(seedId: string, key: string, events: readonly ParticipantEvent[], now: string): EventDraft[] {
    return events.map((event, index) =>
      serviceDraft({
        key: `${key}:${index}:${event.type}`,
        eventType: event.type,
        entityType: 'participant',
        entityId: seedId,
        occurredAt: now,
        actorId: this.deps.principalId,
        payload: event.data,
        causationId: null,
        correlationId: seedId,
      }),
    );
  }

  /** For each artifact a (parseable) Last Will declares: the hash of the bytes presented for its path, or the declared hash when the bucket holds it. */
  async #observeArtifacts(document: unknown, presented: ReadonlyMap<string, Uint8Array>): Promise<ArtifactObservation[]> {
    const will = LastWill.safeParse(document);
    if (!will.success) return [];
    const observations: ArtifactObservation[] = [];
    for (const artifact of will.data.artifacts) {
      const bytes = presented.get(artifact.path);
      if (bytes !== undefined) observations.push({ path: artifact.path, sha256: sha256Hex(bytes), source: 'presented' });
      else observations.push({ path: artifact.path, sha256: (await this.deps.artifacts.holds(artifact.sha256)) ? artifact.sha256 : null, source: 'artifact_store' });
    }
    return observations;
  }
}

function guardSize(document: unknown): void {
  const bytes = Buffer.byteLength(JSON.stringify(document), 'utf8');
  if (bytes > MAX_SEED_DOCUMENT_BYTES) {
    throw new IngressError('INGRESS_SEED_DOCUMENT_TOO_LARGE', `the document is ${bytes} bytes of JSON; ingress records at most ${MAX_SEED_DOCUMENT_BYTES}`, {
      details: { bytes, max: MAX_SEED_DOCUMENT_BYTES },
    });
  }
}
