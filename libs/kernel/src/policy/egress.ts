import { z } from 'zod';

/**
 * Network egress patterns of a profile's capability ceiling: `host`,
 * `*.host` (any deeper subdomain, never the bare host), either with `:port`,
 * or `*` (any host, any port). Names compare case-insensitively and whole,
 * never as substrings; a pattern without a port allows only URLs without an
 * explicit port (the scheme's default), as grants do (`hostInScope`).
 */
export const EGRESS_ANY_HOST = '*';

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const HOST_PATTERN = new RegExp(`^(?:\\*|(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*(?::[0-9]{1,5})?)$`);

export const EgressHostPattern = z
  .string()
  .min(1)
  .max(253 + 6)
  .regex(HOST_PATTERN, 'must be "*", "host", "*.host", or either host form with ":port"');
export type EgressHostPattern = z.infer<typeof EgressHostPattern>;

export function isEgressHostPattern(value: string): boolean {
  return HOST_PATTERN.test(value);
}

interface HostParts {
  readonly name: string;
  readonly port: string | null;
}

function parts(value: string): HostParts {
  const lower = value.toLowerCase();
  const colon = lower.lastIndexOf(':');
  return colon < 0 ? { name: lower, port: null } : { name: lower.slice(0, colon), port: lower.slice(colon + 1) };
}

/**
 * The `host` or `host:port` an http(s) URL reaches, lowercase, or undefined
 * when the URL is not http(s) or has no usable host. The WHATWG URL parser
 * (a language standard, not a Node module) is used on purpose: hand-made
 * parsing is where `https://good.com@evil.com/` style confusions live.
 */
export function urlHost(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  const name = parsed.hostname.toLowerCase();
  if (name.length === 0) return undefined;
  return parsed.port === '' ? name : `${name}:${parsed.port}`;
}

/** True when `host` (`name` or `name:port`, as `urlHost` returns it) is allowed by one of `patterns`. */
export function egressAllowed(patterns: readonly string[], host: string): boolean {
  const use = parts(host);
  return patterns.some((pattern) => {
    if (pattern === EGRESS_ANY_HOST) return true;
    const allowed = parts(pattern);
    if (allowed.port !== use.port) return false;
    if (allowed.name.startsWith('*.')) {
      const suffix = allowed.name.slice(1);
      return use.name.length > suffix.length && use.name.endsWith(suffix);
    }
    return allowed.name === use.name;
  });
}

/** True when every host `inner` allows is allowed by `outer` too. */
function coveredBy(inner: string, outer: string): boolean {
  if (outer === EGRESS_ANY_HOST) return true;
  if (inner === EGRESS_ANY_HOST) return false;
  const a = parts(inner);
  const b = parts(outer);
  if (a.port !== b.port) return false;
  if (!b.name.startsWith('*.')) return !a.name.startsWith('*.') && a.name === b.name;
  const suffix = b.name.slice(1);
  if (a.name.startsWith('*.')) return a.name === b.name || a.name.slice(1).endsWith(suffix);
  return a.name.length > suffix.length && a.name.endsWith(suffix);
}

/**
 * The patterns allowing exactly the hosts both lists allow (for these
 * pattern shapes one list's patterns that the other covers, from either side).
 * `narrowing` undefined means no narrowing. The result never allows a host
 * `ceiling` does not.
 */
export function intersectEgress(ceiling: readonly string[], narrowing: readonly string[] | undefined): string[] {
  if (narrowing === undefined) return [...new Set(ceiling.map(normalizePattern))];
  const out: string[] = [];
  for (const pattern of ceiling) if (narrowing.some((other) => coveredBy(pattern, other))) out.push(normalizePattern(pattern));
  for (const pattern of narrowing) if (ceiling.some((other) => coveredBy(pattern, other))) out.push(normalizePattern(pattern));
  return [...new Set(out)];
}

function normalizePattern(pattern: string): string {
  return pattern.toLowerCase();
}
