import { randomUUID } from 'node:crypto';
import { EventDraft, HTTP_TOKEN_JWS_TYPE, PRINCIPAL_REGISTRATION_JWS_TYPE, httpAudience, type PrincipalRole, type PrincipalType } from '@writ/contracts';
import { generateEd25519Key, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { mintHttpToken } from '@writ/runtime';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRequest, fakeJws, happyPath, storyIds, type StoryEvent, type StoryIds } from '../test/governed-path.fixture.js';
import { createRig, http, type Rig } from '../test/projection-rig.js';
import type { ProjectionApp } from './bootstrap.js';

/**
 * The HTTP trust boundary against the real NATS and Postgres: every read needs a bearer token
 * signed by a registered, active key of a principal in the log (docs/security.md, "HTTP reads"),
 * and answers only what that principal may see. Each refusal is 401 with its code in problem
 * details (`application/problem+json`, RFC 9457), never a stack trace.
 */

interface Reader {
  readonly id: string;
  readonly key: Ed25519SigningKey;
}

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

function principalEvent(id: string, type: string, payload: Record<string, unknown>): StoryEvent {
  const draft = EventDraft.parse({
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: type,
    entity_type: 'principal',
    entity_id: id,
    occurred_at: new Date().toISOString(),
    actor_type: 'service',
    actor_id: 'writ-ingress',
    payload,
    causation_id: null,
    correlation_id: id,
  });
  return { aggregate: 'principal', aggregateId: id, draft };
}

async function register(rig: Rig, id: string, type: PrincipalType, roles: PrincipalRole[]): Promise<Reader> {
  const key = await generateEd25519Key({ kid: `${id}-k1` });
  await rig.append([
    principalEvent(id, 'principal.registered', { principal_id: id, principal_type: type, display_name: id, roles, keys: [key.publicJwk], registered_by: 'test-operator', at: new Date().toISOString() }),
  ]);
  return { id, key };
}

