import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { hasErrorCode } from '@writ/contracts';
import { generateEd25519Key, signJws, verifyJws } from '@writ/crypto';
import { EventStore, sealEvent } from '@writ/eventstore';
import { connectTestNats, deleteStreams, NATS_URL, startNatsPullBlackhole, testNatsAuth, uniqueName, waitFor } from '@writ/testing';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGRESS_DUPLICATE_WINDOW_NS, PrincipalRegistry, ensureWritStreams, loadConfig, loadOrCreateServiceKey, registerServicePrincipal, writStreamConfigs } from './index.js';

let nc: NatsConnection;
const stream = uniqueName('WRIT_EVENTS_RT');
const prefix = `rt.${uniqueName('evt')}`;
let store: EventStore;
let dir: string;

beforeAll(async () => {
  nc = await connectTestNats('runtime-test');
  store = await EventStore.open(nc, { stream, subjectPrefix: prefix, maxBytes: 64 * 1024 ** 2 });
  dir = await mkdtemp(join(tmpdir(), 'writ-runtime-'));
});

afterAll(async () => {
  await deleteStreams(nc, stream);
  await nc.close();
  await rm(dir, { recursive: true, force: true });
});

describe('loadOrCreateServiceKey', () => {
  it('generates a private key file readable only by its owner, then reuses it', async () => {
    // given no key file
    const path = join(dir, 'keys', 'receipt.jwk.json');
    // when the service starts twice
    const first = await loadOrCreateServiceKey(path, 'receipt-k1');
    const second = await loadOrCreateServiceKey(path, 'receipt-k1');
    // then the key is created once, kept private, and the same on the second start
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const token = await signJws('x', second.key);
    await expect(verifyJws(token, first.key)).resolves.toMatchObject({ kid: 'receipt-k1' });
  });

  it('refuses a key file that is not a private Ed25519 JWK', async () => {
    const path = join(dir, 'broken.jwk.json');
    await writeFile(path, JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: 'abc' }));
    await expect(loadOrCreateServiceKey(path, 'k')).rejects.toSatisfy((e) => hasErrorCode(e, 'RUNTIME_KEY_INVALID'));
    expect(await readFile(path, 'utf8')).toContain('"x":"abc"');
  });
});

describe('PrincipalRegistry', () => {
  it('knows a service principal registered before and after it started, and follows key rotation', async () => {
    // given a service principal registered before the registry starts
    const k1 = await generateEd25519Key({ kid: 'svc-k1' });
    const principalId = uniqueName('svc');
    expect(await registerServicePrincipal(store, { principalId, displayName: 'approval', key: k1, roles: ['director'] })).toBe('registered');
    expect(await registerServicePrincipal(store, { principalId, displayName: 'approval', key: k1 })).toBe('unchanged');
    const registry = await PrincipalRegistry.start(nc, store, { stream, subjectPrefix: prefix });
    try {
      // then it is known with its role and key
      expect(await registry.hasRole(principalId, 'director')).toBe(true);
      expect((await registry.verificationKeys(principalId)).kids()).toEqual(['svc-k1']);

      // when the key rotates
      const k2 = await generateEd25519Key({ kid: 'svc-k2' });
      expect(await registerServicePrincipal(store, { principalId, displayName: 'approval', key: k2 })).toBe('key_added');
      // then the follower sees both keys
      await waitFor(async () => ((await registry.verificationKeys(principalId)).size === 2 ? true : undefined), { what: 'rotated key' });

      // and a principal registered after start is found by reading the log on a miss
      const late = uniqueName('late');
      await registerServicePrincipal(store, { principalId: late, displayName: 'late', key: k1 });
      expect((await registry.lookup(late))?.principal_type).toBe('service');
      expect(await registry.lookup(uniqueName('nobody'))).toBeUndefined();
    } finally {
      await registry.close();
    }
  });
});

describe('PrincipalRegistry whose follower consumer never answers', () => {
  it('given a registry starting through a consumer that never answers its pulls (nats-server 2.9 leaves such), then it replaces the consumer, catches up, and follows a key added later', async () => {
    // given a principal in the log, and a connection through a proxy that makes the next consumer pulled from deaf
    const key = await generateEd25519Key({ kid: 'deaf-k1' });
    const principalId = uniqueName('svc');
    await registerServicePrincipal(store, { principalId, displayName: 'deaf', key });
    const blackhole = await startNatsPullBlackhole(NATS_URL);
    const through = await connect({ servers: blackhole.url, name: 'registry-blackhole', ...testNatsAuth() });
    blackhole.killNextConsumer();
    try {
      // when the registry starts through it
      const registry = await PrincipalRegistry.start(through, store, { stream, subjectPrefix: prefix, pullExpiresMs: 2_000 });
      try {
        // then it caught up through a replacement consumer
        expect(registry.followerReplacements).toBeGreaterThanOrEqual(1);
        expect(blackhole.swallowed).toBeGreaterThan(0);
        expect(registry.all().map((record) => record.principal_id)).toContain(principalId);
        // and the follower sees a key added afterwards (in memory, not by a read on a miss)
        await registerServicePrincipal(store, { principalId, displayName: 'deaf', key: await generateEd25519Key({ kid: 'deaf-k2' }) });
        await waitFor(() => (registry.all().find((record) => record.principal_id === principalId)?.keys.size === 2 ? true : undefined), { what: 'the added key followed' });
      } finally {
        await registry.close();
      }
    } finally {
      await through.close();
      await blackhole.close();
    }
  }, 60_000);
});

