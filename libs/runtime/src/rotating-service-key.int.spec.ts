import { mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { hasErrorCode, type PublicEd25519Jwk } from '@writ/contracts';
import { exportEd25519PrivateJwk, generateEd25519Key, signJws, verifyJws } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { connectTestNats, deleteStreams, uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYRING_LOCK_FILE, KEYRING_STATE_FILE, PrincipalRegistry, RegistrationAuthority, RotatingServiceKey, ServiceKeyring, keyLifecycles, registerServicePrincipal, signServiceEnrollment } from './index.js';

/**
 * The rotating service key against the real NATS (a test-unique event stream,
 * deleted afterwards) and a temporary key directory. Time is the test's clock:
 * retirement is asked for at an instant, never waited for.
 */

let nc: NatsConnection;
const stream = uniqueName('WRIT_EVENTS_RK');
const prefix = `rk.${uniqueName('evt')}`;
let store: EventStore;
let dir: string;

beforeAll(async () => {
  nc = await connectTestNats('rotating-key-test');
  store = await EventStore.open(nc, { stream, subjectPrefix: prefix, maxBytes: 64 * 1024 ** 2 });
  dir = await mkdtemp(join(tmpdir(), 'writ-keyring-'));
});

afterAll(async () => {
  await deleteStreams(nc, stream);
  await nc.close();
  await rm(dir, { recursive: true, force: true });
});

const principalEvents = async (principalId: string) => (await store.readEntity('principal', principalId)).map(({ event }) => event);

describe('ServiceKeyring', () => {
  it('given no keyring and no legacy file, when opened twice, then a key is generated once (0600) and reused', async () => {
    const keyDir = join(dir, uniqueName('gen'));
    const first = await ServiceKeyring.open({ dir: keyDir, newKid: () => 'svc-k1' });
    const second = await ServiceKeyring.open({ dir: keyDir, newKid: () => 'svc-other' });
    expect(first.origin).toBe('generated');
    expect(second.origin).toBe('keyring');
    expect(second.keyring.active.kid).toBe('svc-k1');
    expect((await stat(join(keyDir, 'svc-k1.jwk.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(keyDir, KEYRING_STATE_FILE))).mode & 0o777).toBe(0o600);
    await expect(verifyJws(await signJws('x', second.keyring.active), first.keyring.active)).resolves.toMatchObject({ kid: 'svc-k1' });
  });

  it('given the single key file of an older release, when the keyring first opens, then that key is migrated in and stays the signing key', async () => {
    const legacy = await generateEd25519Key({ kid: 'legacy-k1', extractable: true });
    const legacyFile = join(dir, `${uniqueName('legacy')}.jwk.json`);
    await writeFile(legacyFile, JSON.stringify(await exportEd25519PrivateJwk(legacy)), { mode: 0o600 });
    const keyDir = join(dir, uniqueName('mig'));
    const opened = await ServiceKeyring.open({ dir: keyDir, legacyKeyFile: legacyFile, newKid: () => 'unused' });
    expect(opened.origin).toBe('migrated');
    expect(opened.keyring.active.kid).toBe('legacy-k1');
    await expect(verifyJws(await signJws('x', opened.keyring.active), legacy)).resolves.toMatchObject({ kid: 'legacy-k1' });
    // and a later start reads the keyring, not the legacy file
    const again = await ServiceKeyring.open({ dir: keyDir, legacyKeyFile: join(dir, 'gone.jwk.json'), newKid: () => 'unused' });
    expect(again).toMatchObject({ origin: 'keyring' });
    expect(again.keyring.active.kid).toBe('legacy-k1');
  });

  it('given two processes opening a new directory at once, then one key is generated and both sign with it; no lock is left behind', async () => {
    const keyDir = join(dir, uniqueName('race'));
    const [first, second] = await Promise.all([ServiceKeyring.open({ dir: keyDir, newKid: () => 'svc-a' }), ServiceKeyring.open({ dir: keyDir, newKid: () => 'svc-b' })]);
    expect([first.origin, second.origin].sort()).toEqual(['generated', 'keyring']);
    expect(second.keyring.active.kid).toBe(first.keyring.active.kid);
    expect((await readdir(keyDir)).sort()).toEqual([`${first.keyring.active.kid}.jwk.json`, KEYRING_STATE_FILE].sort());
  });

  it('given a lock left by a process that died holding it, then it is broken once stale; a lock held now makes a change wait for its release', async () => {
    const keyDir = join(dir, uniqueName('lock'));
    const { keyring } = await ServiceKeyring.open({ dir: keyDir, newKid: () => 'svc-k1' });
    // a stale lock (older than 30 s) does not stop a change
    await writeFile(join(keyDir, KEYRING_LOCK_FILE), '{"pid":1,"host":"gone"}');
    const old = new Date(Date.now() - 60_000);
    await utimes(join(keyDir, KEYRING_LOCK_FILE), old, old);
    await expect(keyring.exclusive(async () => 'changed')).resolves.toBe('changed');
    expect(await readdir(keyDir)).not.toContain(KEYRING_LOCK_FILE);
    // a change waits for a live holder, then runs
    let release: (() => void) | undefined;
    const held = keyring.exclusive(() => new Promise<void>((resolve) => (release = resolve)));
    // the work runs once the lock is taken
    while (release === undefined) await new Promise((resolve) => setImmediate(resolve));
    expect(await readdir(keyDir)).toContain(KEYRING_LOCK_FILE);
    const order: string[] = [];
    const waiting = keyring.exclusive(async () => void order.push('second'));
    await new Promise((resolve) => setImmediate(resolve));
    order.push('first released');
    release();
    await held;
    await waiting;
    expect(order).toEqual(['first released', 'second']);
  });

  it('given a state file that is not a keyring state, then RUNTIME_KEY_INVALID and nothing is replaced', async () => {
    const keyDir = join(dir, uniqueName('bad'));
    await ServiceKeyring.open({ dir: keyDir, newKid: () => 'svc-k1' });
    await writeFile(join(keyDir, KEYRING_STATE_FILE), '{"version":2}');
    await expect(ServiceKeyring.open({ dir: keyDir, newKid: () => 'svc-k2' })).rejects.toSatisfy((e) => hasErrorCode(e, 'RUNTIME_KEY_INVALID'));
    expect(await readFile(join(keyDir, KEYRING_STATE_FILE), 'utf8')).toBe('{"version":2}');
  });
});

describe('RotatingServiceKey', () => {
  it('given a rotation, then key_added (with replaces) is in the log before the new key signs, both verify, and retirement after retire_after appends key_revoked', async () => {
    // given a service started on a fresh key directory
    const principalId = uniqueName('svc');
    const keyDir = join(dir, uniqueName('rot'));
    let now = new Date('2030-01-01T00:00:00.000Z');
    const { key } = await RotatingServiceKey.start(store, { principalId, displayName: 'svc', keyDir, clock: () => now });
    const old = key.active;
    const registry = await PrincipalRegistry.start(nc, store, { stream, subjectPrefix: prefix });
    const signedBefore = await signJws('before', old);

    // when a director rotates it
    const result = await key.rotate({ kid: `${principalId}-r1`, validForSeconds: 360, requestedBy: 'director-1' });

    // then the log holds the new key, replacing the old one until retire_after, and the new key signs
    expect(result).toEqual({ status: 'rotated', kid: `${principalId}-r1`, previous_kid: old.kid, retire_after: '2030-01-01T00:06:00.000Z' });
    expect(key.active.kid).toBe(`${principalId}-r1`);
    const added = (await principalEvents(principalId)).find((event) => event.event_type === 'principal.key_added');
    expect(added?.payload).toMatchObject({ key: { kid: `${principalId}-r1` }, added_by: 'director-1', replaces: { kid: old.kid, retire_after: '2030-01-01T00:06:00.000Z' } });
    // and what the old key signed still verifies against the keys in the log
    const keys = await registry.verificationKeys(principalId, { fresh: true });
    expect(keys.kids().sort()).toEqual([old.kid, `${principalId}-r1`].sort());
    await expect(verifyJws(signedBefore, keys)).resolves.toMatchObject({ kid: old.kid });

    // when the same rotation is asked again, then nothing changes
    expect(await key.rotate({ kid: `${principalId}-r1`, validForSeconds: 360 })).toMatchObject({ status: 'already_rotated', previous_kid: old.kid });
    expect((await principalEvents(principalId)).filter((event) => event.event_type === 'principal.key_added')).toHaveLength(1);

    // when retirement is checked before retire_after, then nothing is retired
    expect(await key.retireDue(new Date('2030-01-01T00:05:59.000Z'))).toEqual([]);

    // when it is checked at retire_after, then key_revoked (rotated), and the old key no longer verifies
    now = new Date('2030-01-01T00:06:00.000Z');
    expect(await key.retireDue()).toEqual([old.kid]);
    const revoked = (await principalEvents(principalId)).filter((event) => event.event_type === 'principal.key_revoked');
    expect(revoked.map((event) => event.payload)).toEqual([{ kid: old.kid, reason: 'rotated', revoked_by: principalId, at: '2030-01-01T00:06:00.000Z' }]);
    await expect(verifyJws(signedBefore, await registry.verificationKeys(principalId, { fresh: true }))).rejects.toSatisfy((e) => hasErrorCode(e));
    // and the log still tells the retired key's life
    expect(keyLifecycles(await principalEvents(principalId)).map((k) => [k.kid, k.status])).toEqual([
      [old.kid, 'retired'],
      [`${principalId}-r1`, 'active'],
    ]);
    // and a second check appends nothing
    expect(await key.retireDue()).toEqual([]);
    await registry.close();
  });

  it('given the operator’s enrollment of the service, then its first key and every rotated key carry it and chain to the trust anchor; a key added without it does not', async () => {
    // given a service started with its enrollment (as writ init signs it), and the trust anchor
    const operatorKey = await generateEd25519Key({ kid: 'operator-k1' });
    const anchor = { principal_id: 'operator', keys: [operatorKey.publicJwk as PublicEd25519Jwk] };
    const principalId = uniqueName('svc');
    const enrollment = await signServiceEnrollment(principalId, { principalId: 'operator', key: operatorKey, now: new Date('2029-12-31T00:00:00.000Z') });
    let now = new Date('2030-03-01T00:00:00.000Z');
    const { key } = await RotatingServiceKey.start(store, { principalId, displayName: 'svc', keyDir: join(dir, uniqueName('enrolled')), clock: () => now, authorization: enrollment });
    const first = key.active.kid;
    // when it rotates
    now = new Date('2030-03-02T00:00:00.000Z');
    await key.rotate({ kid: `${principalId}-r1`, validForSeconds: 60, requestedBy: 'director-1' });
    // then both keys chain to the anchor through the enrollment
    const authority = new RegistrationAuthority(principalEvents, anchor);
    expect(await authority.key(principalId, first)).toBeUndefined();
    expect(await authority.key(principalId, `${principalId}-r1`)).toBeUndefined();
    // and a key appended on the principal without it (a stolen bus credential) is refused
    const rogue = await generateEd25519Key({ kid: `${principalId}-rogue` });
    expect(await registerServicePrincipal(store, { principalId, displayName: 'svc', key: rogue })).toBe('key_added');
    expect((await new RegistrationAuthority(principalEvents, anchor).key(principalId, rogue.kid))?.code).toBe('REGISTRATION_UNSIGNED');
    await key.stop();
  });

  it('given a restart inside the retirement window, then the schedule survives and the old key retires on time', async () => {
    // given a rotation, then the process stops
    const principalId = uniqueName('svc');
    const keyDir = join(dir, uniqueName('restart'));
    let now = new Date('2030-02-01T00:00:00.000Z');
    const first = await RotatingServiceKey.start(store, { principalId, displayName: 'svc', keyDir, clock: () => now });
    const old = first.key.active.kid;
    await first.key.rotate({ kid: `${principalId}-r1`, validForSeconds: 60 });
    await first.key.stop();

    // when a new process starts on the same directory before retire_after
    now = new Date('2030-02-01T00:00:30.000Z');
    const second = await RotatingServiceKey.start(store, { principalId, displayName: 'svc', keyDir, clock: () => now });

    // then it signs with the new key, appended nothing at start, and still knows when the old one retires
    expect(second.registration).toBe('unchanged');
    expect(second.key.active.kid).toBe(`${principalId}-r1`);
    expect(second.key.retiring()).toEqual([{ kid: old, retire_after: '2030-02-01T00:01:00.000Z', replaced_by: `${principalId}-r1` }]);
    expect(await second.key.retireDue()).toEqual([]);
    now = new Date('2030-02-01T00:01:00.000Z');
    expect(await second.key.retireDue()).toEqual([old]);
    expect((await principalEvents(principalId)).map((event) => event.event_type)).toEqual(['principal.registered', 'principal.key_added', 'principal.key_revoked']);
  });

  it('given two processes sharing the key directory, when one rotates, then the other takes it up at its next check (a repeat asked of it is already_rotated), and a retirement checked by both at once is appended once', async () => {
    // given two processes on one directory
    const principalId = uniqueName('svc');
    const keyDir = join(dir, uniqueName('shared'));
    let now = new Date('2030-04-01T00:00:00.000Z');
    const a = await RotatingServiceKey.start(store, { principalId, displayName: 'svc', keyDir, clock: () => now });
    const b = await RotatingServiceKey.start(store, { principalId, displayName: 'svc', keyDir, clock: () => now });
    const old = a.key.active.kid;
    expect(b.key.active.kid).toBe(old);
    expect(b.registration).toBe('unchanged');

    // when one rotates
    const rotated = await a.key.rotate({ kid: `${principalId}-r1`, validForSeconds: 60, requestedBy: 'director-1' });
    expect(rotated).toMatchObject({ status: 'rotated', previous_kid: old });
    // then the other signs with the old key (still valid) until it next looks at the directory
    expect(b.key.active.kid).toBe(old);
    expect(await b.key.retireDue()).toEqual([]);
    expect(b.key.active.kid).toBe(`${principalId}-r1`);
    // and the same rotation asked of it rotates nothing more
    expect(await b.key.rotate({ kid: `${principalId}-r1`, validForSeconds: 60 })).toEqual({ ...rotated, status: 'already_rotated' });

    // when both check at retire_after at once, then the replaced key is revoked once, by one of them
    now = new Date('2030-04-01T00:01:00.000Z');
    const [byA, byB] = await Promise.all([a.key.retireDue(), b.key.retireDue()]);
    expect([...byA, ...byB]).toEqual([old]);
    expect((await principalEvents(principalId)).map((event) => event.event_type)).toEqual(['principal.registered', 'principal.key_added', 'principal.key_revoked']);
    expect(a.key.retiring()).toEqual([]);
    expect(b.key.retiring()).toEqual([]);
    expect(await readdir(keyDir)).not.toContain(KEYRING_LOCK_FILE);
    await a.key.stop();
    await b.key.stop();
  });

  it('given a crash after the new key was written and before the log had it, then the next start finishes the rotation (key_added first, then the switch)', async () => {
    // given a rotation begun on disk only
    const principalId = uniqueName('svc');
    const keyDir = join(dir, uniqueName('crash'));
    const now = new Date('2030-03-01T00:00:00.000Z');
    const first = await RotatingServiceKey.start(store, { principalId, displayName: 'svc', keyDir, clock: () => now });
    const old = first.key.active.kid;
    const { keyring } = await ServiceKeyring.open({ dir: keyDir, newKid: () => 'unused' });
    await keyring.begin(`${principalId}-r1`, new Date('2030-03-01T00:10:00.000Z'), 'director-1');
    expect((await principalEvents(principalId)).map((event) => event.event_type)).toEqual(['principal.registered']);

    // when the service starts again
    const second = await RotatingServiceKey.start(store, { principalId, displayName: 'svc', keyDir, clock: () => now });

    // then the log holds the new key and the keyring signs with it
    expect(second.key.active.kid).toBe(`${principalId}-r1`);
    const events = await principalEvents(principalId);
    expect(events.map((event) => event.event_type)).toEqual(['principal.registered', 'principal.key_added']);
    expect(events[1]?.payload).toMatchObject({ added_by: 'director-1', replaces: { kid: old, retire_after: '2030-03-01T00:10:00.000Z' } });
    expect((await readdir(keyDir)).sort()).toEqual([`${old}.jwk.json`, `${principalId}-r1.jwk.json`, KEYRING_STATE_FILE].sort());
  });
});
