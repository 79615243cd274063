import type { IncomingHttpHeaders, IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { AddressInfo, Server } from 'node:net';

/** One request a test server received, its body whole. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A request listener for the servers network actions reach: it reads the whole body, records
 * the request in `seen` (before answering, so a test that saw the response sees the request),
 * then lets `answer` respond.
 */
export function recordRequests(seen: SeenRequest[], answer: (req: IncomingMessage, res: ServerResponse, body: string) => void): RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      answer(req, res, body);
    });
  };
}

/** Listens on every address (cells reach the host through docker0, not loopback) on a free port, and resolves with the port. */
export async function listenAnywhere(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  return (server.address() as AddressInfo).port;
}

/** Closes a server a `beforeAll` may not have got to start. */
export function closeServer(server: Server | undefined): Promise<void> {
  return new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
}
