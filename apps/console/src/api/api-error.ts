/**
 * Every failure the console shows, with a stable code: the API's own code
 * (`PROJECTION_NOT_FOUND`, `HTTP_AUTH_EXPIRED`, `APPROVAL_NOT_PENDING`...) when
 * the server sent one, else one of the console's `CONSOLE_*` codes. Pages
 * show `code` and `message`; they branch on `code`, never on the text.
 */
export type ConsoleErrorCode =
  /** The server could not be reached, or did not answer in time. */
  | 'CONSOLE_HTTP_FAILED'
  /** The server answered without a Writ error code (a proxy's page, not the Writ API). */
  | 'CONSOLE_HTTP_REPLY_INVALID'
  /** The key file is not a private Ed25519 JWK, or its principal id is not an id. */
  | 'CONSOLE_KEY_INVALID'
  /** The approval's packet does not hash to the packet it records: nothing was signed. */
  | 'CONSOLE_APPROVAL_PACKET_MISMATCH'
  /** The approval service answered another status than the one asked for. */
  | 'CONSOLE_APPROVAL_INVALIDATED'
  | 'CONSOLE_APPROVAL_EXPIRED'
  | 'CONSOLE_APPROVAL_UNEXPECTED'
  /** The approval service answered a grant revocation with neither `revoked` nor `already_revoked`. */
  | 'CONSOLE_REVOCATION_UNEXPECTED';

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** HTTP status, 0 when nothing answered. */
    readonly status = 0,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function consoleError(code: ConsoleErrorCode, message: string): ApiError {
  return new ApiError(code, message);
}

/** The code and message of anything thrown, for display. */
export function describeError(error: unknown): { readonly code: string; readonly message: string } {
  if (error instanceof ApiError) return { code: error.code, message: error.message };
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return { code: typeof code === 'string' ? code : 'CONSOLE_UNEXPECTED', message };
}

export function hasCode(error: unknown, ...codes: string[]): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && codes.includes(code);
}
