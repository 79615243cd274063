import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { PrincipalRegistered } from '@writ/contracts';
import { importEd25519PublicJwk, verifyJws } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, type CliIo } from './main.js';
import { ServiceProcess, operatorEnv } from '../test/service-process.fixture.js';

const MiB = 1024 ** 2;
const BIN = fileURLToPath(new URL('../bin/writ.mjs', import.meta.url));

let nc: NatsConnection;
let store: EventStore;
let dir: string;
const root = uniqueName('t');
const streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
let ingress: ServiceProcess | undefined;
const env = { ...operatorEnv(), WRIT_SUBJECT_ROOT: root, WRIT_EVENTS_STREAM: streams.events, WRIT_NATS_URL: process.env['WRIT_NATS_URL'] ?? 'nats://127.0.0.1:4223' };

beforeAll(async () => {
  nc = await connectTestNats('cli-test');
  store = await EventStore.open(nc, { stream: streams.events, subjectPrefix: `${root}.evt`, maxBytes: 64 * MiB });
  await (await jetstreamManager(nc)).streams.add({ name: streams.ingress, subjects: [`${root}.ingress.>`], max_bytes: 8 * MiB });
  dir = await mkdtemp(join(tmpdir(), 'writ-cli-'));
  // `writ principal add` registers through ingress, which verifies the operator's signature and appends.
  ingress = ServiceProcess.start(
    'ingress',
    { ...env, WRIT_INGRESS_STREAM: streams.ingress, WRIT_COMMANDS_STREAM: streams.commands, WRIT_DLQ_STREAM: streams.dlq, WRIT_ARTIFACTS_BUCKET: uniqueName('ART') },
    join(dir, 'ingress.log'),
  );
  await waitFor(
    async () => {
      ingress?.assertRunning();
      return await nc.request(`${root}.qry.ingress.register-principal`, '{}', { timeout: 1_000 }).catch(() => undefined);
    },
    { timeoutMs: 30_000, what: 'ingress answering register-principal' },
  );
}, 60_000);

