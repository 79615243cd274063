import type { IncomingMessage, ServerResponse } from 'node:http';

/** The one route that takes its bearer token from the query: a browser's EventSource cannot set headers. */
export const STREAM_ROUTE = '/v1/changes/stream';

/**
 * Express middleware, before the guard: on `GET /v1/changes/stream` only, an
 * `access_token=<token>` query parameter becomes `Authorization: Bearer
 * <token>` (an Authorization header, when sent, wins), so the stream is
 * authorized exactly like every other read. The parameter is taken out of
 * the URL here, so nothing after this (routing, errors, logs) sees it. A URL
 * token can end up in a browser's history or a proxy's access log: mint it
 * short (`writ http token --ttl 2m`, at most 15 min); the stream ends when it
 * expires, and the client reconnects with a fresh one and `since`.
 * (docs/dashboard-contract.md, "Browsers".) Anywhere else the parameter is
 * ignored: a read without its header is refused as usual.
 */
export function accessTokenFromQuery(req: IncomingMessage, _res: ServerResponse, next: () => void): void {
  const raw = req.url ?? '';
  const queryAt = raw.indexOf('?');
  if (req.method === 'GET' && queryAt !== -1 && raw.slice(0, queryAt) === STREAM_ROUTE) {
    const params = new URLSearchParams(raw.slice(queryAt + 1));
    const token = params.get('access_token');
    if (token !== null) {
      params.delete('access_token');
      const rest = params.toString();
      req.url = rest === '' ? STREAM_ROUTE : `${STREAM_ROUTE}?${rest}`;
      if (req.headers.authorization === undefined && token !== '') req.headers.authorization = `Bearer ${token}`;
    }
  }
  next();
}