describe('PrincipalRegistry with junk on a principal subject (invariant 10)', () => {
  it('given junk and a late rival key event on a principal subject, then lookups, the follower and new registrations see the chain only', async () => {
    // given a service principal, then bytes that are not JSON, JSON that is not an envelope,
    // and an intact rival for task_seq 1 adding a key of its own, all on its subject
    const k1 = await generateEd25519Key({ kid: 'svc-k1' });
    const principalId = uniqueName('svc');
    const subject = `${prefix}.principal.${principalId}`;
    await registerServicePrincipal(store, { principalId, displayName: 'approval', key: k1 });
    const js = jetstream(nc);
    await js.publish(subject, new Uint8Array([0xc3, 0x28]));
    await js.publish(subject, JSON.stringify({ principal: 'mallory' }));
    const evil = await generateEd25519Key({ kid: 'evil-k1' });
    const rival = sealEvent(
      {
        event_id: uniqueName('evt'),
        schema_version: 1,
        event_type: 'principal.key_added',
        entity_type: 'principal',
        entity_id: principalId,
        occurred_at: new Date().toISOString(),
        actor_type: 'service',
        actor_id: principalId,
        payload: { key: evil.publicJwk, added_by: principalId, at: new Date().toISOString() },
        causation_id: null,
        correlation_id: principalId,
      },
      principalId,
      { taskSeq: 0, hash: null },
    );
    await js.publish(subject, JSON.stringify(rival));
    // when a registry starts, and the principal rotates its key afterwards
    const registry = await PrincipalRegistry.start(nc, store, { stream, subjectPrefix: prefix });
    try {
      expect((await registry.verificationKeys(principalId)).kids()).toEqual(['svc-k1']);
      const k2 = await generateEd25519Key({ kid: 'svc-k2' });
      expect(await registerServicePrincipal(store, { principalId, displayName: 'approval', key: k2 })).toBe('key_added');
      // then the follower folds the new key and never the rival's, and so does a fresh read
      await waitFor(async () => ((await registry.verificationKeys(principalId)).size === 2 ? true : undefined), { what: 'the rotated key' });
      expect((await registry.verificationKeys(principalId)).kids().sort()).toEqual(['svc-k1', 'svc-k2']);
      expect([...((await registry.current(principalId))?.keys.keys() ?? [])].sort()).toEqual(['svc-k1', 'svc-k2']);
    } finally {
      await registry.close();
    }
  });
});

describe('ensureWritStreams', () => {
  it('creates the bus streams once and leaves them in place on the next start', async () => {
    const names = { ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
    const token = uniqueName('rt');
    const subjects = { ingress: `${token}.ingress.>`, commands: `${token}.cmd.>`, dlq: `${token}.dlq.>` };
    const jsm = await jetstreamManager(nc);
    try {
      await ensureWritStreams(jsm, { names, subjects, maxBytes: 8 * 1024 ** 2 });
      await ensureWritStreams(jsm, { names, subjects, maxBytes: 16 * 1024 ** 2 });
      const info = await jsm.streams.info(names.commands);
      expect(info.config.discard).toBe('new');
      expect(info.config.max_bytes).toBe(16 * 1024 ** 2);
      // JetStream's dedupe on the ingress stream is stream-wide (one principal could shadow another's msg id): the least window it allows.
      expect((await jsm.streams.info(names.ingress)).config.duplicate_window).toBe(INGRESS_DUPLICATE_WINDOW_NS);
      expect(info.config.duplicate_window).toBe(120 * 1e9);
      expect(writStreamConfigs().map((c) => c.name)).toEqual(['WRIT_INGRESS', 'WRIT_COMMANDS', 'WRIT_DLQ']);
    } finally {
      await deleteStreams(nc, names.ingress, names.commands, names.dlq);
    }
  });
});

describe('loadConfig', () => {
  const Schema = z.object({ WRIT_HTTP_PORT: z.coerce.number().int().min(1).max(65535).default(8080), WRIT_NATS_URL: z.string().url() });

  it('applies defaults and types', () => {
    expect(loadConfig('svc', Schema, { WRIT_NATS_URL: 'nats://127.0.0.1:4223' })).toEqual({ WRIT_HTTP_PORT: 8080, WRIT_NATS_URL: 'nats://127.0.0.1:4223' });
  });

  it('lists every offending variable at once', () => {
    try {
      loadConfig('svc', Schema, { WRIT_HTTP_PORT: '70000' });
      expect.unreachable();
    } catch (error) {
      expect(hasErrorCode(error, 'RUNTIME_CONFIG_INVALID')).toBe(true);
      const paths = ((error as { details: { issues: { path: string }[] } }).details.issues).map((i) => i.path).sort();
      expect(paths).toEqual(['WRIT_HTTP_PORT', 'WRIT_NATS_URL']);
    }
  });
});