afterAll(async () => {
  await ingress?.stop();
  await deleteStreams(nc, ...Object.values(streams));
  await nc.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs `writ <argv>` in process, capturing its output. */
async function writ(argv: string[], overrides: Partial<Record<string, string>> = {}, now = () => new Date()) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env: { ...env, ...overrides }, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

async function keypair(kid: string): Promise<{ publicFile: string; privateFile: string; publicJwk: Record<string, unknown> }> {
  const privateFile = join(dir, `${kid}.private.json`);
  const result = await writ(['principal', 'keygen', '--kid', kid, '--out', privateFile]);
  expect(result.code).toBe(0);
  const publicFile = join(dir, `${kid}.public.json`);
  await writeFile(publicFile, result.stdout);
  return { publicFile, privateFile, publicJwk: JSON.parse(result.stdout) as Record<string, unknown> };
}

describe('writ principal keygen', () => {
  it('writes the private JWK with mode 0600 and prints only the public JWK', async () => {
    // when a key pair is generated
    const out = join(dir, 'k-gen.json');
    const result = await writ(['principal', 'keygen', '--kid', 'k-gen', '--out', out]);
    // then stdout is the public JWK, and the private one is in a file only its owner reads
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed).toMatchObject({ kty: 'OKP', crv: 'Ed25519', kid: 'k-gen' });
    expect(printed).not.toHaveProperty('d');
    const written = JSON.parse(await readFile(out, 'utf8')) as Record<string, unknown>;
    expect(written).toMatchObject({ kid: 'k-gen', x: printed['x'] });
    expect(typeof written['d']).toBe('string');
    expect(result.stdout).not.toContain(written['d'] as string);
    expect((await stat(out)).mode & 0o777).toBe(0o600);
  });

  it('refuses to overwrite a key file', async () => {
    const out = join(dir, 'taken.json');
    await writeFile(out, 'keep me');
    const result = await writ(['principal', 'keygen', '--out', out]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_FILE_EXISTS: /);
    expect(await readFile(out, 'utf8')).toBe('keep me');
  });
});

describe('writ principal add', () => {
  it('registers the principal once through ingress, signed by the operator; re-runs idempotently; adds a new key; issues the agent its bus credential', async () => {
    // given a public key
    const id = uniqueName('agent');
    const k1 = await keypair(`${id}-k1`);
    const add = (jwk: string) => writ(['principal', 'add', '--id', id, '--type', 'agent', '--role', 'executor', '--jwk', jwk]);
    // when it is registered, twice
    const first = await add(k1.publicFile);
    const again = await add(k1.publicFile);
    // then the principal id is printed both times and the log holds one principal.registered, authorized by the operator
    expect(first).toMatchObject({ code: 0, stdout: id });
    expect(again).toMatchObject({ code: 0, stdout: id });
    const events = await store.readEntity('principal', id);
    expect(events.map((e) => e.event.event_type)).toEqual(['principal.registered']);
    const registered = PrincipalRegistered.parse(events[0]!.event.payload);
    expect(registered).toMatchObject({ principal_type: 'agent', roles: ['executor'], keys: [k1.publicJwk], registered_by: operatorEnv()['WRIT_OPERATOR_ID'] ?? 'operator' });
    expect(registered.authorization?.split('.')).toHaveLength(3);
    // and the agent's bus credential was written once, readable by its owner only
    const creds = join(dir, `${id}.creds`);
    expect((await stat(creds)).mode & 0o777).toBe(0o600);
    expect(await readFile(creds, 'utf8')).toMatch(/BEGIN NATS USER JWT/);
    expect(again.stderr).toContain('exists: kept');

    // when a second key is added
    const k2 = await keypair(`${id}-k2`);
    const rotated = await writ(['principal', 'add', '--id', id, '--type', 'agent', '--role', 'executor', '--jwk', k2.publicFile, '--json']);
    // then principal.key_added follows, and show lists both keys
    expect(JSON.parse(rotated.stdout)).toEqual({ principal_id: id, outcome: 'key_added', kids_added: [`${id}-k2`] });
    expect((await store.readEntity('principal', id)).map((e) => e.event.event_type)).toEqual(['principal.registered', 'principal.key_added']);
    const shown = await writ(['principal', 'show', id, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ principal_id: id, principal_type: 'agent', roles: ['executor'], keys: [{ kid: `${id}-k1` }, { kid: `${id}-k2` }] });
  });

  it('refuses a JWK carrying the private part, and appends nothing', async () => {
    const id = uniqueName('agent');
    const key = await keypair(`${id}-k1`);
    const result = await writ(['principal', 'add', '--id', id, '--type', 'agent', '--role', 'executor', '--jwk', key.privateFile]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_PRIVATE_KEY_REFUSED: /);
    expect(result.stderr).not.toContain((JSON.parse(await readFile(key.privateFile, 'utf8')) as { d: string }).d);
    expect((await store.headOfEntity('principal', id)).taskSeq).toBe(0);
  });

  it('refuses to redefine an existing principal (type, roles, or another key under a known kid)', async () => {
    const id = uniqueName('agent');
    const key = await keypair(`${id}-k1`);
    expect((await writ(['principal', 'add', '--id', id, '--type', 'agent', '--role', 'executor', '--jwk', key.publicFile, '--no-creds'])).code).toBe(0);
    const asUser = await writ(['principal', 'add', '--id', id, '--type', 'user', '--role', 'executor', '--jwk', key.publicFile, '--no-creds']);
    expect(asUser.stderr).toMatch(/^error INGRESS_PRINCIPAL_CONFLICT: /);
    const other = await keypair(`${id}-other`);
    const reuse = join(dir, `${id}-reuse.json`);
    await writeFile(reuse, JSON.stringify({ ...other.publicJwk, kid: `${id}-k1` }));
    const kidReuse = await writ(['principal', 'add', '--id', id, '--type', 'agent', '--role', 'executor', '--jwk', reuse, '--no-creds']);
    expect(kidReuse.stderr).toMatch(/^error INGRESS_PRINCIPAL_CONFLICT: /);
    expect((await store.headOfEntity('principal', id)).taskSeq).toBe(1);
  });

  it('given no operator key, or a signer that is not an operator, then nothing is registered', async () => {
    // given an agent registered by the operator, and a key of its own
    const agent = uniqueName('agent');
    const agentKey = await keypair(`${agent}-k1`);
    expect((await writ(['principal', 'add', '--id', agent, '--type', 'agent', '--role', 'executor', '--jwk', agentKey.publicFile, '--no-creds'])).code).toBe(0);
    const newcomer = uniqueName('director');
    const newKey = await keypair(`${newcomer}-k1`);
    // when the registration has no key at all
    const unsigned = await writ(['principal', 'add', '--id', newcomer, '--type', 'user', '--role', 'director', '--jwk', newKey.publicFile], { WRIT_OPERATOR_KEY: '' });
    // and when the agent signs a director's registration (its own key, and itself as the signer)
    const byAgent = await writ(['principal', 'add', '--id', newcomer, '--type', 'user', '--role', 'director', '--jwk', newKey.publicFile, '--key', agentKey.privateFile, '--principal', agent]);
    // and when it claims to be the operator with its own key
    const asOperator = await writ(['principal', 'add', '--id', newcomer, '--type', 'user', '--role', 'director', '--jwk', newKey.publicFile, '--key', agentKey.privateFile, '--principal', operatorEnv()['WRIT_OPERATOR_ID'] ?? 'operator']);
    // then each is refused by code, and no director exists
    expect(unsigned.stderr).toMatch(/^error CLI_KEY_REQUIRED: /);
    expect(byAgent.stderr).toMatch(/^error INGRESS_ADMIN_FORBIDDEN: /);
    expect(asOperator.stderr).toMatch(/^error INGRESS_ADMIN_SIGNATURE_INVALID: /);
    expect((await store.headOfEntity('principal', newcomer)).taskSeq).toBe(0);
  });

  it("given an agent's own bus credential, then it cannot even send a registration (self-registration as director), and nothing is appended", async () => {
    // given an agent with the credential the operator issued it
    const agent = uniqueName('agent');
    const key = await keypair(`${agent}-k1`);
    expect((await writ(['principal', 'add', '--id', agent, '--type', 'agent', '--role', 'executor', '--jwk', key.publicFile])).code).toBe(0);
    // when it tries to register itself a director identity, signing with its own key, over its own credential
    const director = uniqueName('self-director');
    const attempt = await writ(['principal', 'add', '--id', director, '--type', 'user', '--role', 'director', '--jwk', key.publicFile, '--key', key.privateFile, '--principal', agent, '--no-creds'], {
      WRIT_NATS_CREDS: join(dir, `${agent}.creds`),
    });
    // then the bus refuses the request itself
    expect(attempt.stderr).toMatch(/^error CLI_BUS_FORBIDDEN: /);
    expect((await store.headOfEntity('principal', director)).taskSeq).toBe(0);
  });

  it('reports usage errors and an unreachable ingress by code', async () => {
    const key = await keypair(uniqueName('k'));
    const noRole = await writ(['principal', 'add', '--id', 'x', '--type', 'agent', '--jwk', key.publicFile]);
    expect(noRole).toMatchObject({ code: 2 });
    expect(noRole.stderr).toMatch(/^error CLI_USAGE: /);
    const badType = await writ(['principal', 'add', '--id', 'x', '--type', 'robot', '--role', 'executor', '--jwk', key.publicFile]);
    expect(badType.stderr).toMatch(/^error CLI_USAGE: /);
    const noIngress = await writ(['principal', 'add', '--id', 'x', '--type', 'agent', '--role', 'executor', '--jwk', key.publicFile, '--no-creds'], { WRIT_SUBJECT_ROOT: uniqueName('nobody') });
    expect(noIngress.stderr).toMatch(/^error CLI_SERVICE_UNAVAILABLE: /);
    const missing = await writ(['principal', 'show', uniqueName('nobody')]);
    expect(missing.stderr).toMatch(/^error CLI_PRINCIPAL_NOT_FOUND: /);
  });
});

describe('writ principal revoke', () => {
  it("given an agent connected with its credential, when an operator revokes it, then its keys are revoked in the log, its live connection is cut and its credential refused", async () => {
    // given an agent registered with its bus credential, connected
    const agent = uniqueName('agent');
    const key = await keypair(`${agent}-k1`);
    expect((await writ(['principal', 'add', '--id', agent, '--type', 'agent', '--role', 'executor', '--jwk', key.publicFile])).code).toBe(0);
    const creds = await readFile(join(dir, `${agent}.creds`));
    const live = await connect({ servers: env.WRIT_NATS_URL ?? NATS_URL, authenticator: credsAuthenticator(creds), reconnect: false });
    // when another agent tries to revoke it, then that is refused and nothing changes
    const other = uniqueName('agent');
    const otherKey = await keypair(`${other}-k1`);
    expect((await writ(['principal', 'add', '--id', other, '--type', 'agent', '--role', 'executor', '--jwk', otherKey.publicFile, '--no-creds'])).code).toBe(0);
    const forbidden = await writ(['principal', 'revoke', agent, '--key', otherKey.privateFile, '--principal', other]);
    expect(forbidden.stderr).toMatch(/^error INGRESS_ADMIN_FORBIDDEN: /);
    expect(live.isClosed()).toBe(false);
    // when the operator revokes it
    const revoked = await writ(['principal', 'revoke', agent, '--reason', 'compromised', '--json']);
    // then every key is revoked, by an event carrying the operator's signed request
    expect(JSON.parse(revoked.stdout)).toEqual({ principal_id: agent, kids_revoked: [`${agent}-k1`], bus_revoked: true });
    const last = (await store.readEntity('principal', agent)).at(-1)?.event;
    expect(last).toMatchObject({ event_type: 'principal.key_revoked', payload: { kid: `${agent}-k1`, reason: 'compromised' } });
    expect(String((last?.payload as { authorization?: string }).authorization).split('.')).toHaveLength(3);
    // and its bus access is gone: the live connection closes, a new one is refused
    await waitFor(() => (live.isClosed() ? true : undefined), { timeoutMs: 10_000, what: 'the revoked agent disconnected' });
    await expect(connect({ servers: env.WRIT_NATS_URL ?? NATS_URL, authenticator: credsAuthenticator(creds), reconnect: false, timeout: 3_000 })).rejects.toThrow();
    // and a second revocation appends nothing
    expect(JSON.parse((await writ(['principal', 'revoke', agent, '--json'])).stdout)).toMatchObject({ kids_revoked: [] });
  });

  it("given two directors connected with their credentials, when the operator revokes one, then only that one's bus access is cut, and every other party keeps working", async () => {
    // given two directors, each registered with the bus credential the operator issued it, both connected
    const [revokedId, keptId] = [uniqueName('director'), uniqueName('director')];
    const connections = [];
    for (const id of [revokedId, keptId]) {
      const key = await keypair(`${id}-k1`);
      expect((await writ(['principal', 'add', '--id', id, '--type', 'user', '--role', 'director', '--jwk', key.publicFile])).code).toBe(0);
      const creds = await readFile(join(dir, `${id}.creds`));
      connections.push({ creds, live: await connect({ servers: env.WRIT_NATS_URL ?? NATS_URL, authenticator: credsAuthenticator(creds), reconnect: false }) });
    }
    const [revoked, kept] = connections as [(typeof connections)[number], (typeof connections)[number]];
    // when the operator revokes the first
    const result = await writ(['principal', 'revoke', revokedId, '--json']);
    // then its keys are revoked and its bus credential cut: its live connection closes, a new one is refused
    expect(JSON.parse(result.stdout)).toEqual({ principal_id: revokedId, kids_revoked: [`${revokedId}-k1`], bus_revoked: true });
    await waitFor(() => (revoked.live.isClosed() ? true : undefined), { timeoutMs: 10_000, what: 'the revoked director disconnected' });
    await expect(connect({ servers: env.WRIT_NATS_URL ?? NATS_URL, authenticator: credsAuthenticator(revoked.creds), reconnect: false, timeout: 3_000 })).rejects.toThrow();
    // and the other director, the operator and the services are untouched (the re-signed Writ account kept its exports and signing key)
    expect(kept.live.isClosed()).toBe(false);
    await kept.live.flush();
    const again = await connect({ servers: env.WRIT_NATS_URL ?? NATS_URL, authenticator: credsAuthenticator(kept.creds), reconnect: false, timeout: 3_000 });
    await again.close();
    await kept.live.close();
    expect(JSON.parse((await writ(['principal', 'revoke', revokedId, '--json'])).stdout)).toMatchObject({ kids_revoked: [] });
  });
});

describe('writ streams ensure', () => {
  it('given bus streams with limits of an older release, then the operator brings them to the configured ones (which a service credential may not)', async () => {
    // given an ingress stream whose duplicate window is not the one configured
    const names = { ingress: uniqueName('SING'), commands: uniqueName('SCMD'), dlq: uniqueName('SDLQ') };
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: names.ingress, subjects: [`${root}x.ingress.>`], duplicate_window: 5 * 60 * 1e9, max_bytes: 8 * MiB });
    const streamEnv = { WRIT_SUBJECT_ROOT: `${root}x`, WRIT_EVENTS_STREAM: uniqueName('SEVT'), WRIT_INGRESS_STREAM: names.ingress, WRIT_COMMANDS_STREAM: names.commands, WRIT_DLQ_STREAM: names.dlq, WRIT_BUS_MAX_BYTES: String(8 * MiB), WRIT_EVENTS_MAX_BYTES: String(64 * MiB) };
    try {
      // when the operator ensures the streams
      const result = await writ(['streams', 'ensure', '--json'], streamEnv);
      // then the log is created and the ingress stream runs the configured window
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ events: `${streamEnv.WRIT_EVENTS_STREAM} created` });
      expect((await jsm.streams.info(names.ingress)).config.duplicate_window).not.toBe(5 * 60 * 1e9);
      expect((await writ(['streams', 'ensure'], streamEnv)).code).toBe(0);
    } finally {
      await deleteStreams(nc, names.ingress, names.commands, names.dlq, streamEnv.WRIT_EVENTS_STREAM);
    }
  });
});

