import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { GrantRevocation, KeyRotation } from '@writ/contracts';
import { importEd25519PublicJwk, verifyJws } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { RotatingServiceKey } from '@writ/runtime';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName } from '@writ/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deadUrl, startApi, type FakeApi, type Routes } from '../test/projection-api.fixture.js';
import { run, type CliIo } from './main.js';
import { operatorEnv } from '../test/service-process.fixture.js';

// `writ grant revoke`, `writ keys rotate` and `writ keys list` against the real
// NATS on a test-unique subject root and event stream (deleted afterwards). A
// stand-in answers the approval service's request subjects (the CLI never
// imports a service): it checks what the CLI signed and replies as the service
// does, success or a refusal code. `keys list` reads what the real rotating
// keyring of @writ/runtime appended to the log.

const NOW = new Date('2031-05-01T12:30:00.000Z');
const MiB = 1024 ** 2;
const root = uniqueName('t');
const eventsStream = uniqueName('CLI_EVT');
let nc: NatsConnection;
let store: EventStore;
let dir: string;
let director: { privateFile: string; publicJwk: Record<string, unknown> };
const servers: FakeApi[] = [];
const subscriptions: Subscription[] = [];

const env = () => ({ ...operatorEnv(), WRIT_NATS_URL: NATS_URL, WRIT_SUBJECT_ROOT: root, WRIT_EVENTS_STREAM: eventsStream });

async function writ(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env: env(), cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => NOW };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

async function api(routes: Routes): Promise<FakeApi> {
  const server = await startApi(routes);
  servers.push(server);
  return server;
}

/** Plays the approval service on `<root>.qry.approval.<name>`: `answer` gets the request and returns a reply or `{ code }` to refuse. */
function standIn(name: string, answer: (request: Record<string, unknown>) => Promise<Record<string, unknown>>): { seen: Record<string, unknown>[] } {
  const sub = nc.subscribe(`${root}.qry.approval.${name}`);
  subscriptions.push(sub);
  const state = { seen: [] as Record<string, unknown>[] };
  void (async () => {
    for await (const msg of sub as AsyncIterable<Msg>) {
      const request = msg.json<Record<string, unknown>>();
      state.seen.push(request);
      const reply = await answer(request);
      if (typeof reply['code'] === 'string') {
        const headers = natsHeaders();
        headers.set('Writ-Error-Code', reply['code']);
        msg.respond(JSON.stringify(reply), { headers });
      } else {
        msg.respond(JSON.stringify(reply));
      }
    }
  })();
  return state;
}

/** The payload of a compact JWS, verified with the director's public key. */
async function verifiedPayload(jws: string): Promise<unknown> {
  const { payload } = await verifyJws(jws, await importEd25519PublicJwk(director.publicJwk));
  return JSON.parse(new TextDecoder().decode(payload));
}

beforeAll(async () => {
  nc = await connectTestNats('cli-grant-keys');
  store = await EventStore.open(nc, { stream: eventsStream, subjectPrefix: `${root}.evt`, maxBytes: 64 * MiB });
  dir = await mkdtemp(join(tmpdir(), 'writ-cli-keys-'));
  const privateFile = join(dir, 'director.private.json');
  const keygen = await writ(['principal', 'keygen', '--kid', 'director-k1', '--out', privateFile]);
  expect(keygen.code).toBe(0);
  director = { privateFile, publicJwk: JSON.parse(keygen.stdout) as Record<string, unknown> };
});

// Each test's stand-in answers only that test's requests.
afterEach(() => {
  for (const sub of subscriptions.splice(0)) sub.unsubscribe();
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await deleteStreams(nc, eventsStream);
  await nc.close();
  await rm(dir, { recursive: true, force: true });
});

describe('writ grant revoke', () => {
  it("signs a GrantRevocation with the director's key for the grant's task (looked up in GET /v1/grants/<id>) and prints the service's reply", async () => {
    // given the projection knows the grant's task, and the approval service answers
    const server = await api({ 'GET /v1/grants/gnt-1': () => ({ json: { grant_id: 'gnt-1', task_id: 'task-1', status: 'active' } }) });
    const service = standIn('revoke-grant', async (request) => {
      const revocation = GrantRevocation.parse(await verifiedPayload(String(request['revocation_jws'])));
      return { grant_id: revocation.grant_id, task_id: revocation.task_id, status: 'revoked', revoked_by: revocation.revoked_by, revoked_at: NOW.toISOString(), event_id: 'evt-1' };
    });
    // when a director revokes it
    const result = await writ(['grant', 'revoke', 'gnt-1', '--key', director.privateFile, '--principal', 'director-1', '--reason', 'task cancelled', '--url', server.url]);
    // then the request names the grant and its task, signed over exactly those, now
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`revoked gnt-1 (task task-1) by director-1 at ${NOW.toISOString()}`);
    expect(service.seen).toHaveLength(1);
    expect(service.seen[0]).toMatchObject({ grant_id: 'gnt-1', task_id: 'task-1' });
    expect(await verifiedPayload(String(service.seen[0]?.['revocation_jws']))).toEqual({
      grant_id: 'gnt-1',
      task_id: 'task-1',
      reason: 'task cancelled',
      revoked_by: 'director-1',
      revoked_at: NOW.toISOString(),
    });
  });

  it("exits 1 with the service's refusal code; --task skips the lookup", async () => {
    standIn('revoke-grant', async () => ({ code: 'APPROVAL_SIGNER_NOT_ALLOWED', message: 'observer-1 may not sign a GrantRevocation' }));
    const result = await writ(['grant', 'revoke', 'gnt-2', '--task', 'task-2', '--key', director.privateFile, '--principal', 'observer-1', '--url', await deadUrl()]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error APPROVAL_SIGNER_NOT_ALLOWED: /);
  });

  it('refuses a grant the projection does not list (CLI_GRANT_NOT_FOUND) without sending anything', async () => {
    const server = await api({ 'GET /v1/grants/gnt-x': () => ({ status: 404, json: { code: 'PROJECTION_NOT_FOUND', message: 'no grant gnt-x' } }) });
    const result = await writ(['grant', 'revoke', 'gnt-x', '--key', director.privateFile, '--principal', 'director-1', '--url', server.url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_GRANT_NOT_FOUND: .*--task/);
  });
});

