import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HTTP_TOKEN_JWS_TYPE, HttpTokenClaims, httpAudience } from '@writ/contracts';
import { exportEd25519PrivateJwk, generateEd25519Key, verifyJws, type Ed25519SigningKey } from '@writ/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRow, startApi, type FakeApi } from '../test/projection-api.fixture.js';
import { run, type CliIo } from './main.js';

// The CLI's side of the HTTP credential: each read carries a fresh bearer token signed by the
// caller's key (the operator of writ.env by default, or --principal / --key), and
// `writ http token` mints one for curl, dashboards and the conformance agent.

const NOW = new Date('2031-05-01T12:30:00.000Z');
let dir: string;
let server: FakeApi;
let operator: Ed25519SigningKey;
let director: Ed25519SigningKey;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'writ-cli-http-'));
  operator = await generateEd25519Key({ kid: 'operator-k1', extractable: true });
  director = await generateEd25519Key({ kid: 'dir-k1', extractable: true });
  await writeFile(join(dir, 'operator.jwk.json'), JSON.stringify(await exportEd25519PrivateJwk(operator)));
  await writeFile(join(dir, 'director.jwk.json'), JSON.stringify(await exportEd25519PrivateJwk(director)));
  server = await startApi({ 'GET /v1/actions/ar-1': () => ({ json: actionRow }) });
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

async function writ(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => NOW };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** The claims of `Bearer <token>` once its signature and typ verify under `key`. */
async function claimsOf(authorization: string | undefined, key: Ed25519SigningKey): Promise<HttpTokenClaims> {
  expect(authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
  const verified = await verifyJws(String(authorization).slice('Bearer '.length), key, { typ: HTTP_TOKEN_JWS_TYPE });
  return HttpTokenClaims.parse(JSON.parse(new TextDecoder().decode(verified.payload)));
}

describe('the CLI reads the API with a bearer token', () => {
  it("given the operator of writ.env, when it reads an action, then the request carries a fresh token signed by the operator's key for this deployment", async () => {
    const before = server.seen.length;
    const result = await writ(['action', 'ar-1', '--url', server.url], { WRIT_OPERATOR_ID: 'operator', WRIT_OPERATOR_KEY: 'operator.jwk.json', WRIT_SUBJECT_ROOT: 'writ' });
    expect(result.code).toBe(0);
    const claims = await claimsOf(server.seen[before]?.headers.authorization, operator);
    expect(claims).toMatchObject({ sub: 'operator', iss: 'operator', aud: httpAudience('writ'), iat: NOW.getTime() / 1000 });
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(900);
  });

  it('given --principal and --key, when it reads, then the token is theirs', async () => {
    const before = server.seen.length;
    const result = await writ(['action', 'ar-1', '--url', server.url, '--principal', 'dir-1', '--key', 'director.jwk.json'], { WRIT_OPERATOR_KEY: 'operator.jwk.json' });
    expect(result.code).toBe(0);
    expect(await claimsOf(server.seen[before]?.headers.authorization, director)).toMatchObject({ sub: 'dir-1' });
  });

  it('given no key but WRIT_HTTP_AUTHORIZATION, when it reads, then that header is sent as is', async () => {
    const before = server.seen.length;
    await writ(['action', 'ar-1', '--url', server.url], { WRIT_HTTP_AUTHORIZATION: 'Bearer minted.elsewhere.x' });
    expect(server.seen[before]?.headers.authorization).toBe('Bearer minted.elsewhere.x');
  });
});

describe('writ http token', () => {
  it('given the operator, when a token is minted with --ttl 10m, then it prints `Bearer <token>` living 10 minutes for writ-http:<root>', async () => {
    const result = await writ(['http', 'token', '--ttl', '10m'], { WRIT_OPERATOR_ID: 'operator', WRIT_OPERATOR_KEY: 'operator.jwk.json', WRIT_SUBJECT_ROOT: 'myroot' });
    expect(result.code).toBe(0);
    const claims = await claimsOf(result.stdout.trim(), operator);
    expect(claims).toMatchObject({ sub: 'operator', aud: 'writ-http:myroot' });
    expect(claims.exp - claims.iat).toBe(600);
  });

  it('given --json, then it prints the header, the token, who, the kid and when it expires', async () => {
    const result = await writ(['http', 'token', '--principal', 'dir-1', '--key', 'director.jwk.json', '--json'], {});
    expect(JSON.parse(result.stdout)).toMatchObject({ principal_id: 'dir-1', kid: 'dir-k1', audience: 'writ-http:writ', expires_at: new Date(NOW.getTime() + 300_000).toISOString() });
  });

  it('given --ttl over 15 minutes or no key at all, then it refuses (CLI_USAGE, CLI_KEY_REQUIRED)', async () => {
    expect(await writ(['http', 'token', '--ttl', '1h'], { WRIT_OPERATOR_KEY: 'operator.jwk.json' })).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error CLI_USAGE: --ttl is at most 15m/) });
    expect(await writ(['http', 'token'], {})).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error CLI_KEY_REQUIRED: /) });
  });
});
