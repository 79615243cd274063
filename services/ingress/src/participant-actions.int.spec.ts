import { BusClient } from '@writ/bus';
import { IngressRejected, type ActionRequest, type EventEnvelope, type SeedVerdict, type SpawnManifest } from '@writ/contracts';
import { documentPayloadHash, signJws } from '@writ/crypto';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRequest, registerPrincipal, sign as signRequest, taskSubjectCount } from '../test/fixtures.js';
import {
  HASH,
  crashBody,
  heartbeatBody,
  lastWillBody,
  manifestBody,
  seedKey,
  sign,
  startSeedIngress,
  waitForParticipantEvent,
  type ManifestParts,
  type SeedIngress,
  type SeedKey,
} from '../test/seed-fixtures.js';
import type { IngressReply } from './application/receive-action.handler.js';

// "Acting under the manifest" (docs/spawn-retire.md) against a real ingress: a participant signs
// ActionRequests with its child key under its seed_id; its stream alone decides whether it may,
// so pausing, retiring, expiring or failing it is its revocation, and every refusal is recorded.

let t: SeedIngress;
let bus: BusClient;
let parentId: string;
let parent: SeedKey;

beforeAll(async () => {
  t = await startSeedIngress();
  bus = new BusClient(t.nc);
  parent = await seedKey();
  parentId = (await registerPrincipal(t.store, { id: uniqueName('director'), type: 'user', key: parent.key })).id;
});

afterAll(async () => {
  await bus?.close();
  await t?.stop();
});

const spawn = (manifest: unknown, child: SeedKey) => bus.request<SeedVerdict>(t.config.seeds.subjects.spawnVerify, { manifest, child_public_key: child.x });

/** A spawned participant: its seed id, child key and verified manifest. */
async function participant(extra: Partial<ManifestParts> = {}) {
  const child = await seedKey();
  const parts: ManifestParts = { seedId: uniqueName('seed'), parentId, parent, child, ...extra };
  const manifest = await sign<SpawnManifest>(manifestBody(parts), parent);
  expect(await spawn(manifest, child)).toMatchObject({ outcome: 'accepted', status: 'active' });
  return { seedId: parts.seedId, child, manifest, manifestHash: documentPayloadHash(manifest) };
}

