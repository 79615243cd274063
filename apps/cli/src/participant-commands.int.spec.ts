import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { SpawnManifest } from '@writ/contracts';
import { documentPayloadHash, documentSignatures, ed25519Fingerprint, exportEd25519PrivateJwk, generateEd25519Key, signDocument, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { ParticipantCeilings, participantDecider } from '@writ/kernel';
import { serviceDraft } from '@writ/runtime';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, type CliIo } from './main.js';
import { operatorEnv } from '../test/service-process.fixture.js';

// `writ participant show` reads a participant stream the test writes with the
// kernel's own decider (as ingress appends it); `writ participant verify` asks
// a stand-in on `<root>.qry.ingress.spawn-verify` (the CLI never imports a
// service), which checks what the CLI sent and answers as ingress does.

const MiB = 1024 ** 2;
const root = uniqueName('t');
const eventsStream = uniqueName('CLI_EVT');
let nc: NatsConnection;
let store: EventStore;
let dir: string;
let parent: Ed25519SigningKey;
let child: Ed25519SigningKey;
let manifest: SpawnManifest;
const subscriptions: Subscription[] = [];

async function writ(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env: { ...operatorEnv(), WRIT_NATS_URL: NATS_URL, WRIT_SUBJECT_ROOT: root, WRIT_EVENTS_STREAM: eventsStream }, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => new Date() };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

beforeAll(async () => {
  nc = await connectTestNats('cli-participant');
  store = await EventStore.open(nc, { stream: eventsStream, subjectPrefix: `${root}.evt`, maxBytes: 64 * MiB });
  dir = await mkdtemp(join(tmpdir(), 'writ-cli-participant-'));
  parent = await generateEd25519Key();
  child = await generateEd25519Key();
  const now = Date.now();
  manifest = (await signDocument(
    {
      manifest_version: 'seed.spawn.v1',
      seed_id: uniqueName('seed'),
      parent_seed_id: 'director-1',
      anchor_id: 'anchor:docs',
      mode: 'ephemeral',
      role: 'docs.indexer',
      info_budget: { scope: 'on-topic', notes: '' },
      constraints: { anchor_hash: 'a'.repeat(64), parent_hash: 'b'.repeat(64), policy_hash: 'c'.repeat(64), extra: [] },
      capabilities: { fs: ['read:docs/**'], net: [], shell: [], providers: [] },
      handoff_channel: 'trace',
      ttl: { created_at: new Date(now - 1_000).toISOString(), expires_at: new Date(now + 3_600_000).toISOString() },
      lineage: { install_id: 'writ-local', genesis_fingerprint: 'genesis:writ-local', parent_key_fingerprint: ed25519Fingerprint(parent.publicJwk.x) },
      key_binding: { child_key_fingerprint: ed25519Fingerprint(child.publicJwk.x), key_role: 'seed_ephemeral' },
      oep: { version: '1', policy_profile: 'strict' },
      mission_id: 'mission-1',
      actor_id: 'director-1',
      policy: { confidentiality: 'internal', redact: [] },
      resource_limits: { max_tokens: 1_000, max_calls: 10, max_wallclock_seconds: 3_600 },
      runtime_context: { host_id: 'host-1', namespace: 'default' },
    },
    parent,
  )) as unknown as SpawnManifest;
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
  await writeFile(join(dir, 'child.pub.json'), JSON.stringify(child.publicJwk));
});

afterAll(async () => {
  for (const sub of subscriptions) sub.unsubscribe();
  await deleteStreams(nc, eventsStream);
  await nc.close();
  await rm(dir, { recursive: true, force: true });
});

