/** One Server-Sent Event as a client receives it. */
export interface ServerSentEvent {
  /** `id:` when the event carried one. */
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

/** An open `text/event-stream` response, read event by event. */
export interface EventStream {
  readonly status: number;
  readonly contentType: string | null;
  /** The body when the server answered with something else than a stream (an error's JSON). */
  readonly body: string | undefined;
  /** The next event, or undefined when the stream ended. */
  next(): Promise<ServerSentEvent | undefined>;
  /** Leaves (the server sees the connection close). */
  close(): void;
}

/**
 * A minimal EventSource for tests (Node has none without a flag): GETs `url`
 * with `headers` and parses the `text/event-stream` body as the WHATWG spec
 * says (`id:`, `event:`, multi-line `data:`, comments and `retry:` ignored).
 * No automatic reconnection: tests reconnect themselves, with `Last-Event-ID`.
 */
export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<EventStream> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const contentType = response.headers.get('content-type');
  if (!response.ok || !(contentType ?? '').startsWith('text/event-stream') || response.body === null) {
    const body = await response.text();
    return { status: response.status, contentType, body, next: async () => undefined, close: () => abort.abort() };
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let ended = false;
  return {
    status: response.status,
    contentType,
    body: undefined,
    close: () => abort.abort(),
    async next() {
      for (;;) {
        const boundary = buffer.search(/\r?\n\r?\n/);
        if (boundary !== -1) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary).replace(/^\r?\n\r?\n/, '');
          const event = parse(block);
          if (event !== undefined) return event;
          continue;
        }
        if (ended) return undefined;
        try {
          const { value, done } = await reader.read();
          if (done) ended = true;
          else buffer += value;
        } catch {
          ended = true;
        }
      }
    },
  };
}

function parse(block: string): ServerSentEvent | undefined {
  let id: string | undefined;
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return data.length === 0 && id === undefined ? undefined : { id, event, data: data.join('\n') };
}