describe('HTTP reads need a credential, scoped to what the principal may see', () => {
  let rig: Rig;
  let app: ProjectionApp;
  let audience: string;
  let agentA: Reader;
  let agentB: Reader;
  let director: Reader;
  let observer: Reader;
  let revoked: Reader;
  let a: StoryIds;
  let b: StoryIds;

  const as = async (reader: Reader, path: string, options: { now?: Date; ttlSeconds?: number } = {}) =>
    http(app, path, { headers: { authorization: `Bearer ${await mintHttpToken({ principalId: reader.id, key: reader.key, audience, now: options.now ?? new Date(), ...(options.ttlSeconds === undefined ? {} : { ttlSeconds: options.ttlSeconds }) })}` } });
  const raw = (path: string, authorization = '') => http(app, path, { headers: { authorization } });
  /** A JWS of `claims` with `header`, signed by `key` (whatever the header claims). */
  const forged = async (header: Record<string, unknown>, claims: Record<string, unknown>, key: Ed25519SigningKey) => {
    const signingInput = `${b64(header)}.${b64(claims)}`;
    const signature = new Uint8Array(await crypto.subtle.sign('Ed25519', key.privateKey, new TextEncoder().encode(signingInput)));
    return `${signingInput}.${Buffer.from(signature).toString('base64url')}`;
  };
  const claimsOf = (reader: Reader, overrides: Record<string, unknown> = {}) => {
    const iat = Math.floor(Date.now() / 1000);
    return { sub: reader.id, iss: reader.id, aud: audience, iat, exp: iat + 300, ...overrides };
  };

  beforeAll(async () => {
    rig = await createRig();
    app = await rig.start();
    audience = httpAudience(rig.root);
    a = storyIds(uniqueName('a'));
    b = storyIds(uniqueName('b'));
    agentA = await register(rig, a.principal, 'agent', ['executor']);
    agentB = await register(rig, b.principal, 'agent', ['executor']);
    director = await register(rig, uniqueName('director'), 'user', ['director']);
    observer = await register(rig, uniqueName('dashboard'), 'system', ['observer']);
    revoked = await register(rig, uniqueName('revoked'), 'user', ['observer']);
    await rig.append(happyPath(a, fakeJws(actionRequest(a))));
    const last = await rig.append(happyPath(b, fakeJws(actionRequest(b))));
    await rig.caughtUp(last);
  }, 60_000);

  afterAll(async () => {
    await rig?.dispose();
  });

  describe('the token', () => {
    it('given no Authorization header, when a read is asked, then 401 HTTP_AUTH_MISSING with a JSON body and no stack', async () => {
      const answer = await raw(`/v1/actions/${a.actionRequest}`);
      expect(answer.status).toBe(401);
      // RFC 9457 problem details, the stable code kept (and message, detail's alias for earlier clients)
      expect(answer.contentType).toMatch(/^application\/problem\+json\b/);
      expect(answer.body).toEqual({
        type: '/v1/problems/HTTP_AUTH_MISSING',
        title: 'Http auth missing',
        status: 401,
        detail: expect.any(String),
        instance: `/v1/actions/${a.actionRequest}`,
        code: 'HTTP_AUTH_MISSING',
        message: answer.body['detail'],
      });
      expect(JSON.stringify(answer.body)).not.toMatch(/\bat .*\.(ts|js):\d+/);
      expect((await raw(`/v1/actions/${a.actionRequest}`, 'Basic b3BlcmF0b3I6eA==')).body).toMatchObject({ code: 'HTTP_AUTH_MISSING' });
    });

    it('given a malformed bearer, when a read is asked, then 401 HTTP_AUTH_MALFORMED', async () => {
      for (const value of ['Bearer not-a-jws', 'Bearer a.b', `Bearer ${b64('x')}.${b64('y')}.`, `Bearer ${b64({ alg: 'EdDSA', typ: HTTP_TOKEN_JWS_TYPE, kid: 'k' })}.${b64({ sub: 'x' })}.AAAA`]) {
        const answer = await raw(`/v1/tasks/${a.task}`, value);
        expect(answer.status, value).toBe(401);
        expect(answer.body, value).toMatchObject({ code: 'HTTP_AUTH_MALFORMED' });
      }
    });

    it('given alg HS256 or none, when a read is asked, then 401 HTTP_AUTH_ALG_NOT_ALLOWED', async () => {
      const claims = b64(claimsOf(director));
      const hs = `${b64({ alg: 'HS256', typ: HTTP_TOKEN_JWS_TYPE, kid: director.key.kid })}.${claims}.${Buffer.alloc(32).toString('base64url')}`;
      const none = `${b64({ alg: 'none', typ: HTTP_TOKEN_JWS_TYPE, kid: director.key.kid })}.${claims}.`;
      for (const token of [hs, none]) {
        const answer = await raw(`/v1/tasks/${a.task}`, `Bearer ${token}`);
        expect(answer.status).toBe(401);
        expect(answer.body).toMatchObject({ code: 'HTTP_AUTH_ALG_NOT_ALLOWED' });
      }
    });

    it("given a token signed by another key under the director's kid, when a read is asked, then 401 HTTP_AUTH_SIGNATURE_INVALID", async () => {
      const other = await generateEd25519Key({ kid: director.key.kid });
      const token = await forged({ alg: 'EdDSA', typ: HTTP_TOKEN_JWS_TYPE, kid: director.key.kid }, claimsOf(director), other);
      expect(await raw(`/v1/tasks/${a.task}`, `Bearer ${token}`)).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_SIGNATURE_INVALID' } });
    });

    it('given an unknown kid or an unknown principal, when a read is asked, then 401 HTTP_AUTH_KEY_UNKNOWN / HTTP_AUTH_PRINCIPAL_UNKNOWN', async () => {
      const stray = await generateEd25519Key({ kid: 'never-registered' });
      expect(await as({ id: director.id, key: stray }, `/v1/tasks/${a.task}`)).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_KEY_UNKNOWN' } });
      expect(await as({ id: uniqueName('nobody'), key: stray }, `/v1/tasks/${a.task}`)).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_PRINCIPAL_UNKNOWN' } });
    });

    it('given an expired token, one issued in the future, or one living over 15 minutes, then 401 EXPIRED / NOT_YET_VALID / LIFETIME_TOO_LONG', async () => {
      expect(await as(director, `/v1/tasks/${a.task}`, { now: new Date(Date.now() - 10 * 60_000), ttlSeconds: 60 })).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_EXPIRED' } });
      expect(await as(director, `/v1/tasks/${a.task}`, { now: new Date(Date.now() + 5 * 60_000) })).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_NOT_YET_VALID' } });
      const long = await signJws(JSON.stringify(claimsOf(director, { exp: Math.floor(Date.now() / 1000) + 3600 })), director.key, { typ: HTTP_TOKEN_JWS_TYPE });
      expect(await raw(`/v1/tasks/${a.task}`, `Bearer ${long}`)).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_LIFETIME_TOO_LONG' } });
    });

    it('given a token for another audience, then 401 HTTP_AUTH_AUDIENCE_INVALID', async () => {
      const other = await mintHttpToken({ principalId: director.id, key: director.key, audience: httpAudience('another-deployment'), now: new Date() });
      expect(await raw(`/v1/tasks/${a.task}`, `Bearer ${other}`)).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_AUDIENCE_INVALID' } });
    });

    it("given an agent's signed ActionRequest or an operator's signed admin request replayed as a bearer, then 401 HTTP_AUTH_TYPE_INVALID", async () => {
      const request = await signJws(JSON.stringify({ ...actionRequest(a), proposed_at: new Date().toISOString() }), agentA.key);
      expect(await raw(`/v1/actions/${a.actionRequest}`, `Bearer ${request}`)).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_TYPE_INVALID' } });
      const admin = await signJws(JSON.stringify({ principal_id: 'x', registered_by: director.id, registered_at: new Date().toISOString() }), director.key, { typ: PRINCIPAL_REGISTRATION_JWS_TYPE });
      expect(await raw(`/v1/tasks/${a.task}`, `Bearer ${admin}`)).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_TYPE_INVALID' } });
      // The same claims under the right typ but made for no audience (an admin request has none) are refused too.
      const noAudience = await signJws(JSON.stringify({ sub: director.id, iss: director.id, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 60 }), director.key, { typ: HTTP_TOKEN_JWS_TYPE });
      expect(await raw(`/v1/tasks/${a.task}`, `Bearer ${noAudience}`)).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_MALFORMED' } });
    });

    it('given a key revoked in the log, when its holder reads, then 401 HTTP_AUTH_KEY_UNKNOWN (within one delivery)', async () => {
      expect((await as(revoked, `/v1/tasks/${a.task}`)).status).toBe(200);
      await rig.append([principalEvent(revoked.id, 'principal.key_revoked', { kid: revoked.key.kid, reason: 'stolen laptop', revoked_by: 'test-operator', at: new Date().toISOString() })]);
      const answer = await waitFor(
        async () => {
          const got = await as(revoked, `/v1/tasks/${a.task}`);
          return got.status === 401 ? got : undefined;
        },
        { timeoutMs: 5_000, what: 'the revoked key to stop verifying' },
      );
      expect(answer.body).toMatchObject({ code: 'HTTP_AUTH_KEY_UNKNOWN' });
    });
  });

  describe('the scope', () => {
    it('given agent A, when it reads its own action, task, receipt, attempt, step, grant and principal, then each answers 200', async () => {
      const action = await as(agentA, `/v1/actions/${a.actionRequest}`);
      expect(action).toMatchObject({ status: 200, body: { action_request_id: a.actionRequest } });
      for (const path of [`/v1/tasks/${a.task}`, `/v1/receipts/${a.receipt}`, `/v1/attempts/${a.attempt}`, `/v1/steps/${a.step}`, `/v1/grants/${a.grant}`, `/v1/principals/${a.principal}`, `/v1/grants?task_id=${a.task}`]) {
        expect((await as(agentA, path)).status, path).toBe(200);
      }
      expect((await as(agentA, `/v1/grants?task_id=${a.task}`)).body['grants']).toHaveLength(1);
    });

    it("given agent A, when it reads agent B's action, task, receipt, grant or principal, then 404 exactly as for an id that does not exist", async () => {
      for (const [theirs, missing] of [
        [`/v1/actions/${b.actionRequest}`, `/v1/actions/${randomUUID()}`],
        [`/v1/tasks/${b.task}`, `/v1/tasks/no-such-task`],
        [`/v1/receipts/${b.receipt}`, `/v1/receipts/no-such-receipt`],
        [`/v1/attempts/${b.attempt}`, `/v1/attempts/no-such-attempt`],
        [`/v1/grants/${b.grant}`, `/v1/grants/no-such-grant`],
        [`/v1/principals/${b.principal}`, `/v1/principals/no-such-principal`],
      ] as const) {
        const refused = await as(agentA, theirs);
        const absent = await as(agentA, missing);
        expect(refused.status, theirs).toBe(404);
        expect(refused.body['code']).toBe('PROJECTION_NOT_FOUND');
        const theirId = theirs.split('/').at(-1) as string;
        const missingId = missing.split('/').at(-1) as string;
        expect(String(refused.body['message']).replaceAll(theirId, 'ID')).toBe(String(absent.body['message']).replaceAll(missingId, 'ID'));
      }
      expect((await as(agentA, `/v1/grants?task_id=${b.task}`)).body).toEqual({ grants: [] });
      // and the other way round: B reads its own, not A's
      expect((await as(agentB, `/v1/actions/${b.actionRequest}`)).status).toBe(200);
      expect((await as(agentB, `/v1/actions/${a.actionRequest}`)).status).toBe(404);
    });

    it('given agent A, when it lists grants, steps or artifacts across tasks or asks the projection status, then 403 PROJECTION_SCOPE_FORBIDDEN', async () => {
      for (const path of ['/v1/grants', '/v1/steps', '/v1/artifacts', '/v1/projections/status?checksums=false']) {
        expect(await as(agentA, path), path).toMatchObject({ status: 403, body: { code: 'PROJECTION_SCOPE_FORBIDDEN' } });
      }
    });

    it("given agent A, when it pages a list (tasks, actions, approvals, receipts, cells), even filtered by agent B, then it gets its own rows only", async () => {
      for (const list of ['tasks', 'actions', 'approvals', 'receipts', 'cells']) {
        const mine = await as(agentA, `/v1/${list}`);
        expect(mine.status, list).toBe(200);
        for (const row of mine.body['items'] as Array<Record<string, unknown>>) expect(JSON.stringify(row), list).not.toContain(b.tag);
        const theirs = await as(agentA, `/v1/${list}?principal_id=${b.principal}`);
        expect(theirs, list).toMatchObject({ status: 200, body: { items: [], next_cursor: null } });
        const theirTask = await as(agentA, list === 'tasks' ? `/v1/tasks?principal_id=${b.principal}` : `/v1/${list}?task_id=${b.task}`);
        expect(theirTask, list).toMatchObject({ status: 200, body: { items: [], next_cursor: null } });
      }
      expect(((await as(agentA, '/v1/tasks')).body['items'] as Array<{ task_id: string }>).map((row) => row.task_id)).toEqual([a.task]);
      expect(((await as(agentA, '/v1/receipts')).body['items'] as Array<{ receipt_id: string }>).map((row) => row.receipt_id)).toEqual([a.receipt]);
      expect(((await as(agentA, '/v1/actions')).body['items'] as Array<{ action_request_id: string }>).map((row) => row.action_request_id)).toEqual([a.actionRequest]);
    });

    it('given a director or an observer (a dashboard), when they read either agent\'s resources and the lists, then each answers 200', async () => {
      for (const reader of [director, observer]) {
        for (const path of [`/v1/actions/${a.actionRequest}`, `/v1/actions/${b.actionRequest}`, `/v1/tasks/${b.task}`, `/v1/receipts/${b.receipt}`, `/v1/principals/${b.principal}`, '/v1/approvals', '/v1/grants', '/v1/projections/status?checksums=false']) {
          expect((await as(reader, path)).status, `${reader.id} ${path}`).toBe(200);
        }
      }
    });
  });

  describe('what stays public', () => {
    it('given no credential, when the JWKS, healthz or readyz is asked, then it answers', async () => {
      expect((await raw('/v1/keys')).status).toBe(200);
      expect(await raw('/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect([200, 503]).toContain((await raw('/readyz')).status);
    });

    it('given no credential, when an unknown route is asked, then 404 PROJECTION_ROUTE_NOT_FOUND (no route, nothing to guard)', async () => {
      expect(await raw('/v1/nothing-here')).toMatchObject({ status: 404, body: { code: 'PROJECTION_ROUTE_NOT_FOUND' } });
    });
  });
});
