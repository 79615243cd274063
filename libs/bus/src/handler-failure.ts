/** What the bus knows about a failed handler: the code the ack policy branches on, and a message for humans. */
export interface HandlerFailure {
  readonly code: string;
  readonly message: string;
}

/** The `{ status: 'error', message }` that Nest's default RPC filter substitutes for any unknown error. */
function isNestDefaultFilterOutput(value: object): boolean {
  return (value as { status?: unknown }).status === 'error' && !('code' in value);
}

/**
 * Normalizes whatever a handler threw (or its stream errored with) into a
 * `HandlerFailure`. Writ errors keep their code; anything without a string code
 * becomes `BUS_HANDLER_FAILED`, which the default table retries with backoff,
 * so an unclassified bug is retried a bounded number of times, then dead-lettered.
 */
export function toHandlerFailure(thrown: unknown): HandlerFailure {
  if (typeof thrown === 'object' && thrown !== null) {
    const { code, message } = thrown as { code?: unknown; message?: unknown };
    const text = typeof message === 'string' ? message : thrown instanceof Error ? thrown.message : safeJson(thrown);
    if (typeof code === 'string' && code !== '' && !isNestDefaultFilterOutput(thrown)) return { code, message: text };
    return { code: 'BUS_HANDLER_FAILED', message: text };
  }
  return { code: 'BUS_HANDLER_FAILED', message: String(thrown) };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
