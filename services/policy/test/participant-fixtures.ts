import type { EventEnvelope, LastWill, ParticipantEvent, SpawnManifest } from '@writ/contracts';
import { documentPayloadHash, documentSignatures, ed25519Fingerprint, generateEd25519Key, sha256Hex, signDocument, type Ed25519SigningKey } from '@writ/crypto';
import { ParticipantCeilings, fold, participantDecider, participantScope, type LocalInstall, type ParticipantCommand, type ParticipantRecord } from '@writ/kernel';
import { serviceDraft } from '@writ/runtime';
import { uniqueName } from '@writ/testing';
import type { ParticipantSnapshot } from '../src/application/ports.js';
import type { Rig } from './rig.js';

/**
 * Participants as ingress records them: a manifest signed by a parent
 * principal's key, verified by the kernel's participant decider, its events
 * appended to `<events>.participant.<seed_id>` of the test's log (the test
 * plays ingress).
 */

const INSTALL: LocalInstall = {
  install_id: 'install-policy-it',
  genesis_fingerprint: 'genesis:policy-it',
  ceilings: ParticipantCeilings.parse({ fs: ['read:**', 'write:**'], net: ['*'], shell: ['*'], providers: ['*'] }),
  clock_skew_seconds: 300,
};

const decider = participantDecider(documentSignatures);

export interface TestParticipant {
  readonly seedId: string;
  readonly parentId: string;
  readonly parent: Ed25519SigningKey;
  readonly child: Ed25519SigningKey;
  readonly manifest: SpawnManifest;
  readonly manifestHash: string;
}

type Unsigned<T> = Omit<T, 'signature'>;

/** Fs read docs/**, write out/**; net api.example.com; shell ls, cat; provider anthropic; 1 h TTL from now. */
export async function spawnParticipant(rig: Rig, overrides: Partial<Unsigned<SpawnManifest>> = {}): Promise<TestParticipant> {
  const { participant, command } = await spawnCommand(overrides);
  const spawned = await decideAndAppend(rig, participant.seedId, command);
  if (spawned[0]?.type !== 'participant.spawn_verified') throw new Error(`the test manifest was refused: ${JSON.stringify(spawned[0]?.data)}`);
  return participant;
}

/** The same participant folded in memory (no log): its snapshot as the policy service's scopes hold it, at sequence 1. */
export async function participantSnapshot(overrides: Partial<Unsigned<SpawnManifest>> = {}): Promise<{ participant: TestParticipant; snapshot: ParticipantSnapshot }> {
  const { participant, command } = await spawnCommand(overrides);
  const state = fold(decider, decider.decide(command, decider.initialState())) as ParticipantRecord;
  if (state.status !== 'active') throw new Error('the test manifest was refused');
  return { participant, snapshot: { state, scope: participantScope(state.manifest), seq: 1, callKeys: new Set() } };
}