/** `POST /v1/actions` with a SubmitAction body: the reply of the handler. */
async function submit(jws: string, principalId?: string): Promise<{ status: number; body: IngressReply }> {
  const response = await fetch(`${t.ingress.url}/v1/actions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jws, idempotency_key: uniqueName('key'), ...(principalId === undefined ? {} : { principal_id: principalId }) }),
  });
  return { status: response.status, body: (await response.json()) as IngressReply };
}

const readDocs = (seedId: string): ActionRequest =>
  actionRequest(seedId, { action_class: 'read_local', target_resources: ['docs/a.md'], params: { path: 'docs/a.md' }, expected_effects: [] });

async function ingressEvents(ingressId: string): Promise<EventEnvelope[]> {
  return (await t.store.readEntity('ingress', ingressId)).map((stored) => stored.event);
}

/** The request is refused with `code`, the refusal is the ingress record's outcome, and no task was created. */
async function expectRefused(reply: { status: number; body: IngressReply }, code: string, tasksBefore: number): Promise<void> {
  expect(reply.status).toBe(422);
  expect(reply.body).toMatchObject({ status: 'rejected', reason_code: code });
  const events = await ingressEvents(reply.body.ingress_id);
  expect(events.map((event) => event.event_type)).toEqual(['ingress.received', 'ingress.rejected']);
  expect(IngressRejected.parse(events[1]!.payload).reason_code).toBe(code);
  expect(await taskSubjectCount(t.nc, t.config)).toBe(tasksBefore);
}

describe('a participant acts under its seed_id with its child key', () => {
  it('given an active participant, when it submits a request signed with its child key (kid: thumbprint or sha256 fingerprint), then ingress accepts it and the task is the seed\'s', async () => {
    const { seedId, child } = await participant();
    const byThumbprint = await submit(await signRequest(readDocs(seedId), child.key));
    expect(byThumbprint.status).toBe(202);
    expect(byThumbprint.body).toMatchObject({ status: 'accepted' });
    const created = (await t.store.read(byThumbprint.body.task_id!)).map((stored) => stored.event).find((event) => event.event_type === 'task.created');
    expect(created?.payload).toMatchObject({ owner_principal_id: seedId });

    const byFingerprint = await submit(await signJws(JSON.stringify(readDocs(seedId)), { ...child.key, kid: child.fingerprint }));
    expect(byFingerprint.body).toMatchObject({ status: 'accepted' });
  });

  it('given a request under the seed id signed by another key, then INGRESS_KEY_UNKNOWN (another kid) or INGRESS_SIGNATURE_INVALID (the child kid forged), recorded', async () => {
    const { seedId, child } = await participant();
    const stranger = await seedKey();
    const tasks = await taskSubjectCount(t.nc, t.config);
    await expectRefused(await submit(await signRequest(readDocs(seedId), stranger.key), seedId), 'INGRESS_KEY_UNKNOWN', tasks);
    await expectRefused(await submit(await signJws(JSON.stringify(readDocs(seedId)), { ...stranger.key, kid: child.key.kid })), 'INGRESS_SIGNATURE_INVALID', tasks);
  });

  it('given a participant signing for another seed or principal, then INGRESS_PRINCIPAL_MISMATCH', async () => {
    const { seedId, child } = await participant();
    const tasks = await taskSubjectCount(t.nc, t.config);
    await expectRefused(await submit(await signRequest(readDocs(parentId), child.key), seedId), 'INGRESS_PRINCIPAL_MISMATCH', tasks);
  });

  it.each([
    [
      'retired (a verified Last Will)',
      'participant.retired',
      async (p: Awaited<ReturnType<typeof participant>>) =>
        bus.request<SeedVerdict>(t.config.seeds.subjects.retireIngest, { last_will: await sign(lastWillBody(p.manifest, p.manifestHash), p.child) }),
    ],
    ['failed (a crash report of its parent)', 'participant.failed', async (p: Awaited<ReturnType<typeof participant>>) => bus.request<SeedVerdict>(t.config.seeds.subjects.crashReport, { crash_report: await sign(crashBody(p.manifest), parent) })],
  ])('given a participant that %s, when it submits a request signed with its child key, then INGRESS_PARTICIPANT_INACTIVE, recorded', async (_status, event, end) => {
    const p = await participant();
    expect((await submit(await signRequest(readDocs(p.seedId), p.child.key))).body).toMatchObject({ status: 'accepted' });
    expect(await end(p)).toMatchObject({ outcome: 'accepted' });
    await waitForParticipantEvent(t.store, p.seedId, event);
    const tasks = await taskSubjectCount(t.nc, t.config);
    await expectRefused(await submit(await signRequest(readDocs(p.seedId), p.child.key)), 'INGRESS_PARTICIPANT_INACTIVE', tasks);
  });

  it('given a participant whose TTL ran out (participant.expired by the watchdog), then INGRESS_PARTICIPANT_INACTIVE', async () => {
    const p = await participant({ ttlMs: 2_000 });
    await waitForParticipantEvent(t.store, p.seedId, 'participant.expired');
    const tasks = await taskSubjectCount(t.nc, t.config);
    await expectRefused(await submit(await signRequest(readDocs(p.seedId), p.child.key)), 'INGRESS_PARTICIPANT_INACTIVE', tasks);
  });

  it('given a participant paused by hash drift, then its requests are refused until a heartbeat with the manifest hashes resumes it', async () => {
    const p = await participant();
    const drift = { anchor_hash: HASH.drift, parent_hash: HASH.parent, policy_hash: HASH.policy };
    expect(await bus.request<SeedVerdict>(t.config.seeds.subjects.heartbeatVerify, { heartbeat: await sign(heartbeatBody(p.manifest, 1, { constraints: drift }), p.child) })).toMatchObject({
      status: 'paused',
    });
    const tasks = await taskSubjectCount(t.nc, t.config);
    await expectRefused(await submit(await signRequest(readDocs(p.seedId), p.child.key)), 'INGRESS_PARTICIPANT_INACTIVE', tasks);
    expect(await bus.request<SeedVerdict>(t.config.seeds.subjects.heartbeatVerify, { heartbeat: await sign(heartbeatBody(p.manifest, 2), p.child) })).toMatchObject({ status: 'active' });
    expect((await submit(await signRequest(readDocs(p.seedId), p.child.key))).body).toMatchObject({ status: 'accepted' });
  });

  it('given a registered principal, when a parent spawns a seed under its id, then SPAWN_SEED_ID_REUSED and the principal keeps acting as itself', async () => {
    const agent = await registerPrincipal(t.store, { id: uniqueName('agent') });
    const child = await seedKey();
    const manifest = await sign<SpawnManifest>(manifestBody({ seedId: agent.id, parentId, parent, child }), parent);
    expect(await spawn(manifest, child)).toMatchObject({ outcome: 'refused', status: 'none', code: 'SPAWN_SEED_ID_REUSED' });
    expect((await submit(await signRequest(readDocs(agent.id), agent.key))).body).toMatchObject({ status: 'accepted' });
    const tasks = await taskSubjectCount(t.nc, t.config);
    await expectRefused(await submit(await signRequest(readDocs(agent.id), child.key), agent.id), 'INGRESS_KEY_UNKNOWN', tasks);
  });
});