describe('writ participant show', () => {
  it('given a spawned participant in the log, when shown, then its status, parent, manifest hash and capabilities are printed', async () => {
    // given the participant.spawn_verified the kernel decides for this manifest
    const decider = participantDecider(documentSignatures);
    const install = { install_id: 'writ-local', genesis_fingerprint: 'genesis:writ-local', ceilings: ParticipantCeilings.parse({}), clock_skew_seconds: 300 };
    const at = new Date().toISOString();
    const events = decider.decide(
      {
        type: 'verify-spawn',
        data: { seed_id: manifest.seed_id, manifest, child_public_key: child.publicJwk.x, parent: { id: 'director-1', kind: 'principal', keys: [parent.publicJwk.x] }, install },
        metadata: { now: at },
      },
      decider.initialState(),
    );
    expect(events.map((e) => e.type)).toEqual(['participant.spawn_verified']);
    const drafts = events.map((event, i) =>
      serviceDraft({ key: `t:${i}`, eventType: event.type, entityType: 'participant', entityId: manifest.seed_id, occurredAt: at, actorId: 'ingress', payload: event.data, causationId: null, correlationId: manifest.seed_id }),
    );
    await store.appendToEntity('participant', manifest.seed_id, drafts, 0);
    // when shown
    const shown = await writ(['participant', 'show', manifest.seed_id]);
    // then
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`${manifest.seed_id} active (worker, role docs.indexer`);
    expect(shown.stdout).toContain(`manifest: ${documentPayloadHash(manifest)}`);
    expect(shown.stdout).toContain('fs [read:docs/**]');
    const json = JSON.parse((await writ(['participant', 'show', manifest.seed_id, '--json'])).stdout) as { status: string; manifest_hash: string };
    expect(json).toMatchObject({ status: 'active', manifest_hash: documentPayloadHash(manifest) });
  });

  it('given nothing recorded for a seed, when shown, then CLI_PARTICIPANT_NOT_FOUND', async () => {
    const shown = await writ(['participant', 'show', uniqueName('nobody')]);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toMatch(/^error CLI_PARTICIPANT_NOT_FOUND:/);
  });
});

describe('writ participant verify', () => {
  function standIn(answer: (request: { manifest: unknown; child_public_key: string }) => Record<string, unknown>): { seen: unknown[] } {
    const sub = nc.subscribe(`${root}.qry.ingress.spawn-verify`);
    subscriptions.push(sub);
    const state = { seen: [] as unknown[] };
    void (async () => {
      for await (const msg of sub as AsyncIterable<Msg>) {
        const request = msg.json<{ manifest: unknown; child_public_key: string }>();
        state.seen.push(request);
        const reply = answer(request);
        const headers = natsHeaders();
        if (typeof reply['code'] === 'string' && reply['outcome'] === undefined) headers.set('Writ-Error-Code', reply['code']);
        msg.respond(JSON.stringify(reply), { headers });
      }
    })();
    return state;
  }

  it('given a manifest and the child public key, when verified, then ingress gets both and an accepted verdict exits 0; a refused one exits 1 with its code', async () => {
    let refuse = false;
    const seen = standIn((request) =>
      refuse
        ? { seed_id: manifest.seed_id, outcome: 'refused', status: 'none', code: 'SPAWN_SIGNER_NOT_PARENT', message: 'signed by someone else', events: ['participant.spawn_refused'] }
        : { seed_id: manifest.seed_id, outcome: 'accepted', status: 'active', manifest_hash: documentPayloadHash(request.manifest as object), events: ['participant.spawn_verified'] },
    );
    const accepted = await writ(['participant', 'verify', 'manifest.json', '--child-key', 'child.pub.json']);
    expect(accepted).toMatchObject({ code: 0, stdout: `${manifest.seed_id}: accepted, active (manifest ${documentPayloadHash(manifest)})` });
    expect(seen.seen[0]).toEqual({ manifest, child_public_key: child.publicJwk.x });
    refuse = true;
    const refused = await writ(['participant', 'verify', 'manifest.json', '--child-key', 'child.pub.json']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('error SPAWN_SIGNER_NOT_PARENT: signed by someone else');
  });

  it('given a private JWK as the child key, when verified, then CLI_JWK_INVALID and nothing is sent', async () => {
    const key = await generateEd25519Key({ extractable: true });
    await writeFile(join(dir, 'child.private.json'), JSON.stringify(await exportEd25519PrivateJwk(key)));
    const result = await writ(['participant', 'verify', 'manifest.json', '--child-key', 'child.private.json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_JWK_INVALID:/);
  });
});