describe('writ streams replicas', () => {
  it('given streams of one replica (one server), then each is reported with nothing to compare and it exits 0', async () => {
    const result = await writ(['streams', 'replicas', '--json', '--stream', streams.events]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ streams: [{ stream: streams.events, replicas: 1, compared: null, diverged: [], repaired: [] }] });
  });

  it('given a stream that does not exist, then it is a usage error naming the streams to check', async () => {
    const name = uniqueName('NOPE');
    const result = await writ(['streams', 'replicas', '--stream', name]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error CLI_USAGE: no stream ${name} on this server`);
  });
});

describe('writ doctor', () => {
  it("given Writ's NATS and no services on the given host, then auth and the credential pass, every service fails with its next step, and it exits CLI_DOCTOR_FAILED", async () => {
    const result = await writ(['doctor', '--json', '--host', '127.0.0.9'], { WRIT_URL: '' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_DOCTOR_FAILED: /);
    const report = JSON.parse(result.stdout) as { ok: boolean; checks: { check: string; ok: boolean; fix?: string }[] };
    const byName = new Map(report.checks.map((check) => [check.check, check]));
    expect(byName.get('nats_auth')?.ok).toBe(true);
    expect(byName.get('nats_connect')?.ok).toBe(true);
    expect(byName.get(`stream ${streams.events}`)?.ok).toBe(true);
    expect(byName.get('service ingress')).toMatchObject({ ok: false, fix: 'start the stack: scripts/writ-up.sh' });
  });

  it('given no credential, then the connection check fails and says which to use', async () => {
    const result = await writ(['doctor', '--json', '--host', '127.0.0.9'], { WRIT_NATS_CREDS: '' });
    const report = JSON.parse(result.stdout) as { checks: { check: string; ok: boolean; fix?: string }[] };
    expect(report.checks.find((check) => check.check === 'nats_connect')).toMatchObject({ ok: false });
  });
});

describe('writ action submit', () => {
  async function requestFile(body: Record<string, unknown>): Promise<string> {
    const file = join(dir, `${uniqueName('req')}.json`);
    await writeFile(file, JSON.stringify(body));
    return file;
  }

  const base = (actionRequestId: string) => ({
    action_request_id: actionRequestId,
    task: { title: 'hello', goal: 'write hello.txt', policy_profile: 'local_edit_allowed', files_owned: ['**'] },
    action_class: 'execute_command',
    target_resources: ['hello.txt'],
    params: { argv: ['sh', '-c', 'echo hello > hello.txt'] },
    expected_effects: ['hello.txt exists'],
    reversibility_hint: 'reversible',
    reason: 'cli test',
  });

  it('signs the request and publishes it to <root>.ingress.action.<principal> with Writ-Idempotency-Key = action_request_id (no Nats-Msg-Id: JetStream would dedupe it across principals)', async () => {
    // given a key and a request file without proposed_by / proposed_at
    const principal = uniqueName('agent');
    const key = await keypair(`${principal}-k1`);
    const actionRequestId = uniqueName('ar');
    const now = new Date('2031-05-01T12:00:00.000Z');
    // when it is submitted over NATS
    const result = await writ(['action', 'submit', await requestFile(base(actionRequestId)), '--key', key.privateFile, '--principal', principal], {}, () => now);
    // then the JetStream ack is printed
    expect(result.code).toBe(0);
    const ack = JSON.parse(result.stdout) as { stream: string; seq: number; duplicate: boolean };
    expect(ack).toMatchObject({ stream: streams.ingress, duplicate: false });
    // and the stored message is the compact JWS of the completed request, keyed by action_request_id
    const stored = await (await jetstreamManager(nc)).streams.getMessage(streams.ingress, { seq: ack.seq });
    expect(stored?.subject).toBe(`${root}.ingress.action.${principal}`);
    expect(stored?.header.get('Writ-Idempotency-Key')).toBe(actionRequestId);
    expect(stored?.header.get('Nats-Msg-Id')).toBe('');
    const verified = await verifyJws(stored!.string(), await importEd25519PublicJwk(key.publicJwk));
    expect(JSON.parse(new TextDecoder().decode(verified.payload))).toMatchObject({ action_request_id: actionRequestId, proposed_by: principal, proposed_at: now.toISOString() });
  });

  it('refuses a request that does not satisfy the contract, or a proposer that disagrees with --principal', async () => {
    const key = await keypair(uniqueName('k'));
    const { params: _params, ...noParams } = base(uniqueName('ar'));
    const invalid = await writ(['action', 'submit', await requestFile(noParams), '--key', key.privateFile, '--principal', 'agent-1']);
    expect(invalid.stderr).toMatch(/^error CONTRACT_INVALID: /);
    const mismatch = await writ(['action', 'submit', await requestFile({ ...base(uniqueName('ar')), proposed_by: 'agent-2' }), '--key', key.privateFile, '--principal', 'agent-1']);
    expect(mismatch.stderr).toMatch(/^error CLI_PRINCIPAL_MISMATCH: /);
    const nobody = await writ(['action', 'submit', await requestFile(base(uniqueName('ar'))), '--key', key.privateFile]);
    expect(nobody.stderr).toMatch(/^error CLI_PRINCIPAL_REQUIRED: /);
  });

  it('POSTs the compact JWS to <url>/v1/actions with the idempotency key, and exits with the remote code on a refusal', async () => {
    // given an HTTP endpoint that accepts the first request and refuses the second
    const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', headers: req.headers, body });
        const refuse = seen.length > 1;
        res.writeHead(refuse ? 422 : 202, { 'content-type': 'application/json' });
        res.end(JSON.stringify(refuse ? { ingress_id: 'ing-2', status: 'rejected', reason_code: 'INGRESS_STALE', message: 'stale' } : { ingress_id: 'ing-1', status: 'accepted' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const principal = uniqueName('agent');
      const key = await keypair(`${principal}-k1`);
      const actionRequestId = uniqueName('ar');
      const file = await requestFile({ ...base(actionRequestId), proposed_by: principal });
      // when it is submitted over HTTP
      const accepted = await writ(['action', 'submit', file, '--key', key.privateFile, '--http', url]);
      // then the body is the JWS and the reply is printed
      expect(accepted.code).toBe(0);
      expect(JSON.parse(accepted.stdout)).toMatchObject({ status: 'accepted' });
      expect(seen[0]).toMatchObject({ url: '/v1/actions', headers: { 'content-type': 'application/jose', 'idempotency-key': actionRequestId } });
      expect(seen[0]!.body.split('.')).toHaveLength(3);
      // and a refusal exits non-zero with the refusal's code
      const refused = await writ(['action', 'submit', file, '--key', key.privateFile, '--http', url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^error INGRESS_STALE: /);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('the writ bin', () => {
  const execFileAsync = promisify(execFile);

  it('runs `writ principal add --id X --type agent --role executor --jwk file` as the conformance agent does', async () => {
    // given a public JWK as the conformance agent writes it (node:crypto export + kid, alg, use)
    const id = uniqueName('smoke-agent');
    const jwkFile = join(dir, `${id}.jwk.json`);
    await writeFile(jwkFile, JSON.stringify({ ...generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }), kid: `${id}-k1`, alg: 'EdDSA', use: 'sig' }));
    // when the real bin runs in a child process
    const { stdout } = await execFileAsync(process.execPath, [BIN, 'principal', 'add', '--id', id, '--type', 'agent', '--role', 'executor', '--jwk', jwkFile], {
      env: { ...process.env, ...env },
      // The agent's bus credential is written to the working directory: the test's, never the repository.
      cwd: dir,
    });
    // then it exits 0, prints the id, and the principal is in the log
    expect(stdout.trim()).toBe(id);
    expect((await store.headOfEntity('principal', id)).taskSeq).toBe(1);
  });

  it('exits non-zero with `error CODE: message` on stderr', async () => {
    const key = await keypair(uniqueName('k'));
    const failure = await execFileAsync(process.execPath, [BIN, 'principal', 'add', '--id', uniqueName('a'), '--type', 'agent', '--role', 'executor', '--jwk', key.privateFile], {
      env: { ...process.env, ...env },
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toMatch(/^error CLI_PRIVATE_KEY_REFUSED: /);
  });
});