async function spawnCommand(overrides: Partial<Unsigned<SpawnManifest>>): Promise<{ participant: TestParticipant; command: ParticipantCommand }> {
  const parent = await generateEd25519Key();
  const child = await generateEd25519Key();
  const seedId = uniqueName('seed').replaceAll('_', '-');
  const parentId = uniqueName('director').replaceAll('_', '-');
  const now = Date.now();
  const body: Unsigned<SpawnManifest> = {
    manifest_version: 'seed.spawn.v1',
    seed_id: seedId,
    parent_seed_id: parentId,
    anchor_id: 'anchor:docs',
    mode: 'ephemeral',
    role: 'docs.indexer',
    info_budget: { scope: 'on-topic', notes: 'docs only' },
    constraints: { anchor_hash: sha256Hex('anchor'), parent_hash: sha256Hex('parent'), policy_hash: sha256Hex('policy'), extra: [] },
    capabilities: { fs: ['read:docs/**', 'write:out/**'], net: ['api.example.com'], shell: ['ls', 'cat'], providers: ['anthropic'] },
    handoff_channel: 'trace',
    ttl: { created_at: new Date(now - 1_000).toISOString(), expires_at: new Date(now + 3_600_000).toISOString() },
    lineage: { install_id: INSTALL.install_id, genesis_fingerprint: INSTALL.genesis_fingerprint, parent_key_fingerprint: ed25519Fingerprint(parent.publicJwk.x) },
    key_binding: { child_key_fingerprint: ed25519Fingerprint(child.publicJwk.x), key_role: 'seed_ephemeral' },
    oep: { version: '1', policy_profile: 'strict' },
    mission_id: 'mission-policy-it',
    actor_id: parentId,
    policy: { confidentiality: 'internal', redact: [] },
    resource_limits: { max_tokens: 10_000, max_calls: 20, max_wallclock_seconds: 3_600 },
    runtime_context: { host_id: 'host-it', namespace: 'default' },
    ...overrides,
  };
  const manifest = (await signDocument(body, parent)) as unknown as SpawnManifest;
  return {
    participant: { seedId, parentId, parent, child, manifest, manifestHash: documentPayloadHash(manifest) },
    command: {
      type: 'verify-spawn',
      data: { seed_id: seedId, manifest, child_public_key: child.publicJwk.x, parent: { id: parentId, kind: 'principal', keys: [parent.publicJwk.x] }, install: INSTALL },
      metadata: { now: new Date().toISOString() },
    },
  };
}

/** Its verified Last Will: `participant.retired`. */
export async function retireParticipant(rig: Rig, p: TestParticipant): Promise<void> {
  const now = new Date();
  const will: Unsigned<LastWill> = {
    manifest_version: 'seed.retire.v1',
    seed_id: p.seedId,
    parent_seed_id: p.parentId,
    anchor_id: p.manifest.anchor_id,
    mode: p.manifest.mode,
    manifest_hash: p.manifestHash,
    status: 'retired',
    retired_at: now.toISOString(),
    summary: 'done',
    deltas: [],
    open_questions: [],
    governance: { violations: [], unknowns_disclosed: true, oep_compliant: true },
    artifacts: [],
    heartbeat_last: new Date(now.getTime() - 500).toISOString(),
    lineage: { install_id: INSTALL.install_id, genesis_fingerprint: INSTALL.genesis_fingerprint, child_key_fingerprint: ed25519Fingerprint(p.child.publicJwk.x) },
    reconstitution: { reconstituted_from_seed_id: null },
  };
  const last_will = await signDocument(will, p.child);
  const events = await decideAndAppend(rig, p.seedId, {
    type: 'ingest-retire',
    data: { seed_id: p.seedId, last_will, artifacts: [], clock_skew_seconds: INSTALL.clock_skew_seconds },
    metadata: { now: now.toISOString() },
  });
  if (events[0]?.type !== 'participant.retired') throw new Error(`the test Last Will was refused: ${JSON.stringify(events[0]?.data)}`);
}

/** The participant stream's events. */
export async function participantEvents(rig: Rig, seedId: string): Promise<EventEnvelope[]> {
  if ((await rig.store.headOfEntity('participant', seedId)).taskSeq === 0) return [];
  return (await rig.store.readEntity('participant', seedId)).map((stored) => stored.event);
}

async function decideAndAppend(rig: Rig, seedId: string, command: ParticipantCommand): Promise<ParticipantEvent[]> {
  const stored = await participantEvents(rig, seedId);
  const state = fold(decider, stored.map((event) => ({ type: event.event_type, data: event.payload })));
  const events = decider.decide(command, state);
  const drafts = events.map((event, index) =>
    serviceDraft({
      key: `${seedId}:${stored.length}:${index}:${event.type}`,
      eventType: event.type,
      entityType: 'participant',
      entityId: seedId,
      occurredAt: command.metadata.now,
      actorId: 'writ-ingress',
      payload: event.data,
      causationId: null,
      correlationId: seedId,
    }),
  );
  await rig.store.appendToEntity('participant', seedId, drafts, stored.at(-1)?.task_seq ?? 0);
  return events;
}
