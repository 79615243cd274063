/**
 * Secret redaction for anything that leaves the process as text (log lines,
 * dead-letter headers, error replies). Invariant 6 says no secret value may
 * appear in logs, so we redact twice over: by the *name* a value travels under
 * (a key called `password` is secret whatever it holds) and by the *shape* of
 * the value (a PEM private key is secret whatever it is called).
 *
 * Over-redaction is the accepted failure mode: a log line that hides too much
 * costs a debugging session, one that hides too little leaks a credential.
 */

export const REDACTED = '[REDACTED]';

/**
 * Keys whose value is secret. Matched on the key lowercased with `_`, `-` and
 * `.` removed, so `api_key`, `apiKey` and `API-KEY` are one rule.
 * `token` only matches at the end of a key: `max_tokens` / `input_tokens`
 * (LLM usage counters, common in an agent kernel) are not secrets.
 */
const SECRET_KEY_CONTAINS = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'privatekey',
  'apikey',
  'accesskey',
  'authorization',
  'cookie',
  'credential',
  'signingkey',
  'sessionid',
] as const;
const SECRET_KEY_ENDS_WITH = ['token', 'pwd', 'seed', 'nkey', 'jwt'] as const;

/**
 * Keys that name *where* a secret lives, never the secret: a knowledge entry
 * marked secret holds `{ "secret_ref": "vault:db/password" }` (the kernel refuses
 * anything else, KNOWLEDGE_SECRET_BY_VALUE). Hiding the name by its key would
 * lose the reference the rule asks for; a string under it still passes the
 * value shapes below, and anything but a string is redacted whole.
 */
const SECRET_REFERENCE_KEYS = new Set(['secretref']);

/** Members of a JWK that hold private or symmetric key material (RFC 7517/7518). */
const JWK_PRIVATE_MEMBERS = new Set(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']);

function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[-_.\s]/g, '');
}

/** True when a value stored under `key` must never be written out. */
export function isSecretKey(key: string): boolean {
  const k = normalizeKey(key);
  if (SECRET_REFERENCE_KEYS.has(k)) return false;
  return SECRET_KEY_CONTAINS.some((part) => k.includes(part)) || SECRET_KEY_ENDS_WITH.some((end) => k.endsWith(end));
}

/**
 * Value shapes that are secret wherever they appear. Each pattern is written so
 * that it also works on a JSON-encoded line (newlines as `\n`, no raw quotes in
 * the match), because the logger applies them to the final line as a last net.
 */
const SECRET_VALUE_PATTERNS: ReadonlyArray<{ readonly pattern: RegExp; readonly replace: string }> = [
  // PEM private keys, NATS seeds and creds blocks, with or without the END line (truncated logs).
  {
    pattern:
      /-----BEGIN ([A-Z0-9 ]*(?:PRIVATE KEY|SEED|NATS USER JWT))-----(?:(?!-----END)[^"])*(?:-----END [A-Z0-9 ]*(?:PRIVATE KEY|SEED|NATS USER JWT)-----)?/g,
    replace: `-----BEGIN $1-----${REDACTED}-----END $1-----`,
  },
  // HTTP credentials in prose: "Authorization: Basic dXNlcjpwYXNz", "Bearer abc.def".
  // ("Basic" alone is too common a word to match without the header name.)
  {
    pattern: /\b(authorization\s*[:=]\s*)(?!\[REDACTED\])(?:[A-Za-z]+\s+)?[^\s"\\]+/gi,
    replace: `$1${REDACTED}`,
  },
  { pattern: /\b(Bearer\s+)(?!\[REDACTED\])[A-Za-z0-9\-._~+/]{8,}=*/gi, replace: `$1${REDACTED}` },
  // Compact JWS/JWT (header and payload are base64url JSON, so both start with "eyJ").
  { pattern: /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, replace: REDACTED },
  // Credentials in URLs: scheme://user:password@host.
  { pattern: /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@"]+:)[^\s@/"]+@/gi, replace: `$1${REDACTED}@` },
  // key=value / key: value in prose for secret-looking keys.
  {
    pattern:
      /\b((?:password|passwd|pwd|passphrase|secret|client[_-]?secret|api[_-]?key|access[_-]?key|token|access[_-]?token|refresh[_-]?token|private[_-]?key)\s*[=:]\s*)(?!\[REDACTED\])[^\s&,;"'\\]+/gi,
    replace: `$1${REDACTED}`,
  },
  // Well-known key formats: OpenAI/Anthropic-style, Stripe, GitHub, Slack, AWS access key ids, NATS nkey seeds.
  { pattern: /\bsk-(?:ant-)?[A-Za-z0-9_-]{20,}/g, replace: REDACTED },
  { pattern: /\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}/g, replace: REDACTED },
  { pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g, replace: REDACTED },
  { pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, replace: REDACTED },
  { pattern: /\bAKIA[0-9A-Z]{16}\b/g, replace: REDACTED },
  { pattern: /\bS[ACNOPUX][A-Z2-7]{56}\b/g, replace: REDACTED },
];

/** Replaces every secret-shaped substring of `text`. */
export function redactString(text: string): string {
  let out = text;
  for (const { pattern, replace } of SECRET_VALUE_PATTERNS) {
    pattern.lastIndex = 0;
    out = out.replace(pattern, replace);
  }
  return out;
}

const MAX_DEPTH = 12;

/**
 * Returns a deep copy of `value` with secrets removed: values under secret keys
 * are replaced by `[REDACTED]`, private members of JWKs (objects with `kty`)
 * too, and every string is passed through `redactString`. Errors become plain
 * objects (type, message, stack, code, cause) so their text is redacted as well.
 * Never throws; cycles become `[Circular]`.
 */
export function redactSecrets<T>(value: T): T {
  return redactValue(value, 0, new WeakSet()) as T;
}

function redactValue(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Truncated]';
  seen.add(value);
  try {
    if (value instanceof Error) return redactError(value, depth, seen);
    if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1, seen));
    if (value instanceof Date) return value;
    if (ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
    if (value instanceof Map) return redactEntries([...value.entries()].map(([k, v]) => [String(k), v]), false, depth, seen);
    if (value instanceof Set) return [...value].map((item) => redactValue(item, depth + 1, seen));
    const record = value as Record<string, unknown>;
    const isJwk = typeof record['kty'] === 'string';
    return redactEntries(Object.entries(record), isJwk, depth, seen);
  } finally {
    seen.delete(value);
  }
}

function redactEntries(
  entries: Array<[string, unknown]>,
  isJwk: boolean,
  depth: number,
  seen: WeakSet<object>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, inner] of entries) {
    if (inner === undefined) continue;
    const reference = SECRET_REFERENCE_KEYS.has(normalizeKey(key));
    out[key] = isSecretKey(key) || (isJwk && JWK_PRIVATE_MEMBERS.has(key)) || (reference && typeof inner !== 'string') ? REDACTED : redactValue(inner, depth + 1, seen);
  }
  return out;
}

function redactError(error: Error, depth: number, seen: WeakSet<object>): Record<string, unknown> {
  const out: Record<string, unknown> = { type: error.name, message: redactString(error.message) };
  if (error.stack !== undefined) out['stack'] = redactString(error.stack);
  for (const [key, inner] of Object.entries(error)) {
    if (key === 'message' || key === 'stack' || inner === undefined) continue;
    out[key] = isSecretKey(key) ? REDACTED : redactValue(inner, depth + 1, seen);
  }
  if (error.cause !== undefined) out['cause'] = redactValue(error.cause, depth + 1, seen);
  return out;
}
