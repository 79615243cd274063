import { sha256Hex } from '@writ/crypto';

/**
 * What an explanation says about an action's parameters. Secrets never travel
 * in params (they are named by handle and resolved by the executor), but a
 * confused agent may still put one there, and an explanation is printed to a
 * terminal and pasted into tickets. So the summary shows the values that say
 * what the action does (argv, path, url, method) with anything credential-like
 * masked, and never shows a payload (content, body), a header value or an
 * unknown key's value: those are summarised by size and hash. Masking too
 * much is the accepted failure mode.
 */

export const MASK = '[masked]';

/** Option names whose value is a credential: `--password x`, `--token=x`, `-H` (a header may be Authorization). */
const SECRET_FLAG = /^-{1,2}[\w.-]*(?:pass|secret|token|key|auth|cred|cookie|session|sig)[\w.-]*$/i;
const HEADER_FLAG = /^(?:-H|--header|--proxy-header)$/;
const SECRET_ASSIGNMENT = /^(-{0,2}[\w.-]*(?:pass|secret|token|key|auth|cred|cookie|session|sig)[\w.-]*)=.+$/i;

/** Value shapes that are secret wherever they appear. */
const SECRET_SHAPES: readonly RegExp[] = [
  /-----BEGIN [A-Z0-9 ]*(?:PRIVATE KEY|SEED)-----/,
  /\b(?:Bearer|Basic|Token)\s+\S{6,}/i,
  /\bauthorization\s*[:=]/i,
  /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\./,
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:[^\s@/]+@/i,
  /\bsk-(?:ant-)?[A-Za-z0-9_-]{20,}/,
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|[rsp]k_(?:live|test)_[A-Za-z0-9]{10,})/,
];

/** One argv element or value as it may be shown: masked when it looks like a credential. */
export function maskSecretLike(value: string): string {
  const assignment = SECRET_ASSIGNMENT.exec(value);
  if (assignment !== null) return `${assignment[1]}=${MASK}`;
  return SECRET_SHAPES.some((shape) => shape.test(value)) ? MASK : value;
}

/** argv with credential-like elements, and the value after a credential-bearing option, masked. */
export function maskArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  let maskNext = false;
  for (const arg of argv) {
    if (maskNext) {
      out.push(MASK);
      maskNext = false;
      continue;
    }
    maskNext = SECRET_FLAG.test(arg) || HEADER_FLAG.test(arg);
    out.push(maskSecretLike(arg));
  }
  return out;
}

/** A URL without its user info, query or fragment (they may carry credentials). */
function safeUrl(raw: string): string {
  try {
    const url = new URL(raw);
    const hidden = url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '';
    return `${url.protocol}//${url.host}${url.pathname}${hidden ? ` (${MASK} query, fragment or credentials)` : ''}`;
  } catch {
    return MASK;
  }
}

function quoted(args: readonly string[]): string {
  return args.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : JSON.stringify(arg))).join(' ');
}

function payload(name: string, value: string, encoding: unknown): string {
  const bytes = encoding === 'base64' ? Buffer.from(value, 'base64') : Buffer.from(value, 'utf8');
  return `${name}: ${bytes.byteLength} bytes${encoding === 'base64' ? ' (base64)' : ''}, sha256 ${sha256Hex(bytes)}`;
}

/** One line per parameter, safe to print. */
export function summarizeParams(params: Readonly<Record<string, unknown>>): string[] {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (key === 'encoding') continue;
    if (key === 'argv' && Array.isArray(value) && value.every((arg) => typeof arg === 'string')) lines.push(`argv: ${quoted(maskArgv(value as string[]))}`);
    else if ((key === 'path' || key === 'cwd') && typeof value === 'string') lines.push(`${key}: ${maskSecretLike(value)}`);
    else if (key === 'url' && typeof value === 'string') lines.push(`url: ${safeUrl(value)}`);
    else if ((key === 'method' || key === 'timeout_ms') && (typeof value === 'string' || typeof value === 'number')) lines.push(`${key}: ${String(value)}`);
    else if ((key === 'content' || key === 'body') && typeof value === 'string') lines.push(payload(key, value, params['encoding']));
    else if (key === 'headers' && typeof value === 'object' && value !== null) lines.push(`headers: ${Object.keys(value).sort().join(', ') || 'none'} (values not shown)`);
    else if ((key === 'secret_handle' || key === 'secret_handles') && (typeof value === 'string' || Array.isArray(value))) {
      // Handles are names, not values: the executor resolves them at execution time.
      lines.push(`${key}: ${[value].flat().map(String).join(', ')}`);
    } else lines.push(`${key}: ${typeof value === 'string' ? `${Buffer.byteLength(value)} bytes` : Array.isArray(value) ? `${value.length} item(s)` : typeof value} (value not shown)`);
  }
  return lines;
}