describe('writ keys rotate', () => {
  it('signs a KeyRotation for the service and prints the new kid and until when the old one stays valid', async () => {
    const service = standIn('rotate-key', async (request) => {
      const rotation = KeyRotation.parse(await verifiedPayload(String(request['rotation_jws'])));
      expect(rotation).toEqual({ service: 'approval', requested_by: 'director-1', requested_at: NOW.toISOString(), reason: 'quarterly' });
      return { principal_id: 'writ-approval', status: 'rotated', kid: 'writ-approval-new', previous_kid: 'writ-approval-old', retire_after: '2031-05-01T12:36:00.000Z' };
    });
    const result = await writ(['keys', 'rotate', '--service', 'approval', '--key', director.privateFile, '--principal', 'director-1', '--reason', 'quarterly']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('rotated writ-approval: signing with writ-approval-new; writ-approval-old stays valid until 2031-05-01T12:36:00.000Z');
    expect(service.seen).toHaveLength(1);
  });

  it('refuses an unknown service as a usage error, and reports a service that does not answer', async () => {
    const unknown = await writ(['keys', 'rotate', '--service', 'ingress', '--key', director.privateFile, '--principal', 'director-1']);
    expect(unknown.code).toBe(2);
    // no stand-in: nobody answers
    const silent = await writ(['keys', 'rotate', '--service', 'approval', '--key', director.privateFile, '--principal', 'director-1']);
    expect(silent.code).toBe(1);
    expect(silent.stderr).toMatch(/^error CLI_SERVICE_UNAVAILABLE: /);
  });
});

describe('writ keys list', () => {
  it("shows each key of the service as the log tells it: active, retiring until T, retired", async () => {
    // given the approval service's keyring rotated twice, the first key retired
    let now = new Date('2031-05-01T12:00:00.000Z');
    const keyDir = join(dir, 'approval-keys');
    const { key } = await RotatingServiceKey.start(store, { principalId: 'writ-approval', displayName: 'approval', keyDir, clock: () => now });
    const first = key.active.kid;
    await key.rotate({ kid: 'writ-approval-k2', validForSeconds: 360, requestedBy: 'director-1' });
    now = new Date('2031-05-01T12:10:00.000Z');
    await key.retireDue();
    await key.rotate({ kid: 'writ-approval-k3', validForSeconds: 360 });
    await key.stop();

    // when they are listed
    const json = await writ(['keys', 'list', '--service', 'approval', '--json']);
    const table = await writ(['keys', 'list']);

    // then each key has its status
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      principals: [
        {
          principal_id: 'writ-approval',
          keys: [
            expect.objectContaining({ kid: first, status: 'retired', added_at: '2031-05-01T12:00:00.000Z', retired_at: '2031-05-01T12:10:00.000Z', reason: 'rotated' }),
            expect.objectContaining({ kid: 'writ-approval-k2', status: 'retiring', added_at: '2031-05-01T12:00:00.000Z', retire_after: '2031-05-01T12:16:00.000Z' }),
            expect.objectContaining({ kid: 'writ-approval-k3', status: 'active', added_at: '2031-05-01T12:10:00.000Z' }),
          ],
        },
      ],
    });
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toMatch(/^PRINCIPAL +KID +STATUS +ADDED_AT$/);
    expect(lines[1]).toMatch(new RegExp(`^writ-approval +${first} +retired 2031-05-01T12:10:00.000Z \\(rotated\\) +2031-05-01T12:00:00.000Z$`));
    expect(lines[2]).toMatch(/^writ-approval +writ-approval-k2 +retiring until 2031-05-01T12:16:00.000Z +2031-05-01T12:00:00.000Z$/);
    expect(lines[3]).toMatch(/^writ-approval +writ-approval-k3 +active +2031-05-01T12:10:00.000Z$/);
  });

  it('reports a service that never registered', async () => {
    const result = await writ(['keys', 'list', '--service', 'receipt']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_PRINCIPAL_NOT_FOUND: /);
  });
});
