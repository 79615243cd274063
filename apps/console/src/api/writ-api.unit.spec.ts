import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from './http-client.js';
import { WritApi } from './writ-api.js';

/**
 * The API client against a real HTTP server answering canned JSON as the
 * projection does (`GET /v1/tasks` with `{ items, next_cursor }`, errors as
 * problem+json, 404 PROJECTION_ROUTE_NOT_FOUND for a route it lacks).
 */
let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

async function serve(routes: Record<string, { status?: number; json: unknown; type?: string }>): Promise<{ api: WritApi; seen: string[] }> {
  const seen: string[] = [];
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push(`${url.pathname}${url.search}`);
    const route = routes[url.pathname] ?? { status: 404, json: { code: 'PROJECTION_ROUTE_NOT_FOUND', message: 'no such route' } };
    res.writeHead(route.status ?? 200, { 'content-type': route.type ?? 'application/json' });
    res.end(JSON.stringify(route.json));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
  return { api: new WritApi(new HttpClient(async () => 'Bearer t', base)), seen };
}

const task = (id: string, status: string, updated: string) => ({ task_id: id, title: `title ${id}`, goal: 'g', status, owner_principal_id: 'agent-1', policy_profile: 'p', last_task_seq: 1, last_event_type: 'task.created', created_at: updated, updated_at: updated });

describe('WritApi.listTasks', () => {
  it('given GET /v1/tasks, when tasks are listed with a status and a search, then the API filters and its page is used as is', async () => {
    // given
    const { api, seen } = await serve({ '/v1/tasks': { json: { items: [task('tsk-1', 'running', '2031-01-01T00:00:00Z')], next_cursor: 'c2' } } });
    // when
    const listed = await api.listTasks({ status: 'running', search: '  deploy web ' });
    // then
    expect(listed).toEqual({ nextCursor: 'c2', items: [expect.objectContaining({ task_id: 'tsk-1' })] });
    expect(seen).toEqual(['/v1/tasks?status=running&q=deploy+web&limit=100']);
  });

  it('given no status and an empty search, when tasks are listed, then neither is sent', async () => {
    const { api, seen } = await serve({ '/v1/tasks': { json: { items: [], next_cursor: null } } });
    await api.listTasks({ status: '', search: '   ' });
    expect(seen).toEqual(['/v1/tasks?limit=100']);
  });

  it("given an agent's 403 or any refusal, when tasks are listed, then the API's code is the error", async () => {
    const { api } = await serve({ '/v1/tasks': { status: 400, json: { code: 'PROJECTION_REQUEST_INVALID', message: 'q: too long' } } });
    await expect(api.listTasks({ search: 'x' })).rejects.toMatchObject({ code: 'PROJECTION_REQUEST_INVALID' });
  });
});

describe('errors and optional routes', () => {
  it('given an RFC 9457 problem+json with a Writ code, when read, then its code and detail are the error', async () => {
    const { api } = await serve({ '/v1/actions/ar-1': { status: 404, type: 'application/problem+json', json: { type: 'about:blank', title: 'Not Found', status: 404, detail: 'no action ar-1', code: 'PROJECTION_NOT_FOUND' } } });
    await expect(api.action('ar-1')).rejects.toMatchObject({ code: 'PROJECTION_NOT_FOUND', message: 'no action ar-1', status: 404 });
  });

  it('given an answer without a Writ code, when read, then CONSOLE_HTTP_REPLY_INVALID', async () => {
    const { api } = await serve({ '/v1/actions/ar-1': { status: 502, json: { error: 'bad gateway' } } });
    await expect(api.action('ar-1')).rejects.toMatchObject({ code: 'CONSOLE_HTTP_REPLY_INVALID' });
  });

  it('given no inclusion-proof route, or a receipt not yet in the log, when asked, then the answer says which', async () => {
    const { api } = await serve({ '/v1/receipts/rct-2/inclusion-proof': { status: 404, json: { code: 'PROJECTION_NOT_FOUND', message: 'not in the log yet' } } });
    expect(await api.inclusionProof('rct-1')).toEqual({ kind: 'not_served' });
    expect(await api.inclusionProof('rct-2')).toEqual({ kind: 'not_yet' });
  });
});
