/**
 * The one error shape that crosses Writ's boundaries: a stable, closed string
 * `code` that callers branch on, an actionable message for humans, optional
 * structured `details`, and the underlying `cause` kept intact.
 *
 * Guards check `code` (see `hasErrorCode`), never `instanceof`: errors cross
 * package copies and process boundaries, where class identity does not survive.
 */
export class WritError<Code extends string = string> extends Error {
  readonly code: Code;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: Code, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WritError';
    this.code = code;
    this.details = options.details;
  }

  /** The `{ code, message, details }` shape used on request/reply and HTTP bodies. */
  toJSON(): { code: Code; message: string; details?: Readonly<Record<string, unknown>> } {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

/** True when `error` carries one of `codes`; works across realms and package copies. */
export function hasErrorCode<Code extends string>(error: unknown, ...codes: Code[]): error is WritError<Code> {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    (codes.length === 0 || codes.includes((error as { code: Code }).code))
  );
}
